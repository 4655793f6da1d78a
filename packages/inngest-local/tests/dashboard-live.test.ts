// The dashboard tells the truth, live: its pages load its own small script (which fetches the
// page again each second while the tab is visible and swaps in what changed), a running run
// shows the request the app is working on before the SDK names its step, a run cancelled
// mid-step shows that step with the time it had run and the result the app reported after the
// cancel, a cancel by an event links to that event's page, and a completed run's badge says how
// it ended when its output says so. The browser side: tests/e2e/inngest-dashboard.spec.ts.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/dashboard-live.test.ts
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest } from "inngest";
import { serve } from "inngest/node";
import { startInngestLocal, type InngestLocal, type RunSummary } from "../index";
import { sleep, startSdkApp, waitFor, type SdkApp } from "../sdk-app";

function raw(url: string, init: { method?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? "GET" }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("inngest-local dashboard, live and truthful", () => {
  let app: SdkApp;
  let local: InngestLocal;
  const logs: string[] = [];

  const send = async (name: string, data: Record<string, unknown>) => {
    const res = await fetch(`${local.url}/e/any-key`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, data, ts: Date.now() }) });
    return ((await res.json()) as { ids: string[] }).ids[0]!;
  };
  const runFor = (eventId: string, fn: string) => waitFor(`run of ${fn}`, () => local.runs().find((r) => r.eventId === eventId && r.functionId === `live-app-${fn}`));
  const endedRun = (id: string) => waitFor(`run ${id} to end`, () => local.runs().find((r) => r.id === id && r.status !== "running"));

  beforeAll(async () => {
    app = await startSdkApp();
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.001, syncRetryMs: 50, log: (l) => logs.push(l) });
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    const inngest = new Inngest({ id: "live-app", isDev: true, baseUrl: local.url, logger: quiet });
    const functions = [
      inngest.createFunction(
        { id: "ponders", name: "Ponders", retries: 0, triggers: [{ event: "api/ponder" }], cancelOn: [{ event: "api/stop", if: "async.data.k == event.data.k" }] },
        async ({ step }) => {
          await step.run("ponder", async () => (await sleep(900), "pondered"));
          return "done";
        },
      ),
      inngest.createFunction({ id: "outcome", name: "Returns an outcome", triggers: [{ event: "api/outcome" }] }, async ({ event }) => event.data.out),
    ];
    app.setHandler(serve({ client: inngest, functions }));
    await waitFor("sync", () => logs.some((l) => l.startsWith('synced app "live-app"')));
  });
  afterAll(async () => {
    await local?.close();
    await app?.close();
  });

  it("updates live: each page loads the dashboard's own script, which the CSP allows and nothing else", async () => {
    const res = await raw(`${local.url}/ui/runs`);
    expect(res.text).toContain('<script src="/ui/live.js" defer></script>');
    expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
    const js = await raw(`${local.url}/ui/live.js`);
    expect(js.status).toBe(200);
    expect(js.headers["content-type"]).toMatch(/^text\/javascript/);
    expect(js.text).toContain("visibilityState");
  });

  it("a running run shows the step the app is running before it reports it, with its time so far", async () => {
    const id = await send("api/ponder", { k: "live" });
    const run = await runFor(id, "ponders");
    await sleep(300);
    const summary = local.runs().find((r) => r.id === run.id)!;
    expect(summary.status).toBe("running");
    expect(summary.inFlightSince).toBeTruthy();
    const page = await raw(`${local.url}/ui/runs/${run.id}`);
    expect(page.text).toContain("Running now");
    expect(page.text).toMatch(/\d+ ms so far|[\d.]+ s so far/);
    expect(page.text).not.toContain("No steps yet");
    await endedRun(run.id);
  });

  it("a run cancelled mid-step shows that step, how long it had run, and its result that came after the cancel", async () => {
    const id = await send("api/ponder", { k: "cut" });
    const run = await runFor(id, "ponders");
    await sleep(300);
    expect((await raw(`${local.url}/runs/${run.id}/cancel`, { method: "POST" })).status).toBe(200);
    const cancelled = local.runs().find((r) => r.id === run.id)!;
    expect(cancelled.interrupted).toMatchObject({ since: expect.any(String), cancelledAt: expect.any(String) });
    let page = await raw(`${local.url}/ui/runs/${run.id}`);
    expect(page.text).not.toContain("No steps yet");
    expect(page.text).toContain("Cancelled while running");
    // The app finishes the step anyway; the stand-in refuses its result, and names the step from it.
    await waitFor("the late report", () => local.runs().find((r) => r.id === run.id)?.interrupted?.name);
    const late = local.runs().find((r) => r.id === run.id)!;
    expect(late.interrupted).toMatchObject({ name: "ponder", output: "pondered" });
    expect(late.steps).toEqual([]); // the run's own record is as it ended: nothing memoized after the cancel
    page = await raw(`${local.url}/ui/runs/${run.id}`);
    expect(page.text).toContain("<h3>ponder</h3>");
    expect(page.text).toMatch(/had run (\d+ ms|[\d.]+ s) when the run was cancelled/);
    expect(page.text).toMatch(/reported it (\d+ ms|[\d.]+ s) after the cancel/);
    expect(page.text).toContain("&quot;pondered&quot;");
  });

  it("a run cancelled by an event: its badge names the event and the reason in its payload, which the cancel reason links to", async () => {
    const id = await send("api/ponder", { k: "by-event" });
    const run = await runFor(id, "ponders");
    const stopId = await send("api/stop", { k: "by-event", reason: "signed_out" });
    await endedRun(run.id);
    const page = await raw(`${local.url}/ui/runs/${run.id}`);
    expect(page.text).toContain(`<a href="/ui/events/${stopId}">api/stop</a>`);
    expect(page.text).toContain("Cancelled: api/stop (signed out)");
    expect((await raw(`${local.url}/ui/runs`)).text).toContain("Cancelled: api/stop (signed out)");
    const event = await raw(`${local.url}/ui/events/${stopId}`);
    expect(event.status).toBe(200);
    expect(event.text).toContain("&quot;reason&quot;: &quot;signed_out&quot;");
    expect(event.text).toContain(`href="/ui/runs/${run.id}"`); // the run it cancelled
    expect((await raw(`${local.url}/ui/events/01NOPE`)).status).toBe(404);
  });

  it("a completed run's badge says how it ended when its output says (outcome, reason), and not green when it did not do its work", async () => {
    const runs: Record<string, RunSummary> = {};
    for (const [k, out] of Object.entries({
      proposed: { leaseId: "L1", outcome: "proposed" },
      late: { leaseId: "L2", outcome: "stopped", reason: "late_completion", status: "expired" },
      sealed: { __ENCRYPTED__: true, __STRATEGY__: "inngest/libsodium", data: "c2VhbGVk" },
    })) {
      runs[k] = await endedRun((await runFor(await send("api/outcome", { out }), "outcome")).id);
    }
    const badgeOf = async (id: string) => /<dt>Status<\/dt><dd>(<span class="badge [^"]+">[^<]*<\/span>)/.exec((await raw(`${local.url}/ui/runs/${id}`)).text)?.[1];
    expect(await badgeOf(runs.proposed!.id)).toBe('<span class="badge s-completed">Completed: proposed</span>');
    expect(await badgeOf(runs.late!.id)).toBe('<span class="badge s-stopped">Completed: stopped (late completion)</span>');
    expect(await badgeOf(runs.sealed!.id)).toBe('<span class="badge s-sealed">Completed (output encrypted)</span>');
  });

});
