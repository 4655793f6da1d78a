// The call loop: requests to the app's serve route, one at a time per run, each holding a
// concurrency slot while it runs. What an answer says to do next is answers.ts.
import { createHash, randomBytes } from "node:crypto";
import { canonicalBody } from "../signing";
import { errorOf, messageOf, ulid } from "../util";
import type { Request, Run } from "../types";
import { handleAnswer } from "./answers";
import { lateReport } from "./cancel";
import { failRun } from "./finish";
import type { ExecutorState } from "./state";

/** A run's W3C trace id: 32 hex digits derived from its id, so every request of the run shares it. */
const traceIdOf = (runId: string) => createHash("sha256").update(`trace:${runId}`).digest("hex").slice(0, 32);

export type Answer = { status: number; headers: Headers; body: unknown; text: string };

/** Queue a request to the app; a discovery (stepId "step") already waiting is not doubled. */
export function enqueue(run: Run, req: Request, first = false) {
  if (req.stepId === "step" && run.requests.some((r) => r.stepId === "step")) return;
  if (first) run.requests.unshift(req);
  else run.requests.push(req);
  run.wakeDriver?.();
}

/**
 * The call loop: one request to the app at a time per run, as they are queued. Sleeps,
 * waits and invoked runs go on meanwhile, side by side (the executor schedules each one
 * on its own), and each queues the request that resumes the function when it ends.
 */
export async function drive(ex: ExecutorState, run: Run) {
  while (run.status === "running" && !ex.ctx.closed) {
    const req = run.requests.shift();
    if (!req) {
      await new Promise<void>((resolve) => {
        run.wakeDriver = resolve;
      });
      run.wakeDriver = undefined;
      continue;
    }
    // A planned step that has its result already (reported again by a later discovery) is not run twice.
    if (req.stepId !== "step" && req.stepId in run.memo) continue;
    let ans: Answer;
    try {
      ans = await callApp(ex, run, req);
    } catch (e) {
      ans = { status: 599, headers: new Headers(), body: errorOf(e), text: messageOf(e) };
      ex.ctx.log(`run ${run.id} request to ${run.fn.url} failed: ${messageOf(e)}`);
    }
    // Cancelled while the request was in flight: its result is discarded.
    if (run.status !== "running") {
      ex.ctx.log(`run ${run.id} is ${run.status}: discarded the answer (HTTP ${ans.status}) of its in-flight request`);
      lateReport(run, ans.body, true);
      return;
    }
    run.attempts = Math.max(run.attempts, req.attempt + 1);
    await handleAnswer(ex, run, ans, req);
    if (run.status === "running" && !run.requests.length && !run.pending.size) {
      failRun(ex, run, { name: "InngestLocalError", message: "the SDK reported nothing to run and no step, sleep, wait or invoke is pending", stack: "" });
    }
  }
}

// Step-level concurrency, as Inngest does it: a slot is held while a request runs,
// not while a run sleeps or backs off.
async function acquire(ex: ExecutorState, run: Run): Promise<() => void> {
  const { slots } = ex;
  const keys = run.fn.concurrency.map((c) => {
    const k = c.key ? JSON.stringify(c.key.evaluate({ event: run.event }) ?? null) : "";
    return { key: `${c.scope}:${c.scope === "fn" ? run.functionId : ""}:${c.key?.source ?? ""}=${k}`, limit: c.limit };
  });
  while (!keys.every((k) => (slots.active.get(k.key) ?? 0) < k.limit)) {
    if (run.status !== "running") return () => {};
    await new Promise<void>((resolve) => {
      slots.waiters.push(resolve);
      run.wakeDriver = resolve;
    });
  }
  for (const k of keys) slots.active.set(k.key, (slots.active.get(k.key) ?? 0) + 1);
  return () => {
    for (const k of keys) slots.active.set(k.key, (slots.active.get(k.key) ?? 1) - 1);
    const w = slots.waiters;
    slots.waiters = [];
    for (const r of w) r();
  };
}

async function callApp(ex: ExecutorState, run: Run, req: Request): Promise<Answer> {
  const { checkpointing, callTimeoutMs, appHeaders } = ex.ctx;
  const url = new URL(run.fn.url);
  url.searchParams.set("fnId", run.functionId);
  url.searchParams.set("stepId", req.stepId);
  const jobId = ulid();
  const ctx: Record<string, unknown> = {
    run_id: run.id,
    attempt: req.attempt,
    max_attempts: run.maxAttempts,
    disable_immediate_execution: run.forceStepPlan,
    use_api: false,
    stack: { stack: run.stack, current: Math.max(0, run.stack.length - 1) },
  };
  if (checkpointing) {
    // With fn_id (and a queue item id) the SDK runs steps back to back in one
    // request and POSTs each result to /v1/checkpoint/{runId}/async.
    ctx.fn_id = run.functionId;
    ctx.qi_id = jobId;
  }
  // The defers the SDK already reported, so it does not report them again; an aborted or
  // scheduled one can no longer be aborted.
  const defers = Object.fromEntries([...run.defers].map(([id, d]) => [id, { abortable: d.status === "after_run" }]));
  const body: Record<string, unknown> = { event: run.event, events: run.events, steps: run.memo, defers, ctx };
  if (run.version !== undefined) body.version = run.version;
  const release = await acquire(ex, run);
  try {
    // Signed when the request leaves (after any concurrency wait), so it is fresh.
    const bodyText = canonicalBody(body);
    run.mark = Date.now();
    run.inFlight = req.stepId;
    const res = await fetch(url, {
      method: "POST",
      // x-inngest-job-id is the queue item's id, which the SDK gives functions as ctx.jobId.
      // traceparent: the run's trace (one id per run) and a span per request, as the executor
      // sends it; the SDK attributes OpenTelemetry spans (AI usage metadata) only under one.
      headers: { ...appHeaders(bodyText), "x-request-id": ulid(), "x-inngest-job-id": jobId, traceparent: `00-${traceIdOf(run.id)}-${randomBytes(8).toString("hex")}-01` },
      body: bodyText,
      signal: AbortSignal.timeout(callTimeoutMs),
    });
    let status = res.status;
    let headers = res.headers;
    let text = await res.text();
    const v = Number(res.headers.get("x-inngest-req-version"));
    if (Number.isInteger(v) && v > 0) run.version = v;
    if (status === 201) {
      // Streaming mode: heartbeat spaces, then the real response as JSON.
      const inner = JSON.parse(text.trim()) as { status: number; headers?: Record<string, string>; body: string };
      status = inner.status;
      headers = new Headers(inner.headers ?? {});
      text = inner.body ?? "";
    }
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON (e.g. an HTML error page): kept as text
    }
    return { status, headers, body: parsed, text };
  } finally {
    run.inFlight = undefined;
    release();
  }
}
