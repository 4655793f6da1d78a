// The Dev Server API of packages/inngest-local (GET /dev, POST /v0/gql) and its dashboard,
// against a real app served by the pinned SDK, as the SDK's own dev-server test helpers
// use them: the queries below are the ones those helpers send (Events, GetEventStream,
// GetRunTimeline, GetRunTimelineOutput), plus eventV2 and the runs connection.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/dev-server-api.test.ts
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest, NonRetriableError } from "inngest";
import { serve } from "inngest/node";
import { startInngestLocal, type InngestLocal, type RunSummary } from "../index";
import { sleep, startSdkApp, waitFor, type SdkApp } from "../sdk-app";


/** A raw request, so tests can set Host and Origin as a browser elsewhere would. */
function raw(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? "GET", headers: init.headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

const XSS_NAME = `api/<img src=x onerror=alert(1)>`;
const XSS_DATA = { note: `</pre><script>alert("x")</script>`, "<b>key</b>": "'\"&" };

describe("inngest-local Dev Server API and dashboard", () => {
  let app: SdkApp;
  let local: InngestLocal;
  let inngest: Inngest;
  const logs: string[] = [];
  /** Events whose "second" step has thrown once already: it fails once per event. */
  const flaked = new Set<string>();

  const gql = async (query: string, variables: Record<string, unknown> = {}, operationName?: string) => {
    const res = await fetch(`${local.url}/v0/gql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables, operationName }) });
    return { status: res.status, body: (await res.json()) as { data?: Record<string, any>; errors?: { message: string }[] } };
  };
  const send = async (name: string, data: Record<string, unknown>) => {
    const res = await fetch(`${local.url}/e/any-key`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, data, ts: Date.now() }) });
    return ((await res.json()) as { ids: string[] }).ids[0]!;
  };
  const runFor = (eventId: string, fn: string) => waitFor(`run of ${fn}`, () => local.runs().find((r) => r.eventId === eventId && r.functionId === `api-app-${fn}`));
  const endedRun = (id: string) => waitFor(`run ${id} to end`, () => local.runs().find((r) => r.id === id && r.status !== "running"));
  const form = (path: string, body: Record<string, string>, origin: string | null = local.url) =>
    raw(`${local.url}${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...(origin ? { origin } : {}) }, body: new URLSearchParams(body).toString() });

  beforeAll(async () => {
    app = await startSdkApp();
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.001, syncRetryMs: 50, log: (l) => logs.push(l) });
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    inngest = new Inngest({ id: "api-app", isDev: true, baseUrl: local.url, logger: quiet });
    const functions = [
      inngest.createFunction({ id: "steps", name: "Steps demo", triggers: [{ event: "api/go", if: "event.data.ok == true" }] }, async ({ event, step }) => {
        const first = await step.run("first", () => ({ n: 1 }));
        await step.sleep("nap", "50ms");
        const second = await step.run("second", () => {
          if (!flaked.has(String(event.id))) {
            flaked.add(String(event.id));
            throw new Error("flaky once");
          }
          return first.n + 1;
        });
        return { total: second };
      }),
      inngest.createFunction({ id: "fails", name: "Always fails", retries: 0, triggers: [{ event: "api/fail" }] }, async ({ step }) => {
        await step.run("boom", () => {
          throw new NonRetriableError("no way", { cause: new Error("underneath") });
        });
      }),
      inngest.createFunction({ id: "waits", name: "Waits long", triggers: [{ event: "api/wait" }, { event: XSS_NAME }] }, async ({ step }) => {
        await step.waitForEvent("never", { event: "api/never", timeout: "1h" });
        return "woke";
      }),
      inngest.createFunction({ id: "slow", name: "Slow steps", triggers: [{ event: "api/slow" }] }, async ({ step }) => {
        await step.run("quick", () => 1);
        await step.run("think", async () => (await sleep(300), 2));
        return "done";
      }),
      inngest.createFunction({ id: "nightly", name: "Nightly sweep", triggers: [{ cron: "0 3 * * *" }] }, async ({ step }) => step.run("sweep", () => "swept")),
    ];
    app.setHandler(serve({ client: inngest, functions }));
    await waitFor("sync", () => logs.some((l) => l.startsWith('synced app "api-app"')));
  });
  afterAll(async () => {
    await local?.close();
    await app?.close();
  });

  it("GET /dev lists the functions as synced, with triggers and step URLs, in the dev server's shape", async () => {
    const res = await fetch(`${local.url}/dev`);
    expect(res.status).toBe(200);
    const info = (await res.json()) as { functions: { id: string; name: string; slug: string; triggers: unknown[]; steps: { id: string; name: string; uri: string }[] }[]; handlers: { url: string }[]; version: string };
    expect(typeof info.version).toBe("string");
    const steps = info.functions.find((f) => f.name === "Steps demo")!;
    expect(steps).toMatchObject({ slug: "api-app-steps", triggers: [{ event: "api/go", expression: "event.data.ok == true" }] });
    expect(typeof steps.id).toBe("string");
    // What the SDK's own introspection test checks: exactly {id, name, uri}, uri = serve URL ?fnId=…&stepId=step.
    expect(steps.steps).toEqual([{ id: "step", name: "step", uri: `${app.url}?fnId=api-app-steps&stepId=step` }]);
    expect(info.functions.find((f) => f.name === "Nightly sweep")!.triggers).toEqual([{ cron: "0 3 * * *" }]);
    expect(info.handlers.map((h) => h.url)).toEqual([app.url]);
  });

  it("answers the Events query with the events sent (name, JSON payload)", async () => {
    const id = await send("api/hello", { greeting: "hi" });
    const { status, body } = await gql(`query Events($query: EventsQuery!) { events(query: $query) { id name payload createdAt } }`, { query: {} }, "Events");
    expect(status).toBe(200);
    const ev = body.data!.events.find((e: { id: string }) => e.id === id);
    expect(ev).toMatchObject({ name: "api/hello" });
    expect(JSON.parse(ev.payload)).toEqual({ greeting: "hi" });
  });

  it("GetEventStream: an event's stream item carries its runs by function name; cron runs are CRON items", async () => {
    const id = await send("api/go", { ok: true });
    await runFor(id, "steps");
    const query = `query GetEventStream { stream(query: {limit: 999, includeInternalEvents: false}) { id trigger type runs { id function { name } } } }`;
    const { body } = await gql(query, {}, "GetEventStream");
    const item = body.data!.stream.find((i: { id: string }) => i.id === id);
    expect(item).toMatchObject({ trigger: "api/go", type: "EVENT", runs: [{ function: { name: "Steps demo" } }] });
    expect(body.data!.stream.some((i: { trigger: string }) => i.trigger.startsWith("inngest/"))).toBe(false);
    // An event whose `if` is false starts nothing.
    const skipped = await send("api/go", { ok: false });
    const again = await gql(query, {}, "GetEventStream");
    expect(again.body.data!.stream.find((i: { id: string }) => i.id === skipped).runs).toEqual([]);

    const invoked = (await (await fetch(`${local.url}/fn/nightly/invoke`, { method: "POST" })).json()) as { runId: string };
    await endedRun(invoked.runId);
    const withCron = await gql(query, {}, "GetEventStream");
    expect(withCron.body.data!.stream.find((i: { type: string }) => i.type === "CRON")).toMatchObject({ trigger: "0 3 * * *", runs: [{ id: invoked.runId, function: { name: "Nightly sweep" } }] });
  });

  it("GetRunTimeline: run(runID){ status output trace { … childrenSpans } } and each span's output by ID", async () => {
    const id = await send("api/go", { ok: true });
    const run = await endedRun((await runFor(id, "steps")).id);
    expect(run.status).toBe("completed");
    const timeline = `query GetRunTimeline($runId: String!) { run(runID: $runId) { status output trace(preview: true) {
      name stepType attempts outputID status childrenSpans { name stepType stepOp attempts outputID status duration startedAt } } } }`;
    const { body } = await gql(timeline, { runId: run.id }, "GetRunTimeline");
    const r = body.data!.run;
    expect(r.status).toBe("COMPLETED");
    expect(JSON.parse(r.output)).toEqual({ total: 2 });
    expect(r.trace).toMatchObject({ name: "Steps demo", status: "COMPLETED" });
    const spans = r.trace.childrenSpans as { name: string; stepType: string; stepOp: string; attempts: number; outputID: string | null; status: string; duration: number }[];
    expect(spans.map((s) => [s.name, s.stepOp, s.status])).toEqual([
      ["first", "RUN", "COMPLETED"],
      ["nap", "SLEEP", "COMPLETED"],
      ["second", "RUN", "COMPLETED"],
      ["Finalization", null, "COMPLETED"],
    ]);
    // As the SDK's helpers read a run's result: the FINALIZATION span's output.
    const fin = spans.find((s) => s.stepType === "FINALIZATION")!;
    expect(JSON.parse((await gql(`query ($o: String!) { runTraceSpanOutputByID(outputID: $o) { data } }`, { o: fin.outputID })).body.data!.runTraceSpanOutputByID.data)).toEqual({ total: 2 });
    const second = spans.find((s) => s.name === "second")!;
    // Its second attempt succeeded: the dev server counts span attempts from 0.
    expect(second).toMatchObject({ stepType: "RUN", attempts: 1 });
    expect(spans.find((s) => s.name === "nap")!.duration).toBeGreaterThanOrEqual(40);

    const outputQuery = `query GetRunTimelineOutput($outputId: String!) { runTraceSpanOutputByID(outputID: $outputId) { data error { name message stack cause } } }`;
    const out = await gql(outputQuery, { outputId: second.outputID }, "GetRunTimelineOutput");
    expect(JSON.parse(out.body.data!.runTraceSpanOutputByID.data)).toBe(2);
    const rootOut = await gql(outputQuery, { outputId: r.trace.outputID });
    expect(JSON.parse(rootOut.body.data!.runTraceSpanOutputByID.data)).toEqual({ total: 2 });
  });

  it("a step's span starts when it began running, not when its checkpoint arrived: its duration is the step's", async () => {
    const id = await send("api/slow", {});
    const run = await endedRun((await runFor(id, "slow")).id);
    const { body } = await gql(`query ($id: String!) { run(runID: $id) { trace { childrenSpans { name duration startedAt endedAt } } } }`, { id: run.id });
    const [quick, think] = body.data!.run.trace.childrenSpans as { name: string; duration: number; startedAt: string; endedAt: string }[];
    expect(think!.name).toBe("think");
    expect(think!.duration).toBeGreaterThanOrEqual(290);
    expect(Date.parse(think!.startedAt)).toBeGreaterThanOrEqual(Date.parse(quick!.endedAt));
  });

  it("a failed step's span is FAILED and its output is the error", async () => {
    const id = await send("api/fail", {});
    const run = await endedRun((await runFor(id, "fails")).id);
    expect(run.status).toBe("failed");
    const { body } = await gql(`query ($id: String!) { run(runID: $id) { status trace { status childrenSpans { name status outputID } } } }`, { id: run.id });
    expect(body.data!.run.status).toBe("FAILED");
    const boom = body.data!.run.trace.childrenSpans.find((s: { name: string }) => s.name === "boom");
    expect(boom.status).toBe("FAILED");
    const out = await gql(`query ($o: String!) { runTraceSpanOutputByID(outputID: $o) { data error { name message cause } } }`, { o: boom.outputID });
    // The cause is the serialized error as an object (the dev server's Unknown scalar), not its JSON text.
    expect(out.body.data!.runTraceSpanOutputByID).toMatchObject({ data: null, error: { name: "NonRetriableError", message: "no way", cause: { name: "Error", message: "underneath" } } });
  });

  it("eventV2(id) answers the event with its raw JSON and its runs", async () => {
    const id = await send("api/go", { ok: true, tag: "v2" });
    const run = await endedRun((await runFor(id, "steps")).id);
    const { body } = await gql(`query ($id: ULID!) { eventV2(id: $id) { id name raw receivedAt occurredAt runs { id status function { slug } } } }`, { id });
    const ev = body.data!.eventV2;
    expect(ev).toMatchObject({ id, name: "api/go", runs: [{ id: run.id, status: "COMPLETED", function: { slug: "api-app-steps" } }] });
    expect(JSON.parse(ev.raw)).toMatchObject({ name: "api/go", data: { ok: true, tag: "v2" } });
    const missing = await gql(`query { eventV2(id: "01NOPE") { id } }`);
    expect(missing.body.errors?.[0]?.message).toMatch(/not found/);
  });

  it("runs(filter) filters by status and function and pages with after/endCursor", async () => {
    const q = `query ($first: Int!, $after: String, $filter: RunsFilterV2) { runs(first: $first, after: $after, filter: $filter) { totalCount pageInfo { hasNextPage endCursor } edges { node { id status functionID } } } }`;
    const failed = await gql(q, { first: 10, filter: { status: ["FAILED"] } });
    expect(failed.body.data!.runs.edges.length).toBeGreaterThan(0);
    expect(failed.body.data!.runs.edges.every((e: { node: { status: string; functionID: string } }) => e.node.status === "FAILED" && e.node.functionID === "api-app-fails")).toBe(true);
    const steps = await gql(q, { first: 1, filter: { functionIDs: ["api-app-steps"] } });
    const total = steps.body.data!.runs.totalCount as number;
    expect(total).toBeGreaterThanOrEqual(3);
    expect(steps.body.data!.runs.pageInfo.hasNextPage).toBe(true);
    const next = await gql(q, { first: 1, after: steps.body.data!.runs.pageInfo.endCursor, filter: { functionIDs: ["api-app-steps"] } });
    expect(next.body.data!.runs.edges[0].node.id).not.toBe(steps.body.data!.runs.edges[0].node.id);
  });

  it("apps and functions: triggers with their condition, cron with its next run", async () => {
    const { body } = await gql(`{ apps { id name url functionCount connected } functions { slug name triggers { type value condition nextRun } app { name } } }`);
    expect(body.data!.apps).toEqual([expect.objectContaining({ name: "api-app", url: app.url, functionCount: 5, connected: true })]);
    const fns = body.data!.functions as { slug: string; triggers: { type: string; value: string; condition: string | null; nextRun: string | null }[] }[];
    expect(fns.find((f) => f.slug === "api-app-steps")!.triggers).toEqual([{ type: "EVENT", value: "api/go", condition: "event.data.ok == true", nextRun: null }]);
    const cron = fns.find((f) => f.slug === "api-app-nightly")!.triggers[0]!;
    expect(cron).toMatchObject({ type: "CRON", value: "0 3 * * *" });
    expect(new Date(cron.nextRun!).getUTCHours()).toBe(3);
  });

  it("refuses what is not a GraphQL request: 415 without JSON, 400 with the parser's error", async () => {
    const text = await fetch(`${local.url}/v0/gql`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
    expect(text.status).toBe(415);
    const bad = await gql(`query { nope }`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors?.[0]?.message).toMatch(/Cannot query field "nope"/);
    const notJson = await fetch(`${local.url}/v0/gql`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    expect(notJson.status).toBe(400);
  });

  describe("dashboard", () => {
    it("the home page shows apps (last sync, Resync), functions with triggers and the cron's next run, and the send form", async () => {
      const res = await raw(`${local.url}/`);
      expect(res.status).toBe(200);
      expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.text).toContain("Resync apps");
      expect(res.text).toContain("Steps demo");
      expect(res.text).toContain("event.data.ok == true");
      expect(res.text).toMatch(/Cron <code>0 3 \* \* \*<\/code> <span class="muted">next run<\/span> <time datetime="[^"]+T03:00:00\.000Z"/);
      expect(res.text).toContain('action="/ui/events"');
    });

    it("runs: cron runs hidden by default, shown on request; filters by status and function", async () => {
      const page = await raw(`${local.url}/ui/runs`);
      expect(page.text).toMatch(/scheduled \(cron\) runs? (is|are) hidden/);
      expect(page.text).not.toContain("Nightly sweep</td>");
      expect((await raw(`${local.url}/ui/runs?cron=1`)).text).toContain("Nightly sweep</td>");
      const failed = await raw(`${local.url}/ui/runs?status=failed`);
      expect(failed.text).toContain("Always fails</td>");
      expect(failed.text).not.toContain("Steps demo</td>");
      const byFn = await raw(`${local.url}/ui/runs?function=api-app-fails`);
      expect(byFn.text).not.toContain("Steps demo</td>");
    });

    it("runs and events page by 20, newest first, keeping the filters in the page links", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 21; i++) ids.push(((await (await fetch(`${local.url}/fn/nightly/invoke`, { method: "POST" })).json()) as { runId: string }).runId);
      await Promise.all(ids.map(endedRun));
      const first = await raw(`${local.url}/ui/runs?function=api-app-nightly&cron=1`);
      const total = local.runs().filter((r) => r.functionId === "api-app-nightly").length;
      expect(first.text).toContain(`Showing 1–20 of ${total} runs`);
      expect(first.text).toContain(ids.at(-1)!); // newest first
      expect(first.text).toContain('href="/ui/runs?function=api-app-nightly&amp;cron=1&amp;page=2" rel="next">Older runs');
      const second = await raw(`${local.url}/ui/runs?function=api-app-nightly&cron=1&page=2`);
      expect(second.text).toContain(`Showing 21–${total} of ${total} runs`);
      expect(second.text).toContain(ids[0]!);
      expect(second.text).toContain('rel="prev">Newer runs');
      expect(second.text).not.toContain("Older runs");
      // Without the toggle every one of them is a hidden cron run.
      expect((await raw(`${local.url}/ui/runs?function=api-app-nightly`)).text).toContain(`No runs match. ${total} scheduled (cron) runs are hidden.`);
    });

    it("a run page shows the step timeline: start, duration, attempts, output or error", async () => {
      const run = local.runs().find((r) => r.functionId === "api-app-steps" && r.status === "completed")!;
      const page = await raw(`${local.url}/ui/runs/${run.id}`);
      expect(page.status).toBe(200);
      for (const name of ["first", "nap", "second"]) expect(page.text).toContain(`<h3>${name}</h3>`);
      expect(page.text).toContain("step.sleep");
      expect(page.text).toContain("<dt>Attempts</dt><dd>2</dd>");
      expect(page.text).toContain("&quot;total&quot;: 2");
      expect((await raw(`${local.url}/ui/runs/01NOPE`)).status).toBe(404);
      expect((await raw(`${local.url}/ui/runs/%E0%A4%A`)).status).toBe(404);
      expect((await raw(`${local.url}/fn/%E0%A4%A/invoke`, { method: "POST" })).status).toBe(400);
    });

    it("Cancel from the dashboard's own origin cancels with a reason; from another origin, or with none, it is refused", async () => {
      const id = await send("api/wait", {});
      const run = await runFor(id, "waits");
      await waitFor("wait step", () => local.runs().find((r) => r.id === run.id)?.steps.some((s) => s.status === "waiting"));

      const evil = await form(`/ui/runs/${run.id}/cancel`, {}, "http://evil.example");
      expect(evil.status).toBe(403);
      const none = await form(`/ui/runs/${run.id}/cancel`, {}, null);
      expect(none.status).toBe(403);
      const json = await raw(`${local.url}/runs/${run.id}/cancel`, { method: "POST", headers: { origin: "http://evil.example", "content-type": "text/plain" } });
      expect(json.status).toBe(403);
      expect(local.runs().find((r) => r.id === run.id)!.status).toBe("running");

      const ok = await form(`/ui/runs/${run.id}/cancel`, {});
      expect(ok.status).toBe(303);
      expect(ok.headers.location).toBe(`/ui/runs/${run.id}?done=cancelled`);
      const after = local.runs().find((r) => r.id === run.id)!;
      expect(after.status).toBe("cancelled");
      const page = await raw(`${local.url}${ok.headers.location}`);
      expect(page.text).toContain("Run cancelled.");
      expect(page.text).toContain("Cancel reason: <strong>dashboard (Cancel button)</strong>");
    });

    it("Rerun starts a new run of the same function with the same event", async () => {
      const old = local.runs().find((r) => r.functionId === "api-app-fails")!;
      const res = await form(`/ui/runs/${old.id}/rerun`, {});
      expect(res.status).toBe(303);
      const newId = /\/ui\/runs\/([^?]+)/.exec(String(res.headers.location))![1]!;
      expect(newId).not.toBe(old.id);
      const rerun = await endedRun(newId);
      expect(rerun).toMatchObject({ functionId: old.functionId, eventId: old.eventId, status: "failed" });
    });

    it("Resync re-syncs the apps and says so", async () => {
      const before = (await gql(`{ apps { url } }`)).body;
      expect(before.data!.apps.length).toBe(1);
      const res = await form(`/ui/sync`, {});
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe("/?done=resynced");
      expect((await raw(`${local.url}/?done=resynced`)).text).toContain("Apps resynced.");
    });

    it("the send-event form ingests the event; payload text is escaped everywhere it is shown", async () => {
      const res = await form(`/ui/events`, { name: XSS_NAME, data: JSON.stringify(XSS_DATA) });
      expect(res.status).toBe(303);
      const run = await waitFor("xss run", () => local.runs().find((r: RunSummary) => r.eventName === XSS_NAME));
      for (const path of ["/ui/events", `/ui/runs/${run.id}`, "/ui/runs", "/"]) {
        const page = await raw(`${local.url}${path}`);
        expect(page.text, path).not.toContain("<img src=x");
        expect(page.text, path).not.toContain("<script>");
        expect(page.text, path).not.toContain("<b>key</b>");
      }
      expect((await raw(`${local.url}/ui/events`)).text).toContain("&lt;/pre&gt;&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;");
      await form(`/ui/runs/${run.id}/cancel`, {});

      expect((await form(`/ui/events`, { name: "api/x", data: "[1]" })).status).toBe(400);
      expect((await form(`/ui/events`, { name: "api/x", data: "{" })).status).toBe(400);
      expect((await form(`/ui/events`, { name: " ", data: "{}" })).status).toBe(400);
    });

    it("answers on its own host names only (a rebound DNS name gets 421), and wants a form body", async () => {
      expect((await raw(`${local.url}/`, { headers: { host: "evil.example" } })).status).toBe(421);
      expect((await raw(`${local.url}/`, { headers: { host: `localhost:${local.port}` } })).status).toBe(200);
      const asJson = await raw(`${local.url}/ui/sync`, { method: "POST", headers: { origin: local.url, "content-type": "application/json" }, body: "{}" });
      expect(asJson.status).toBe(415);
    });
  });
});

describe("inngest-local Dev Server API in self-hosted mode", () => {
  it("GET /dev is 404, as `inngest start` answers it", async () => {
    const local = await startInngestLocal({ port: 0, appUrls: ["http://127.0.0.1:9/api/inngest"], signingKey: "signkey-test-00ff", eventKeys: ["k"], log: () => {} });
    try {
      expect((await fetch(`${local.url}/dev`)).status).toBe(404);
      const query = JSON.stringify({ query: "{ apps { url connected } }" });
      const gql = (headers: Record<string, string>) => fetch(`${local.url}/v0/gql`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: query });
      expect((await gql({})).status).toBe(401); // the control plane needs a credential (control-plane.test.ts)
      expect((await gql({ authorization: "Bearer signkey-test-00ff" })).status).toBe(200);
    } finally {
      await local.close();
    }
  });
});
