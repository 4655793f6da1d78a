// A run begins: the idempotency key is checked, the run's record is made, and its call loop
// (drive.ts) starts, unless the function has config the stand-in cannot honour or the run
// belongs to a durable endpoint (which drives it itself, by its checkpoints).
import { DAY_MS, errorOf, messageOf, ulid } from "../util";
import type { EventPayload, FnEntry, Run } from "../types";
import { drive } from "./drive";
import { failRun } from "./finish";
import type { ExecutorState } from "./state";

export function startRun(ex: ExecutorState, fn: FnEntry, event: EventPayload, parent?: Run["parent"], batch?: EventPayload[], endpoint?: { runId: string }): Run | undefined {
  const { log } = ex.ctx;
  if (fn.idempotency) {
    const key = `${fn.id}:${JSON.stringify(fn.idempotency.evaluate({ event }) ?? null)}`;
    const at = ex.idempotencyKeys.get(key);
    if (at !== undefined && Date.now() - at < DAY_MS) {
      log(`fn ${fn.id}: skipped for event ${event.id} (idempotency key ${key})`);
      return undefined;
    }
    ex.idempotencyKeys.set(key, Date.now());
  }
  const run: Run = {
    id: endpoint?.runId ?? ulid(),
    functionId: fn.id,
    functionName: fn.name,
    eventName: event.name,
    eventId: String(event.id),
    event,
    status: "running",
    attempts: 0,
    maxAttempts: fn.maxAttempts,
    steps: [],
    startedAt: new Date().toISOString(),
    fn,
    events: batch ?? [event],
    memo: {},
    stack: [],
    stepById: new Map(),
    requests: [{ stepId: "step", attempt: 0 }],
    pending: new Map(),
    forceStepPlan: false,
    stops: new Set(),
    waiters: new Map(),
    parent,
    defers: new Map(),
  };
  ex.runs.set(run.id, run);
  log(`run ${run.id} started: fn ${fn.id} for event ${event.name}${parent ? ` (invoked by run ${parent.run.id})` : ""}`);
  // A durable endpoint's run is driven by the endpoint itself (its checkpoints), not by us.
  if (endpoint) return run;
  if (fn.problems.length) {
    failRun(ex, run, { name: "InngestLocalUnsupported", message: `inngest-local cannot run ${fn.id}: ${fn.problems.join("; ")}`, stack: "" });
  } else {
    drive(ex, run).catch((e) => failRun(ex, run, { name: "InngestLocalError", message: `inngest-local crashed driving the run: ${messageOf(e)}`, stack: errorOf(e).stack }));
  }
  return run;
}
