// The SDK's deferred runs (`createDefer` functions, started by `defer()` in another run) as
// packages/inngest-local runs them, after the executor (inngest/inngest, pkg/execution/defers
// and executor/finalize.go): a `DeferAdd` op is kept with the run, `DeferAbort` cancels it,
// and when the run ends, however it ends, each kept defer becomes one
// `inngest/deferred.schedule` event that starts the named function. Each request tells the
// SDK which defers it already reported (`defers`), so a re-run of the code does not add
// them twice. A real app built with the pinned SDK, served over HTTP.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/defer.test.ts
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest } from "inngest";
import { createDefer } from "inngest/experimental";
import { serve } from "inngest/node";
import { startInngestLocal, type InngestLocal, type RunSummary } from "../index";
import { sleep, startSdkApp, tapBodies, waitFor, type SdkApp } from "../sdk-app";

describe("inngest-local deferred runs (defer, createDefer)", () => {
  let app: SdkApp;
  let local: InngestLocal;
  let inngest: Inngest;
  const logs: string[] = [];
  const requests: { fnId: string; defers: unknown }[] = [];
  /** What the deferred function saw, by key. */
  const got: Record<string, { data: unknown; parents: unknown; sessions: unknown; runId: string; at: number }[]> = {};
  let seq = 0;
  const key = () => `d${++seq}`;

  const runsOf = (fn: string, k: string): RunSummary[] => local.runs().filter((r) => r.functionId === `defer-app-${fn}` && r.event.data.k === k);
  const ended = (fn: string, k: string) => waitFor(`${fn} run for ${k} to end`, () => runsOf(fn, k).find((r) => r.status !== "running"));

  beforeAll(async () => {
    app = await startSdkApp();
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.001, syncRetryMs: 50, log: (l) => logs.push(l) });
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    inngest = new Inngest({ id: "defer-app", isDev: true, baseUrl: local.url, logger: quiet, internalLogger: quiet });
    const later = createDefer(inngest, { id: "later" }, async ({ event, parents, runId, sessions }) => {
      const data = event.data as { k: string };
      (got[data.k] ??= []).push({ data: event.data, parents, sessions, runId, at: Date.now() });
      return "done later";
    });
    const functions = [
      later,
      inngest.createFunction({ id: "parent", retries: 0, triggers: [{ event: "defer/parent" }] }, async ({ event, defer, step }) => {
        const k = String(event.data.k);
        const mode = String(event.data.mode);
        if (mode === "in-step") {
          await step.run("inside", () => {
            defer("one", { function: later, data: { k, from: "step" } });
          });
        } else {
          defer("one", { function: later, data: { k, from: "body" } });
        }
        if (mode === "abort") defer("two", { function: later, data: { k, from: "aborted" } }).abort();
        if (mode === "abort-shipped") {
          const ref = defer("two", { function: later, data: { k, from: "aborted after shipping" } });
          await step.run("ship-it", () => 1);
          ref.abort();
        }
        // Re-entry: the code above runs again after the sleep; the defer must not be added twice.
        await step.sleep("nap", "100ms");
        if (mode === "throw") throw new Error("parent failed after its defer");
        return "parent done";
      }),
      inngest.createFunction({ id: "session-parent", retries: 0, triggers: [{ event: "defer/session-parent" }] }, async ({ event, defer }) => {
        defer("with-sessions", { function: later, data: { k: String(event.data.k) }, meta: { sessions: { team: "manual" } } });
      }),
    ];
    // Each call's `defers`: what the stand-in tells the SDK it already has.
    app.setHandler(tapBodies(serve({ client: inngest, functions }), (req, body) => requests.push({ fnId: new URL(req.url ?? "/", "http://app").searchParams.get("fnId") ?? "", defers: body.defers })));
    await waitFor("initial sync", () => logs.some((l) => l.startsWith('synced app "defer-app"')));
  });
  afterAll(async () => {
    await local?.close();
    await app?.close();
  });

  const send = (name: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) => inngest.send({ name, data, ...extra });

  it("is accepted at sync: the deferred function has no problem, and its trigger is inngest/deferred.schedule", async () => {
    expect(logs.filter((l) => l.startsWith("ERROR fn defer-app-later"))).toEqual([]);
    const fns = (await (await fetch(`${local.url}/functions`)).json()) as { id: string; problems: string[]; triggers: { event?: string }[] }[];
    const later = fns.find((f) => f.id === "defer-app-later")!;
    expect(later.problems).toEqual([]);
    expect(later.triggers).toEqual([expect.objectContaining({ event: "inngest/deferred.schedule" })]);
  });

  it("a defer() starts the deferred function once, after the run ends, with the data given and the parent named", async () => {
    const k = key();
    await send("defer/parent", { k, mode: "body" });
    const parent = await ended("parent", k);
    expect(parent).toMatchObject({ status: "completed", output: "parent done" });
    const child = await ended("later", k);
    expect(child).toMatchObject({ status: "completed", output: "done later", eventName: "inngest/deferred.schedule" });
    // The event carries the parent in data._inngest; the SDK strips it before the handler.
    expect(child.event.data._inngest).toMatchObject({ fn_slug: "defer-app-later", parent_fn_slug: "defer-app-parent", parent_run_id: parent.id });
    expect(got[k]).toEqual([{ data: { k, from: "body" }, parents: [{ fnSlug: "defer-app-parent", runId: parent.id }], sessions: undefined, runId: child.id, at: expect.any(Number) }]);
    expect(got[k]![0]!.at).toBeGreaterThanOrEqual(Date.parse(parent.endedAt!));
    // The run re-entered after its sleep; the request then said the defer was already reported.
    const parentCalls = requests.filter((r) => r.fnId === "defer-app-parent" && JSON.stringify(r.defers).includes("abortable"));
    expect(parentCalls.length).toBeGreaterThan(0);
    await sleep(300);
    expect(runsOf("later", k)).toHaveLength(1);
  });

  it("a defer() inside a step.run is kept too (it rides along with the step's checkpoint)", async () => {
    const k = key();
    await send("defer/parent", { k, mode: "in-step" });
    expect(await ended("parent", k)).toMatchObject({ status: "completed" });
    expect(await ended("later", k)).toMatchObject({ status: "completed" });
    expect(got[k]!.map((g) => g.data)).toEqual([{ k, from: "step" }]);
  });

  it("an aborted defer never runs, whether the abort comes with the add or after the add was reported", async () => {
    for (const mode of ["abort", "abort-shipped"]) {
      const k = key();
      await send("defer/parent", { k, mode });
      expect(await ended("parent", k)).toMatchObject({ status: "completed" });
      await ended("later", k);
      await sleep(300);
      expect(got[k]!.map((g) => g.data)).toEqual([{ k, from: "body" }]);
    }
  });

  it("a run that fails still starts its deferred runs, as the executor schedules them on every end", async () => {
    const k = key();
    await send("defer/parent", { k, mode: "throw" });
    expect(await ended("parent", k)).toMatchObject({ status: "failed" });
    expect(await ended("later", k)).toMatchObject({ status: "completed" });
  });

  it("the deferred run inherits the parent's sessions; the defer's own sessions win", async () => {
    const k = key();
    await send("defer/session-parent", { k }, { meta: { sessions: { org: "acme", team: "inherited" } } });
    expect(await ended("later", k)).toMatchObject({ status: "completed" });
    expect(got[k]![0]!.sessions).toEqual({ org: "acme", team: "manual" });
  });
});
