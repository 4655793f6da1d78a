// Run and step metadata (the SDK's scores, `client.score` and `step.score`, and any kind the
// SDK attaches) as packages/inngest-local keeps it and the `/v0/gql` trace shows it: a run's
// metadata on the root span, a step's on its span, as the dev server does. It comes two
// ways: on a step's op (`metadata: [{kind, scope, op, values}]`, from inside the step) and
// through POST /v1/runs/{runId}/metadata (from anywhere else). A real app built with the
// pinned SDK, served over HTTP.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/metadata.test.ts
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest } from "inngest";
import { scoreMiddleware } from "inngest/experimental";
import { serve } from "inngest/node";
import { startInngestLocal, type InngestLocal, type RunSummary } from "../index";
import { startSdkApp, tapBodies, waitFor, type SdkApp } from "../sdk-app";

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
/** The client with scoreMiddleware in its type, so functions get `step.score`. */
const newClient = (baseUrl: string) => new Inngest({ id: "meta-app", isDev: true, baseUrl, logger: quiet, middleware: [scoreMiddleware()] });

type Meta = { kind: string; scope: string; values: Record<string, unknown>; updatedAt: string };
type Node = { name: string; metadata: Meta[]; childrenSpans: Node[] };

describe("inngest-local run and step metadata (scores)", () => {
  let app: SdkApp;
  let local: InngestLocal;
  let inngest: ReturnType<typeof newClient>;
  const logs: string[] = [];
  let seq = 0;
  const key = () => `m${++seq}`;
  /** The traceparent header of each call to the app, with the run it was for. */
  const traceparents: { runId: string; traceparent: string | undefined }[] = [];

  const runOf = (fn: string, k: string): RunSummary | undefined => local.runs().find((r) => r.functionId === `meta-app-${fn}` && r.event.data.k === k);
  const ended = (fn: string, k: string) => waitFor(`${fn} run for ${k} to end`, () => (runOf(fn, k)?.status === "running" ? undefined : runOf(fn, k)));

  /** The trace with each span's metadata, queried as the SDK's test helpers query it. */
  async function traceOf(runId: string): Promise<Node> {
    const fields = "name metadata { scope kind values updatedAt }";
    const res = await fetch(`${local.url}/v0/gql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `query ($runId: String!) { run(runID: $runId) { trace(preview: true) { ${fields} childrenSpans { ${fields} } } } }`, variables: { runId } }),
    });
    const body = (await res.json()) as { data?: { run: { trace: Node } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    return body.data!.run.trace;
  }
  const scores = (metadata: Meta[]) => Object.fromEntries(metadata.filter((m) => m.kind === "inngest.score").flatMap((m) => Object.entries(m.values).map(([n, v]) => [n, (v as { value: unknown }).value])));
  const span = (trace: Node, name: string) => trace.childrenSpans.find((s) => s.name === name)!;

  beforeAll(async () => {
    app = await startSdkApp();
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.001, syncRetryMs: 50, log: (l) => logs.push(l) });
    inngest = newClient(local.url);
    const functions = [
      inngest.createFunction({ id: "plain", retries: 0, triggers: [{ event: "meta/plain" }] }, async ({ step }) => {
        await step.run("my-step", () => 1);
      }),
      inngest.createFunction({ id: "napper", retries: 0, triggers: [{ event: "meta/napper" }] }, async ({ step }) => {
        await step.sleep("nap", "50ms");
        await step.run("after", () => 2);
      }),
      inngest.createFunction({ id: "inside", retries: 0, triggers: [{ event: "meta/inside" }] }, async ({ runId, step }) => {
        await step.run("my-step", async () => {
          // Inside the step: these ride on the step's op.
          await inngest.score({ name: "implicit_step", value: 1 });
          await inngest.score({ name: "explicit_run", runId, value: 2 });
          // Another step: sent through the API.
          await inngest.score({ name: "elsewhere", runId, stepId: "no-such-step", value: 3 });
        });
        await step.score("run-score", { name: "step_tool_run", value: true });
        await step.score("step-score", { name: "step_tool_step", stepId: "my-step", value: false });
      }),
    ];
    app.setHandler(
      tapBodies(serve({ client: inngest, functions }), (req, body) => traceparents.push({ runId: String((body.ctx as { run_id?: string } | undefined)?.run_id ?? ""), traceparent: req.headers.traceparent as string | undefined })),
    );
    await waitFor("initial sync", () => logs.some((l) => l.startsWith('synced app "meta-app"')));
  });
  afterAll(async () => {
    await local?.close();
    await app?.close();
  });

  it("client.score from outside the run lands on the run (root span) or on the step it names (its span), merged by kind", async () => {
    const k = key();
    await inngest.send({ name: "meta/plain", data: { k } });
    const run = await ended("plain", k);
    await inngest.score({ runId: run.id, name: "first", value: true });
    await inngest.score({ runId: run.id, name: "second", value: 0.5 });
    await inngest.score({ runId: run.id, stepId: "my-step", name: "on_step", value: false });
    const trace = await traceOf(run.id);
    expect(scores(trace.metadata)).toEqual({ first: true, second: 0.5 });
    // One entry per kind and scope: the second score merged into the first.
    expect(trace.metadata).toEqual([{ kind: "inngest.score", scope: "run", values: { first: { value: true }, second: { value: 0.5 } }, updatedAt: expect.any(String) }]);
    expect(scores(span(trace, "my-step").metadata)).toEqual({ on_step: false });
  });

  it("a score for a step the run does not have is kept nowhere; the call still succeeds", async () => {
    const k = key();
    await inngest.send({ name: "meta/plain", data: { k } });
    const run = await ended("plain", k);
    await inngest.score({ runId: run.id, stepId: "not-there", name: "orphan", value: 1 });
    const trace = await traceOf(run.id);
    expect(scores(trace.metadata)).toEqual({});
    expect(scores(span(trace, "my-step").metadata)).toEqual({});
    expect(logs.some((l) => l.includes(`run ${run.id}: metadata for step "not-there"`))).toBe(true);
  });

  it("scores from inside a step ride on its op: the step's own on its span, a run's on the root; step.score too", async () => {
    const k = key();
    await inngest.send({ name: "meta/inside", data: { k } });
    const run = await ended("inside", k);
    expect(run.status).toBe("completed");
    const trace = await traceOf(run.id);
    expect(scores(trace.metadata)).toEqual({ explicit_run: 2, step_tool_run: true });
    expect(scores(span(trace, "my-step").metadata)).toEqual({ implicit_step: 1, step_tool_step: false });
    // step.score is a step of its own, shown under its id.
    expect(span(trace, "run-score")).toBeDefined();
    expect(span(trace, "step-score")).toBeDefined();
  });

  it("inngest.ai metadata gets an estimated_cost from its model and tokens, as the dev server backfills it; an unknown model gets none", async () => {
    const k = key();
    await inngest.send({ name: "meta/plain", data: { k } });
    const run = await ended("plain", k);
    const post = (stepId: string, values: Record<string, unknown>) =>
      fetch(`${local.url}/v1/runs/${run.id}/metadata`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ target: { run_id: run.id, step_id: stepId }, metadata: [{ kind: "inngest.ai", op: "set", values }] }) });
    expect((await post("my-step", { provider: "openai", request_model: "gpt-4o", input_tokens: 1_000_000, output_tokens: 0 })).status).toBe(200);
    const ai = () => traceOf(run.id).then((t) => span(t, "my-step").metadata.find((m) => m.kind === "inngest.ai")!.values);
    const priced = await ai();
    expect(priced.estimated_cost).toEqual(expect.any(Number));
    expect(priced.estimated_cost).toBeGreaterThan(0);
    // A cost the SDK sent is kept as it is.
    await post("my-step", { provider: "openai", request_model: "gpt-4o", input_tokens: 10, output_tokens: 10, estimated_cost: 42 });
    expect((await ai()).estimated_cost).toBe(42);
    await post("my-step", { request_model: "no-such-model-anywhere", input_tokens: 10, output_tokens: 10 });
    expect(await ai()).not.toHaveProperty("estimated_cost");
  });

  it("each call carries a W3C traceparent: one trace id for all of a run's calls, a new span id per call", async () => {
    const k = key();
    await inngest.send({ name: "meta/napper", data: { k } });
    const run = await ended("napper", k);
    const mine = traceparents.filter((t) => t.runId === run.id);
    expect(mine.length).toBeGreaterThan(1);
    const parts = mine.map((t) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(t.traceparent ?? "")!);
    expect(parts.every(Boolean)).toBe(true);
    expect(new Set(parts.map((p) => p[1])).size).toBe(1);
    expect(new Set(parts.map((p) => p[2])).size).toBe(mine.length);
  });

  it("POST /v1/runs/{runId}/metadata for a run that does not exist is a 404", async () => {
    const res = await fetch(`${local.url}/v1/runs/01NOSUCHRUN/metadata`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ target: { run_id: "01NOSUCHRUN" }, metadata: [] }) });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "no such run" });
  });
});
