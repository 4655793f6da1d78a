// What the executor keeps, and the run's own records: the steps it has heard of and the
// results it stores (the memoization the SDK reads back in `steps`). Every module of the
// executor takes this state as its first argument; executor.ts makes it, once per server.
import type { Context } from "../context";
import type { Registry } from "../registry";
import { messageOf } from "../util";
import type { EventPayload, Memo, Op, Run, RunSummary, StepSummary } from "../types";

export type EventRecord = { internalId: string; event: EventPayload; receivedAt: string; runs: string[] };
export type Batch = { events: EventPayload[]; records: EventRecord[]; stop: () => void };

export type ExecutorState = {
  ctx: Context;
  /** The synced functions (the registry's map, kept up to date by each sync). */
  fns: Registry["fns"];
  runs: Map<string, Run>;
  /** The last 1000 events, newest first. */
  events: EventRecord[];
  /** Event ids seen in the last 24 h (dedupe), with the internal id of the first. */
  seenEventIds: Map<string, { internalId: string; at: number }>;
  /** Idempotency keys used, with when (a second run within 24 h is skipped). */
  idempotencyKeys: Map<string, number>;
  /** batchEvents: the open batch of each function and key. */
  batches: Map<string, Batch>;
  /** Step-level concurrency: requests in flight per concurrency key, and runs waiting for a slot. */
  slots: { active: Map<string, number>; waiters: (() => void)[] };
  /** Stops the cron timer. */
  cronCancel?: () => void;
};

export function createExecutorState(ctx: Context, registry: Registry): ExecutorState {
  return {
    ctx,
    fns: registry.fns,
    runs: new Map(),
    events: [],
    seenEventIds: new Map(),
    idempotencyKeys: new Map(),
    batches: new Map(),
    slots: { active: new Map(), waiters: [] },
  };
}

/** Wait, unless the run ends (or the server closes) first. */
export const pause = (ex: ExecutorState, run: Run, ms: number) =>
  new Promise<void>((resolve) => {
    const done = () => {
      stop();
      run.stops.delete(done);
      resolve();
    };
    const stop = ex.ctx.later(ms, done);
    run.stops.add(done);
  });

export function stepRecord(run: Run, op: Op, executed = false): StepSummary {
  let s = run.stepById.get(op.id);
  if (!s) {
    // A step first heard of with its result ran since the request left or since the result
    // before it (steps run back to back within one request), not at the moment we learn of it.
    const startedAt = new Date(executed && run.mark ? run.mark : Date.now()).toISOString();
    s = { id: op.id, name: op.userland?.id ?? op.displayName ?? op.name ?? op.id, op: op.op, status: "planned", attempts: 0, startedAt };
    run.stepById.set(op.id, s);
    run.steps.push(s);
  }
  // A planned step becomes StepRun when it runs; a sleep, wait or invoke keeps its kind.
  if (!["Sleep", "WaitForEvent", "InvokeFunction"].includes(s.op)) s.op = op.op;
  return s;
}

/** Store a step result; later calls send it back in `steps`, which is the memoization. */
export function memoize(ex: ExecutorState, run: Run, op: Op, memo: Memo, attempt: number, viaCheckpoint = false) {
  // A checkpointed step can come back again in the request's final answer.
  if (op.id in run.memo) return;
  const s = stepRecord(run, op, true);
  // One clock reading: the step ends when the next one (run back to back) starts.
  const now = Date.now();
  run.mark = now;
  run.stack.push(op.id);
  run.memo[op.id] = memo;
  // A checkpoint does not say which attempt it ran in: after a retry it is the next one.
  s.attempts = Math.max(s.attempts, viaCheckpoint && s.status === "retrying" ? s.attempts + 1 : attempt + 1);
  s.status = "error" in memo ? "failed" : "completed";
  if ("error" in memo) s.error = memo.error;
  else s.output = memo.data;
  s.endedAt = new Date(now).toISOString();
  if (viaCheckpoint) s.checkpointed = true;
  ex.ctx.log(`run ${run.id} step "${s.name}" ${s.status}${viaCheckpoint ? " (checkpoint)" : ""}${"error" in memo ? `: ${messageOf(memo.error)}` : ""}`);
}

/** A run as the JSON API, the GraphQL API and the dashboard show it: a copy, without the executor's bookkeeping. */
export const summary = (r: Run): RunSummary =>
  structuredClone({
    id: r.id,
    functionId: r.functionId,
    functionName: r.functionName,
    eventName: r.eventName,
    eventId: r.eventId,
    event: r.event,
    status: r.status,
    attempts: r.attempts,
    maxAttempts: r.maxAttempts,
    steps: r.steps,
    output: r.output,
    error: r.error,
    cancelledBy: r.cancelledBy,
    cancelledByEvent: r.cancelledByEvent,
    // Only while the step running is unnamed: a planned step sent to run shows as itself.
    inFlightSince: r.status === "running" && r.inFlight !== undefined && r.mark && !runningPlannedStep(r) ? new Date(r.mark).toISOString() : undefined,
    interrupted: r.interrupted,
    metadata: r.metadata,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
  });

/** The planned step the request out was sent to run, while it has no result: then the step running is known by name. */
export function runningPlannedStep(run: Run) {
  const s = run.inFlight !== undefined && run.inFlight !== "step" ? run.stepById.get(run.inFlight) : undefined;
  return s && !s.endedAt ? s : undefined;
}
