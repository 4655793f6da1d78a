// Step results the SDK reports outside an answer: checkpoints of a run we drive
// (POST /v1/checkpoint/{runId}/async) and the runs of durable endpoints in sync mode, which
// drive themselves (POST /v1/checkpoint, POST /v1/checkpoint/{runId}/steps).
import { toEvent } from "../events";
import { COMPLETE_ID, ulid } from "../util";
import type { FnEntry, Op, Run } from "../types";
import { lateReport } from "./cancel";
import { LAZY, deferOp } from "./defers";
import { completeRun, failRun } from "./finish";
import { opMetadata } from "./metadata";
import { startRun } from "./runs";
import { memoize, type ExecutorState } from "./state";

/** POST /v1/checkpoint/{runId}/async: step results the SDK reports mid-request. */
export function checkpoint(ex: ExecutorState, run: Run, steps: Op[]): { ok: true } | { ok: false; error: string } {
  // 409 is what the SDK treats as "stale dispatch": it stops running further
  // steps at once (a 400 would be retried 5 times, ~1.5 s, before it gives up).
  if (run.status !== "running") {
    ex.ctx.log(`run ${run.id} is ${run.status}: refused a checkpoint (409), so the SDK stops before the next step`);
    lateReport(run, steps);
    return { ok: false, error: `run is ${run.status}` };
  }
  for (const op of steps) if (LAZY.has(op.op)) deferOp(ex, run, op);
  for (const op of steps) {
    if (op.op === "StepRun") {
      memoize(ex, run, op, { data: op.data ?? null }, 0, true);
      opMetadata(ex, run, op);
    }
    else if (LAZY.has(op.op)) continue;
    else {
      failRun(ex, run, { name: "InngestLocalUnsupported", message: `inngest-local does not support checkpointed "${op.op}" ops`, stack: "" });
      return { ok: false, error: "unsupported op" };
    }
  }
  return { ok: true };
}

/**
 * Durable endpoints (`client.endpoint`), sync mode: the endpoint runs the function inside an
 * HTTP request of its own, creates the run with its first checkpoint (POST /v1/checkpoint)
 * and reports each step, then the end, to /v1/checkpoint/{runId}/steps; the server never
 * calls it. A run that would go async (a sleep, a wait, a retried step: the SDK hands it to
 * the server, which then calls the endpoint back) is refused with a message: the stand-in
 * does not do that part.
 */
export function newEndpointRun(ex: ExecutorState, body: { run_id?: string; event?: Record<string, unknown>; steps?: Op[]; retries?: number }): { run: Run } | { error: string } {
  const runId = String(body.run_id ?? "");
  if (!runId || ex.runs.has(runId)) return { error: runId ? `run ${runId} exists already` : "run_id is required" };
  // The SDK describes the request as an inngest/http.request event: {domain, path, method, …}.
  const event = toEvent({ name: "inngest/http.request", ...(body.event ?? {}) }, ulid());
  const data = event.data as { domain?: string; path?: string; method?: string };
  const where = typeof data.path === "string" && data.path ? data.path : "/";
  const url = `${data.domain ?? ""}${where}`;
  const id = `durable-endpoint${where.replace(/[^a-zA-Z0-9]+/g, "-").replace(/-$/, "")}`;
  const fn: FnEntry = { id, name: `${data.method ?? "GET"} ${where}`, appUrl: url, raw: {}, url, triggers: [], maxAttempts: (Number(body.retries) || 0) + 1, cancel: [], concurrency: [], problems: [] };
  const run = startRun(ex, fn, event, undefined, undefined, { runId })!;
  ex.ctx.log(`run ${run.id} is a durable endpoint's (${fn.name}), in sync mode`);
  const out = endpointSteps(ex, run, body.steps ?? []);
  return "error" in out ? out : { run };
}

export function endpointSteps(ex: ExecutorState, run: Run, steps: Op[]): { ok: true } | { error: string } {
  if (run.status !== "running") return { error: `run is ${run.status}` };
  for (const op of steps) if (LAZY.has(op.op)) deferOp(ex, run, op);
  for (const op of steps) {
    if (LAZY.has(op.op)) continue;
    if (op.op === "StepRun") {
      memoize(ex, run, op, { data: op.data ?? null }, 0, true);
      opMetadata(ex, run, op);
    } else if (op.op === "RunComplete") completeRun(ex, run, op.data ?? null);
    else if (op.op === "StepFailed" && op.id === COMPLETE_ID) failRun(ex, run, op.error);
    else if (op.op === "StepFailed") memoize(ex, run, op, { error: op.error }, 0, true);
    else {
      const message = `inngest-local does not support durable endpoints that go async (the "${op.op}" op of step "${op.userland?.id ?? op.displayName ?? op.id}"): only sync mode`;
      failRun(ex, run, { name: "InngestLocalUnsupported", message, stack: "" });
      return { error: message };
    }
  }
  return { ok: true };
}
