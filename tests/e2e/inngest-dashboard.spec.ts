// The local Inngest server's dashboard (packages/inngest-local/dashboard.ts) in a real browser,
// at 1280 and 375 px, against a stand-in this spec starts in self-hosted (signed) mode with a
// tiny app served by the pinned SDK: the pages render, a run's timeline shows, Resync, Send
// event, Rerun and Cancel work, a page on another origin cannot press Cancel, a run's page
// updates live (no reload) and shows the step a cancel interrupted, and axe finds nothing
// serious on any page; before its login URL it shows nothing. Screenshots: docs/screenshots/inngest-*.png
// (E2E_SCREENSHOT_DIR=docs/screenshots refreshes them).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { Inngest, NonRetriableError } from "inngest";
import { serve } from "inngest/node";
import type { Page } from "@playwright/test";
import { startInngestLocal, startSdkApp, type InngestLocal, type SdkApp } from "@claimcheck/inngest-local";
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";

const signingKey = `signkey-test-${randomBytes(32).toString("hex")}`;
const eventKey = randomBytes(16).toString("hex");

let app: SdkApp;
let local: InngestLocal;
let evil: http.Server;
let evilUrl = "";
/** The run the cross-site page tries to cancel; set per test. */
let targetRun = "";

test.beforeAll(async () => {
  app = await startSdkApp();
  const logs: string[] = [];
  local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.01, syncRetryMs: 100, signingKey, eventKeys: [eventKey], log: (l) => logs.push(l) });
  const quiet = { info() {}, warn() {}, error() {}, debug() {} };
  const inngest = new Inngest({ id: "demo-app", isDev: false, baseUrl: local.url, signingKey, eventKey, logger: quiet });
  const flaked = new Set<string>();
  app.setHandler(
    serve({
      client: inngest,
      functions: [
        inngest.createFunction({ id: "summarize", name: "Summarize invoice", triggers: [{ event: "demo/invoice.summarize", if: "event.data.ok == true" }] }, async ({ event, step }) => {
          const text = await step.run("read-invoice", () => ({ counterparty: String(event.data.counterparty ?? "Acme"), amount: 1200 }));
          await step.sleep("cool-down", "1s");
          const summary = await step.run("write-summary", () => {
            if (!flaked.has(String(event.id))) {
              flaked.add(String(event.id));
              throw new Error("model timed out");
            }
            return `${text.counterparty} owes ${text.amount}`;
          });
          return { summary };
        }),
        inngest.createFunction({ id: "await-review", name: "Await review", triggers: [{ event: "demo/review.requested" }] }, async ({ step }) => {
          await step.waitForEvent("review", { event: "demo/review.done", timeout: "1h" });
          return "reviewed";
        }),
        inngest.createFunction({ id: "reject", name: "Reject invoice", retries: 0, triggers: [{ event: "demo/invoice.reject" }] }, async ({ step }) =>
          step.run("refuse", () => {
            throw new NonRetriableError("counterparty unknown");
          }),
        ),
        inngest.createFunction(
          { id: "ponder", name: "Ponder invoice", retries: 0, triggers: [{ event: "demo/invoice.ponder" }], cancelOn: [{ event: "demo/invoice.closed", if: "async.data.invoice == event.data.invoice" }] },
          async ({ step }) => {
            await step.run("read-notes", () => "3 notes");
            return step.run("think", async () => (await new Promise((r) => setTimeout(r, 2500)), "thought it over"));
          },
        ),
        inngest.createFunction({ id: "nightly", name: "Nightly sweep", triggers: [{ cron: "0 3 * * *" }] }, async ({ step }) => step.run("sweep", () => "swept 0 leases")),
      ],
    }),
  );
  await expect.poll(() => logs.some((l) => l.startsWith('synced app "demo-app"')), { timeout: 10_000 }).toBe(true);
  // Some history: a failed run and several cron runs (which the runs page hides by default).
  await sendEvent({ name: "demo/invoice.reject", data: { invoice: 7 } });
  for (let i = 0; i < 3; i++) await fetch(`${local.url}/fn/nightly/invoke`, { method: "POST", headers: { authorization: `Bearer ${signingKey}` } });

  // A page on another origin (another port of the same host: same-site, cross-origin) with
  // a button that posts to the dashboard's Cancel.
  evil = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><html lang="en"><title>Prize</title><main><form method="post" action="${local.url}/ui/runs/${targetRun}/cancel"><button>Claim your prize</button></form></main></html>`);
  });
  await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
});

test.afterAll(async () => {
  await local?.close();
  await app?.close();
  await new Promise<void>((resolve) => (evil ? evil.close(() => resolve()) : resolve()));
});

async function sendEvent(event: { name: string; data: Record<string, unknown> }): Promise<string> {
  const res = await fetch(`${local.url}/e/${eventKey}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(event) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { ids: string[] }).ids[0]!;
}
const runOf = (eventId: string) => local.runs().find((r) => r.eventId === eventId);
async function waitForRun(eventId: string): Promise<string> {
  await expect.poll(() => runOf(eventId)?.id, { timeout: 10_000 }).toBeTruthy();
  return runOf(eventId)!.id;
}
/** expectAccessible (serious and critical fail, all logged), then none at all, minor ones included. */
async function accessible(page: Page, label: string) {
  await expectAccessible(page, label);
  const ids = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (d: Document) => Promise<{ violations: { id: string }[] }> } }).axe;
    return (await axe.run(document)).violations.map((v) => v.id);
  });
  expect(ids, `axe violations on ${label}`).toEqual([]);
}

