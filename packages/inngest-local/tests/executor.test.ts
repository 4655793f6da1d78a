// How packages/inngest-local runs what the real executor runs side by side or in a set order:
// parallel sleeps and waits, wildcard triggers, step.invoke, the event and header shapes
// the SDK reads (user, ctx.jobId, sessions), and the request sequence around parallel
// groups (each request the app answers is recorded here, at the app). A real app built
// with the pinned SDK, served over HTTP, driven by the stand-in.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/executor.test.ts
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest, referenceFunction } from "inngest";
import { serve } from "inngest/node";
import { startInngestLocal, type InngestLocal, type RunSummary } from "../index";
import { sleep, startSdkApp, waitFor, type SdkApp } from "../sdk-app";


/** One request the app answered: which step it was asked for, and the ops it answered with. */
type Served = { fnId: string; stepId: string; status: number; ops: { op: string; displayName?: string }[] };

/** Wraps the serve handler to record each answer, as written to the socket. */
function recording(handler: http.RequestListener, served: Served[]): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://app");
    if (req.method !== "POST") return handler(req, res);
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (...a: unknown[]) => boolean;
    const end = res.end.bind(res) as (...a: unknown[]) => http.ServerResponse;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === "string" || chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
      return write(chunk, ...rest);
    }) as typeof res.write;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk === "string" || chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
      return end(chunk, ...rest);
    }) as typeof res.end;
    res.on("finish", () => {
      let body: unknown = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        // not JSON: no ops
      }
      const ops = res.statusCode === 206 ? ((Array.isArray(body) ? body : [body]) as Served["ops"]) : [];
      served.push({ fnId: url.searchParams.get("fnId") ?? "", stepId: url.searchParams.get("stepId") ?? "", status: res.statusCode, ops });
    });
    handler(req, res);
  };
}

