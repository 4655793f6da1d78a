// Walkthrough observation 1: `npm run dev` printed http://127.0.0.1:3000, and at that address Next refused
// its dev resources (the HMR websocket) to the page, so the page's JavaScript never started.
// Every other scenario runs a production build; this one runs `npm run dev` itself and works
// at exactly the address its banner prints, then at localhost.
import type { Page, WebSocket } from "@playwright/test";
import postgres from "postgres";
import { expect, test } from "./support/fixtures";
import { startDevServer, type DevServer } from "./support/dev-server";
import { InvoicePage } from "./support/pages";
import { ALICE, DEMO_PASSWORD } from "./support/settings";

// Dev mode compiles each route on its first request, on a machine that may be busy.
test.setTimeout(10 * 60_000);

/** Next's client sets window.next once it has started; the HMR socket then hears from the server. */
async function expectJavaScriptRunning(page: Page, sockets: WebSocket[]) {
  await page.waitForFunction(() => Boolean((window as unknown as { next?: { version?: string } }).next?.version), null, { timeout: 120_000 });
  await expect
    .poll(() => sockets.filter((s) => /\/_next\/(webpack-)?hmr/.test(s.url()) && !s.isClosed()).length, { timeout: 60_000 })
    .toBeGreaterThan(0);
}

test("npm run dev: at the printed address (and at localhost) the page's JavaScript runs; sign in, summarize, apply", async ({
  page,
  newContext,
}) => {
  let dev: DevServer | undefined;
  let other: import("@playwright/test").BrowserContext | undefined;
  try {
    dev = await startDevServer({ bannerTimeoutMs: 5 * 60_000 });
    expect(dev.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const sockets: WebSocket[] = [];
    const framesIn = new Map<WebSocket, number>();
    page.on("websocket", (ws) => {
      sockets.push(ws);
      ws.on("framereceived", () => framesIn.set(ws, (framesIn.get(ws) ?? 0) + 1));
    });

    await page.goto(dev.url, { timeout: 180_000 });
    await expect(page).toHaveURL(/\/sign-in$/);
    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
    await expectJavaScriptRunning(page, sockets);
    // Development shows the demo logins in plain words, never a variable's name.
    await expect(page.getByText("Demo logins")).toBeVisible();
    await expect(page.getByText(DEMO_PASSWORD, { exact: true })).toBeVisible();
    await expect(page.locator("body")).not.toContainText("SEED_PASSWORD");

    await page.getByLabel("Email").fill(ALICE);
    await page.getByLabel("Password").fill(DEMO_PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page).toHaveURL(`${dev.url}/invoices`, { timeout: 180_000 });

    await page.getByRole("link", { name: /INV-2026-0142/ }).click();
    const inv = new InvoicePage(page);
    await expect(inv.panel).toBeVisible({ timeout: 180_000 });
    await expectJavaScriptRunning(page, sockets);
    await inv.expectDisplay("none");
    await inv.summarize.click();
    await inv.expectDisplay("proposed", 180_000);
    await inv.apply.click();
    await inv.expectDisplay("applied", 60_000);
    await expect(inv.invoiceSummary).not.toHaveText("No summary yet.");

    const sql = postgres(dev.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<{ summary: string | null }[]>`select summary from invoice where number = 'INV-2026-0142'`;
      expect(row?.summary).toBeTruthy();
      // (The page shows its dates in the reader's format; the words around them are the same.)
      await expect(inv.invoiceSummary).toContainText(row!.summary!.split(",")[0]!);
    } finally {
      await sql.end({ timeout: 5 });
    }
    expect([...framesIn.values()].reduce((a, b) => a + b, 0), "the HMR socket hears from the dev server").toBeGreaterThan(0);

    // localhost, the address Next itself names, works as well.
    const localhost = dev.url.replace("127.0.0.1", "localhost");
    other = await newContext();
    const second = await other.newPage();
    const secondSockets: WebSocket[] = [];
    second.on("websocket", (ws) => secondSockets.push(ws));
    await second.goto(`${localhost}/sign-in`, { timeout: 180_000 });
    await expectJavaScriptRunning(second, secondSockets);
    await second.getByLabel("Email").fill(ALICE);
    await second.getByLabel("Password").fill(DEMO_PASSWORD);
    await second.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(second).toHaveURL(`${localhost}/invoices`, { timeout: 180_000 });

    expect(dev.output(), "the dev server blocked none of its resources").not.toContain("Blocked cross-origin request");
  } finally {
    // Pages first: a page left open would log its HMR socket's reconnect attempts as errors.
    await page.close();
    await other?.close();
    await dev?.stop();
  }
});