/** A running run's page reloaded by hand until it shows the status (as without the live script). */
async function reloadUntil(page: Page, status: string) {
  await expect(async () => {
    await page.reload();
    await expect(page.getByRole("definition").filter({ hasText: new RegExp(`^${status}$`) })).toBeVisible({ timeout: 500 });
  }).toPass({ timeout: 15_000 });
}

test("self-hosted, the dashboard asks for its login URL and shows nothing before it", async ({ page, allowConsoleErrors }) => {
  allowConsoleErrors(/401/);
  const res = await page.goto(`${local.url}/ui/events`);
  expect(res?.status()).toBe(401);
  await expect(page.getByRole("heading", { level: 1, name: "Credential needed" })).toBeVisible();
  await expect(page.getByText(/login URL this server printed at start/)).toBeVisible();
  await expect(page.getByText("demo/invoice.reject")).toHaveCount(0);
  await page.goto(local.loginUrl!);
  await page.goto(`${local.url}/ui/events`);
  await expect(page.getByText("demo/invoice.reject").first()).toBeVisible();
});

for (const width of [1280, 375]) {
  const suffix = width === 1280 ? "" : "-375px";
  test.describe(`Inngest dashboard at ${width} px`, () => {
    test.use({ viewport: { width, height: width === 1280 ? 900 : 800 } });
    // Self-hosted: the dashboard needs its login URL (printed at start) once per browser context.
    test.beforeEach(async ({ page }) => {
      await page.goto(local.loginUrl!);
      await expect(page.getByRole("heading", { level: 1, name: "Functions & apps" })).toBeVisible();
    });

    test("functions and apps: triggers, the cron's next run, Resync", async ({ page }) => {
      await page.goto(local.url);
      await expect(page.getByRole("heading", { level: 1, name: "Functions & apps" })).toBeVisible();
      await expect(page.getByText("self-hosted (signed)")).toBeVisible();
      const fnRow = page.getByRole("row").filter({ hasText: "Summarize invoice" });
      await expect(fnRow).toContainText("demo/invoice.summarize");
      await expect(fnRow).toContainText("event.data.ok == true");
      await expect(page.getByRole("row").filter({ hasText: "Nightly sweep" })).toContainText(/0 3 \* \* \*\s*next run\s*\d{4}-\d\d-\d\d 03:00:00\.000 UTC/);
      const appRow = page.getByRole("region", { name: "Apps" }).getByRole("row").filter({ hasText: "demo-app" });
      await expect(appRow).toContainText(app.url);
      await expect(appRow.locator("time")).toHaveAttribute("datetime", /Z$/);
      await accessible(page, `inngest home ${width}`);
      await saveScreenshot(page, `inngest-home${suffix}`);

      const before = await appRow.locator("time").getAttribute("datetime");
      await page.getByRole("button", { name: "Resync apps" }).click();
      await expect(page.getByRole("status")).toHaveText("Apps resynced.");
      await expect.poll(async () => appRow.locator("time").getAttribute("datetime")).not.toBe(before);
    });

    test("send a test event, follow its run's timeline, rerun it", async ({ page }) => {
      await page.goto(local.url);
      const counterparty = `Globex <b>${width}</b>`;
      await page.getByLabel("Event name").fill("demo/invoice.summarize");
      await page.getByLabel("Data (JSON object)").fill(JSON.stringify({ ok: true, counterparty }));
      await page.getByLabel("Event key").fill(eventKey);
      await page.getByRole("button", { name: "Send event" }).click();
      await expect(page).toHaveURL(/\/ui\/events\?done=sent$/);
      await expect(page.getByRole("status").first()).toHaveText("Event sent.");
      const row = page.getByRole("row").filter({ hasText: counterparty }).first();
      await row.getByText("Payload").click();
      // Payload text shows as text: the <b> is not markup.
      await expect(row.locator("pre")).toContainText(`"counterparty": "Globex <b>${width}</b>"`);
      await accessible(page, `inngest events ${width}`);
      await saveScreenshot(page, `inngest-events${suffix}`);

      await row.getByRole("link").first().click();
      await expect(page.getByRole("heading", { level: 1, name: "Run of Summarize invoice" })).toBeVisible();
      await reloadUntil(page, "Completed");
      const steps = page.getByRole("list", { name: "Steps" }).getByRole("listitem");
      await expect(steps).toHaveCount(3);
      await expect(steps.nth(0)).toContainText("read-invoice");
      await expect(steps.nth(1)).toContainText("cool-down");
      await expect(steps.nth(1)).toContainText("step.sleep");
      const write = steps.nth(2);
      await expect(write).toContainText("write-summary");
      await expect(write.getByRole("definition").nth(2)).toHaveText("2"); // attempts: it failed once
      await expect(write.locator("pre").last()).toHaveText(`"Globex <b>${width}</b> owes 1200"`);
      await write.getByText("Error of the attempt before the last").click();
      await expect(write.locator("pre").first()).toContainText("model timed out");
      await expect(page.getByRole("heading", { name: "Output" })).toBeVisible();
      await accessible(page, `inngest run ${width}`);
      await saveScreenshot(page, `inngest-run${suffix}`);

      const firstUrl = page.url();
      await page.getByRole("button", { name: "Rerun" }).click();
      await expect(page.getByRole("status")).toHaveText("Rerun started.");
      expect(page.url().split("?")[0]).not.toBe(firstUrl.split("?")[0]);
      await reloadUntil(page, "Completed");
    });

    test("runs: cron runs hidden until asked for, filters by status and function", async ({ page }) => {
      await page.goto(`${local.url}/ui/runs`);
      await expect(page.getByRole("heading", { level: 1, name: "Runs" })).toBeVisible();
      await expect(page.getByText(/3 scheduled \(cron\) runs are hidden/)).toBeVisible();
      await expect(page.getByRole("cell", { name: "Nightly sweep" })).toHaveCount(0);
      await accessible(page, `inngest runs ${width}`);
      await saveScreenshot(page, `inngest-runs${suffix}`);

      await page.getByLabel("Show scheduled (cron) runs").check();
      await page.getByRole("button", { name: "Apply filters" }).click();
      await expect(page.getByRole("cell", { name: "Nightly sweep" })).toHaveCount(3);

      await page.getByLabel("Status").selectOption("failed");
      await page.getByRole("button", { name: "Apply filters" }).click();
      await expect(page.getByRole("cell", { name: "Reject invoice" }).first()).toBeVisible();
      await expect(page.getByRole("cell", { name: "Summarize invoice" })).toHaveCount(0);
      await page.getByRole("row").filter({ hasText: "Reject invoice" }).first().getByRole("link").click();
      await expect(page.getByRole("heading", { name: "Error" })).toBeVisible();
      await expect(page.getByRole("list", { name: "Steps" })).toContainText("counterparty unknown");
      await accessible(page, `inngest failed run ${width}`);

      await page.goto(`${local.url}/ui/runs?function=demo-app-nightly&cron=1`);
      await expect(page.getByLabel("Function")).toHaveValue("demo-app-nightly");
      await expect(page.getByRole("cell", { name: "Reject invoice" })).toHaveCount(0);
      await expect(page.getByRole("cell", { name: "Nightly sweep" })).toHaveCount(3);
    });

    test("a run's page updates as it runs, without a reload; a cancel mid-step shows that step and links to the closing event", async ({ page }) => {
      const runId = await waitForRun(await sendEvent({ name: "demo/invoice.ponder", data: { invoice: width } }));
      await page.goto(`${local.url}/ui/runs/${runId}`);
      await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
      const steps = page.getByRole("list", { name: "Steps" });
      await expect(steps.getByRole("listitem").filter({ hasText: "Running now" })).toContainText(/so far/);
      await expect(steps.getByRole("heading", { name: "read-notes" })).toBeVisible();

      await sendEvent({ name: "demo/invoice.closed", data: { invoice: width, reason: "cancelled" } });
      await expect(page.getByRole("definition").filter({ hasText: /^Cancelled: demo\/invoice\.closed \(cancelled\)$/ })).toBeVisible();
      await expect(page.getByRole("button", { name: "Cancel run" })).toHaveCount(0);
      const cut = steps.getByRole("listitem").filter({ hasText: "Cancelled while running" });
      await expect(cut).toContainText(/had run [\d.]+ (ms|s) when the run was cancelled/);
      // Named once the app reports it, which it does when the step is done (the server refuses it).
      await expect(cut.getByRole("heading", { name: "think" })).toBeVisible({ timeout: 10_000 });
      await expect(cut).toContainText("Output (discarded)");
      await expect(cut.locator("pre")).toHaveText(`"thought it over"`);
      expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
      await accessible(page, `inngest interrupted run ${width}`);
      await saveScreenshot(page, `inngest-run-interrupted${suffix}`);

      await page.getByRole("link", { name: "demo/invoice.closed" }).click();
      await expect(page.getByRole("heading", { level: 1, name: "Event demo/invoice.closed" })).toBeVisible();
      await expect(page.locator("pre")).toContainText(`"reason": "cancelled"`);
      await expect(page.getByRole("region", { name: "Runs it cancelled" }).getByRole("link", { name: runId })).toBeVisible();
      await accessible(page, `inngest event ${width}`);
    });

    test("Cancel works from the dashboard and not from another origin; the run shows why it stopped", async ({ page, allowConsoleErrors }) => {
      allowConsoleErrors(/403/);
      targetRun = await waitForRun(await sendEvent({ name: "demo/review.requested", data: { invoice: width } }));
      await page.goto(`${local.url}/ui/runs/${targetRun}`);
      await expect(async () => {
        await page.reload();
        await expect(page.getByRole("list", { name: "Steps" })).toContainText("Waiting", { timeout: 500 });
      }).toPass({ timeout: 10_000 });

      await page.goto(evilUrl);
      await page.getByRole("button", { name: "Claim your prize" }).click();
      await expect(page.getByText("This button works from the dashboard's own page only.")).toBeVisible();
      expect(local.runs().find((r) => r.id === targetRun)!.status).toBe("running");

      await page.goto(`${local.url}/ui/runs/${targetRun}`);
      await page.getByRole("button", { name: "Cancel run" }).click();
      await expect(page.getByRole("status")).toHaveText("Run cancelled.");
      await expect(page.getByText("Cancel reason: dashboard (Cancel button)")).toBeVisible();
      await expect(page.getByRole("button", { name: "Cancel run" })).toHaveCount(0);
      expect(local.runs().find((r) => r.id === targetRun)!.status).toBe("cancelled");
      await accessible(page, `inngest cancelled run ${width}`);
      await saveScreenshot(page, `inngest-run-cancelled${suffix}`);
    });
  });
}