describe("inngest-local executor", () => {
  let app: SdkApp;
  let local: InngestLocal;
  let inngest: Inngest;
  const logs: string[] = [];
  const served: Served[] = [];
  /** What the functions saw, by test. */
  const seen: Record<string, unknown[]> = {};
  const note = (k: string, v: unknown) => (seen[k] ??= []).push(v);
  let seq = 0;
  const key = () => `k${++seq}`;

  const runsOf = (fn: string, k?: string): RunSummary[] => local.runs().filter((r) => r.functionId === `exec-app-${fn}` && (k === undefined || r.event.data.k === k));
  const finalRun = (fn: string, k: string, timeoutMs = 8000) =>
    waitFor(`${fn} run for ${k} to end`, () => runsOf(fn, k).find((r) => r.status !== "running"), timeoutMs);
  const servedFor = (fn: string) => served.filter((s) => s.fnId === `exec-app-${fn}`);

  beforeAll(async () => {
    app = await startSdkApp();
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.001, syncRetryMs: 50, log: (l) => logs.push(l) });
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    inngest = new Inngest({ id: "exec-app", isDev: true, baseUrl: local.url, logger: quiet });
    const child = inngest.createFunction({ id: "child", triggers: [{ event: "exec/child" }] }, async ({ event, step }) => {
      await step.sleep("child-nap", "50ms");
      if (event.data.fail) throw new Error(`child failed for ${String(event.data.n)}`);
      return { doubled: Number(event.data.n) * 2 };
    });
    const slowChild = inngest.createFunction({ id: "slow-child", triggers: [{ event: "exec/slow-child" }] }, async ({ step }) => {
      await step.sleep("long-nap", "30s");
      return "too late";
    });
    const functions = [
      child,
      slowChild,
      inngest.createFunction({ id: "race", triggers: [{ event: "exec/race" }] }, async ({ step }) =>
        Promise.race([step.waitForEvent("wait", { event: "exec/never", timeout: "3s" }).then(() => "wait"), step.sleep("nap", "1s").then(() => "sleep")]),
      ),
      // The SDK's race mode (group.parallel): the first member to end settles the race.
      inngest.createFunction({ id: "race-mode", triggers: [{ event: "exec/race-mode" }] }, async ({ step, group }) =>
        group.parallel({ mode: "race" }, () =>
          Promise.race([step.waitForEvent("wait", { event: "exec/never", timeout: "3s" }).then(() => "wait"), step.sleep("nap", "500ms").then(() => "sleep")]),
        ),
      ),
      inngest.createFunction({ id: "all", triggers: [{ event: "exec/all" }] }, async ({ event, step }) => {
        const [got] = await Promise.all([
          step.waitForEvent("wait", { event: "exec/release", timeout: "20s", if: `async.data.k == "${String(event.data.k)}"` }),
          step.sleep("nap", "100ms"),
        ]);
        return got?.data ?? null;
      }),
      inngest.createFunction({ id: "wild", triggers: [{ event: "wild/*" }] }, async ({ event }) => event.name),
      inngest.createFunction({ id: "bad-wild", triggers: [{ event: "wi*ld" }] }, async () => "never"),
      inngest.createFunction({ id: "invoker", triggers: [{ event: "exec/invoke" }] }, async ({ event, step }) => {
        const ok = await step.invoke("call-child", { function: child, data: { n: event.data.n } });
        let caught = "";
        try {
          await step.invoke("call-failing-child", { function: child, data: { n: event.data.n, fail: true } });
        } catch (e) {
          caught = `${(e as Error).name}: ${(e as Error).message}`;
        }
        return { ok, caught };
      }),
      inngest.createFunction({ id: "invoke-missing", triggers: [{ event: "exec/invoke-missing" }] }, async ({ step }) => {
        try {
          await step.invoke("call-nobody", { function: referenceFunction({ functionId: "nobody-here" }) });
          return "found";
        } catch (e) {
          return (e as Error).message;
        }
      }),
      inngest.createFunction({ id: "invoke-timeout", triggers: [{ event: "exec/invoke-timeout" }] }, async ({ step }) => {
        try {
          await step.invoke("call-slow", { function: slowChild, timeout: "300ms" });
          return "finished";
        } catch (e) {
          return `${(e as Error).name}: ${(e as Error).message}`;
        }
      }),
      inngest.createFunction({ id: "shapes", triggers: [{ event: "exec/shapes" }] }, async ({ event, jobId }) => {
        note("shapes", { user: (event as { user?: unknown }).user, jobId });
        return "ok";
      }),
      inngest.createFunction({ id: "session-parent", triggers: [{ event: "exec/session-parent" }] }, async ({ event, step }) => {
        await step.sendEvent("pass-on", { name: "exec/session-child", data: { k: event.data.k }, ...(event.data.override ? { meta: { sessions: { org: "override", team: null } } } : {}) });
      }),
      inngest.createFunction({ id: "session-child", triggers: [{ event: "exec/session-child" }] }, async ({ event, sessions }) => {
        note(`sessions:${String(event.data.k)}`, sessions ?? null);
      }),
      inngest.createFunction({ id: "step-and-sleep", retries: 0, triggers: [{ event: "exec/step-and-sleep" }] }, async ({ step }) => {
        note("step-and-sleep", "top");
        await step.run("one", () => 1);
        const pair = await Promise.all([step.run("two-a", () => "a"), step.sleep("two-b", "200ms")]);
        await step.run("three", () => 3);
        note("step-and-sleep", "bottom");
        return pair;
      }),
      inngest.createFunction({ id: "after-group", retries: 0, triggers: [{ event: "exec/after-group" }] }, async ({ step }) => {
        await step.run("seq-1", () => 1);
        await Promise.all([step.run("par-1", () => "p1"), step.run("par-2", () => "p2")]);
        await step.run("after-1", () => 1);
        await step.run("after-2", () => 2);
        return "done";
      }),
      inngest.createFunction({ id: "timeline", triggers: [{ event: "exec/timeline" }] }, async ({ step }) => {
        const n = await step.run("prepare", () => 20);
        const ev = await step.waitForEvent("approval", { event: "exec/approve", timeout: "30s" });
        return n + Number(ev?.data.add ?? 0);
      }),
    ];
    app.setHandler(recording(serve({ client: inngest, functions }), served));
    await waitFor("initial sync", () => logs.some((l) => l.startsWith('synced app "exec-app"')));
  });
  afterAll(async () => {
    await local?.close();
    await app?.close();
  });

  const send = (name: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) => inngest.send({ name, data, ...extra });

  describe("parallel sleeps and waits", () => {
    it("Promise.race of a 3 s waitForEvent and a 1 s sleep is won by the sleep: both run side by side, the sleep ends first", async () => {
      const k = key();
      await send("exec/race", { k });
      // One after the other (wait, then sleep), the wait's timeout would be stored first and
      // win the race. The SDK (4.24) reports the unsettled wait again after the sleep, so the
      // run resumes for good when the wait times out, as under the real executor.
      const run = await finalRun("race", k, 10_000);
      expect(run).toMatchObject({ status: "completed", output: "sleep" });
      const [wait, nap] = ["wait", "nap"].map((n) => run.steps.find((s) => s.name === n)!);
      expect(Date.parse(nap!.endedAt!)).toBeLessThan(Date.parse(wait!.endedAt!));
      expect(Date.parse(nap!.startedAt)).toBeLessThan(Date.parse(wait!.endedAt!));
    });

    // The SDK's race mode (group.parallel({ mode: "race" })) only tags each op with
    // parallelMode "race"; the executor then resumes the function after *each* member that
    // ends (shouldEnqueueDiscovery), which it does for a sleep in any mode. Resumed after the
    // sleep, the SDK (4.24) reports the unsettled wait again instead of settling the race, and
    // the executor takes a wait reported again as the same pause (ErrPauseAlreadyExists is
    // idempotent): the run resumes for good when the wait ends or times out, and the sleep,
    // stored first, wins. The stand-in does the same (decision 0040).
    it("group.parallel race mode: resumed when the sleep ends, the SDK reports the wait again, and the race settles at the wait's timeout, won by the sleep", async () => {
      const k = key();
      await send("exec/race-mode", { k });
      const run = await finalRun("race-mode", k, 10_000);
      expect(run).toMatchObject({ status: "completed", output: "sleep" });
      const [wait, nap] = ["wait", "nap"].map((n) => run.steps.find((s) => s.name === n)!);
      expect(Date.parse(nap!.endedAt!) - Date.parse(run.startedAt)).toBeLessThan(2500);
      expect(Date.parse(wait!.endedAt!) - Date.parse(run.startedAt)).toBeGreaterThanOrEqual(2900);
      // Both reported together first; then the call after the sleep ended, answered with the wait alone.
      const calls = servedFor("race-mode").filter((c) => c.status === 206);
      expect(calls[0]!.ops.map((o) => o.op).sort()).toEqual(["Sleep", "WaitForEvent"]);
      expect(calls.slice(1).some((c) => c.ops.length === 1 && c.ops[0]!.op === "WaitForEvent")).toBe(true);
    });

    it("Promise.all of a wait and a sleep: the event sent during the sleep is the one the wait gets", async () => {
      const k = key();
      await send("exec/all", { k });
      await waitFor("the wait to start", () => runsOf("all", k)[0]?.steps.find((s) => s.name === "wait" && s.status === "waiting"));
      expect(runsOf("all", k)[0]!.steps.find((s) => s.name === "nap")!.status).toBe("sleeping");
      await send("exec/release", { k, note: "released" });
      expect(await finalRun("all", k)).toMatchObject({ status: "completed", output: { k, note: "released" } });
    });
  });

  describe("wildcard triggers", () => {
    it("`wild/*` starts a run for every event under wild/, and none for another prefix", async () => {
      const k = key();
      await send("wild/a", { k });
      await send("wild/b/c", { k });
      await send("wilder/x", { k });
      await waitFor("two wildcard runs", () => runsOf("wild", k).filter((r) => r.status === "completed").length === 2);
      await sleep(200);
      expect(runsOf("wild", k).map((r) => r.output).sort()).toEqual(["wild/a", "wild/b/c"]);
    });

    it("a `*` anywhere else is refused at sync with a message, and the function's runs fail saying why", async () => {
      expect(logs.some((l) => l.startsWith("ERROR fn exec-app-bad-wild") && l.includes('a wildcard must be a whole last segment ("prefix/*")'))).toBe(true);
      const fns = (await (await fetch(`${local.url}/functions`)).json()) as { id: string; problems: string[] }[];
      expect(fns.find((f) => f.id === "exec-app-bad-wild")!.problems).toEqual([expect.stringContaining("wi*ld")]);
    });
  });

  describe("step.invoke", () => {
    it("runs the child function and hands its result to the step; a child's failure is an error the step can catch", async () => {
      const k = key();
      await send("exec/invoke", { k, n: 21 });
      const run = await finalRun("invoker", k);
      expect(run.status).toBe("completed");
      expect(run.output).toEqual({ ok: { doubled: 42 }, caught: "Error: child failed for 21" });
      const children = local.runs().filter((r) => r.functionId === "exec-app-child" && r.event.data.n === 21);
      expect(children.map((c) => [c.eventName, c.status]).sort()).toEqual([
        ["inngest/function.invoked", "completed"],
        ["inngest/function.invoked", "failed"],
      ]);
      expect(run.steps.filter((s) => s.op === "InvokeFunction").map((s) => [s.name, s.status])).toEqual([
        ["call-child", "completed"],
        ["call-failing-child", "failed"],
      ]);
    });

    it("a function that is not synced: the step gets a catchable error saying so", async () => {
      const k = key();
      await send("exec/invoke-missing", { k });
      const run = await finalRun("invoke-missing", k);
      expect(run).toMatchObject({ status: "completed", output: 'could not find function with ID "exec-app-nobody-here"' });
    });

    it("a child that outlives the invoke's timeout: the step gets a timeout error", async () => {
      const k = key();
      await send("exec/invoke-timeout", { k });
      const run = await finalRun("invoke-timeout", k);
      expect(run.status).toBe("completed");
      expect(run.output).toMatch(/^InngestInvokeTimeoutError: Timed out waiting for invoked function exec-app-slow-child/);
    });

    it("the trace shows the step as INVOKE", async () => {
      const run = runsOf("invoke-missing")[0]!;
      const res = await fetch(`${local.url}/v0/gql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `query ($id: String!) { run(runID: $id) { trace { childrenSpans { name stepType status } } } }`, variables: { id: run.id } }),
      });
      const spans = ((await res.json()) as { data: { run: { trace: { childrenSpans: { name: string; stepType: string; status: string }[] } } } }).data.run.trace.childrenSpans;
      expect(spans.find((s) => s.name === "call-nobody")).toEqual({ name: "call-nobody", stepType: "INVOKE", status: "FAILED" });
    });
  });

  describe("shapes the SDK reads", () => {
    it("events carry `user: {}`, and each call an x-inngest-job-id, which the SDK gives as ctx.jobId", async () => {
      await send("exec/shapes", { k: key() });
      const [got] = await waitFor("the shapes function", () => seen.shapes);
      expect(got).toEqual({ user: {}, jobId: expect.stringMatching(/^[0-9A-Z]{26}$/) });
    });

    it("sessions the SDK stamps on an event it sends (meta.propagated_sessions) reach the child run as its sessions", async () => {
      const k = key();
      await send("exec/session-parent", { k }, { meta: { sessions: { org: "acme", team: "core" } } });
      const [got] = await waitFor("the child run", () => seen[`sessions:${k}`]);
      expect(got).toEqual({ org: "acme", team: "core" });
    });

    it("the sender's own sessions win over the propagated ones, and a null session cuts the inherited one", async () => {
      const k = key();
      await send("exec/session-parent", { k, override: true }, { meta: { sessions: { org: "acme", team: "core" } } });
      const [got] = await waitFor("the child run", () => seen[`sessions:${k}`]);
      expect(got).toEqual({ org: "override" });
    });
  });

  describe("the request sequence around parallel groups", () => {
    it("a step beside a sleep is a parallel group: the step is run on its own request, and the function resumes once both are done (5 requests)", async () => {
      await send("exec/step-and-sleep", { k: key() });
      const run = await waitFor("step-and-sleep to end", () => runsOf("step-and-sleep").find((r) => r.status !== "running"));
      expect(run).toMatchObject({ status: "completed", output: ["a", null] });
      const reqs = servedFor("step-and-sleep");
      const names = (s: Served) => s.ops.map((o) => `${o.op}:${o.displayName ?? ""}`);
      expect(reqs.map((s) => s.stepId === "step" ? "discover" : "target")).toEqual(["discover", "target", "discover", "target", "discover"]);
      expect(names(reqs[0]!)).toEqual(expect.arrayContaining(["StepPlanned:two-a", "Sleep:two-b"]));
      expect(names(reqs[1]!)).toEqual(["StepRun:two-a"]);
      // After the group, still planning: "three" is planned, then run on its own request.
      expect(names(reqs[2]!)).toEqual(["StepPlanned:three"]);
      expect(names(reqs[3]!)).toEqual(["StepRun:three"]);
      expect(reqs[4]!.ops.map((o) => o.op)).toEqual(["RunComplete"]);
      expect(seen["step-and-sleep"]).toEqual(["top", "top", "top", "top", "top", "bottom"]);
    });

    it("after a parallel group of steps the SDK checkpoints again: no step after it is planned, and the run ends with RunComplete", async () => {
      await send("exec/after-group", { k: key() });
      const run = await waitFor("after-group to end", () => runsOf("after-group").find((r) => r.status !== "running"));
      expect(run).toMatchObject({ status: "completed", output: "done" });
      const ops = servedFor("after-group").flatMap((s) => s.ops);
      expect(ops.map((o) => o.op)).toContain("RunComplete");
      expect(ops.filter((o) => o.op === "StepPlanned").map((o) => o.displayName)).toEqual(["par-1", "par-2"]);
      expect(run.steps.filter((s) => s.name.startsWith("after-")).every((s) => s.checkpointed)).toBe(true);
    });
  });

  it("drives a function through the /v0/gql run timeline, as the SDK's test helpers do", async () => {
    const gql = async (query: string, variables: Record<string, unknown>, operationName?: string) => {
      const res = await fetch(`${local.url}/v0/gql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables, operationName }) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: Record<string, any> }).data;
    };
    const timeline = `query GetRunTimeline($runId: String!) { run(runID: $runId) { trace(preview: true) {
      name stepType attempts outputID status childrenSpans { name stepType attempts outputID status } } } }`;
    type Span = { name: string; stepType: string; attempts: number; outputID: string | null; status: string };
    const spanOf = async (runId: string, match: Partial<Span>) => {
      const trace = (await gql(timeline, { runId }, "GetRunTimeline")).run?.trace as (Span & { childrenSpans: Span[] }) | undefined;
      return [trace, ...(trace?.childrenSpans ?? [])].find((s) => s && Object.entries(match).every(([k, v]) => s[k as keyof Span] === v));
    };
    const output = async (outputID: string) => (await gql(`query ($id: String!) { runTraceSpanOutputByID(outputID: $id) { data error { name message } } }`, { id: outputID })).runTraceSpanOutputByID;

    const [eventId] = (await send("exec/timeline", { k: key() })).ids;
    // The run, found through the event as the helpers find it.
    const runId = await waitFor("the event's run", async () => {
      const ev = await gql(`query ($id: ULID!) { eventV2(id: $id) { runs { id function { slug } } } }`, { id: eventId });
      return ev.eventV2?.runs?.[0]?.id as string | undefined;
    });
    const prepared = await waitFor("prepare to complete", () => spanOf(runId, { name: "prepare", stepType: "RUN", status: "COMPLETED" }));
    expect(prepared.attempts).toBe(0);
    expect(await output(prepared.outputID!)).toEqual({ data: "20", error: null });
    await waitFor("the wait to show", () => spanOf(runId, { name: "approval", stepType: "WAIT_FOR_EVENT", status: "WAITING" }));
    await send("exec/approve", { add: 22 });
    await waitFor("the wait to complete", () => spanOf(runId, { name: "approval", status: "COMPLETED" }));
    const root = await waitFor("the run to complete", () => spanOf(runId, { status: "COMPLETED", stepType: "" }));
    expect(await output(root.outputID!)).toEqual({ data: "42", error: null });
  });
});
