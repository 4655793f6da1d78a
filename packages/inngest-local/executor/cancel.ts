// Cancellation: an event that matches a running run's `cancelOn` ends it, as does a cancel by
// hand (the dashboard, POST /runs/:id/cancel). A cancelled run makes no further call: its
// timers stop (endRun) and the answer of a request in flight is discarded (drive.ts).
import { COMPLETE_ID, INTERNAL } from "../util";
import type { EventPayload, Op, Run } from "../types";
import { endRun } from "./finish";
import { emit } from "./intake";
import { runningPlannedStep, type ExecutorState } from "./state";

export function applyCancellations(ex: ExecutorState, event: EventPayload) {
  for (const run of ex.runs.values()) {
    if (run.status !== "running") continue;
    for (const c of run.fn.cancel) {
      if (c.event !== event.name) continue;
      if (c.timeoutMs !== undefined && Date.now() - Date.parse(run.startedAt) > c.timeoutMs) continue;
      if (c.expr && c.expr.evaluate({ event: run.event, async: event }) !== true) continue;
      cancelRun(ex, run, `event ${event.name} ${event.id}`, event.id);
      break;
    }
  }
}

export function cancelRun(ex: ExecutorState, run: Run, by: string, byEvent?: string) {
  if (run.status !== "running") return;
  run.cancelledBy = by;
  run.cancelledByEvent = byEvent;
  // The step the app was running, for the dashboard: the SDK names it only when it reports it.
  if (run.inFlight !== undefined) {
    const planned = runningPlannedStep(run);
    run.interrupted = { since: new Date(run.mark ?? Date.now()).toISOString(), cancelledAt: new Date().toISOString(), ...(planned ? { stepId: planned.id, name: planned.name } : {}) };
  }
  for (const s of run.steps) if (!s.endedAt) s.endedAt = new Date().toISOString();
  endRun(ex, run, "cancelled");
  ex.ctx.log(`run ${run.id} cancelled: fn ${run.functionId} by ${by}`);
  emit(ex, INTERNAL.cancelled, { function_id: run.functionId, run_id: run.id, event: run.event });
}

/**
 * What the app reported, after a cancel, for the step it interrupted: shown beside the run,
 * never memoized. `final`: the request's answer, after which nothing more comes.
 */
export function lateReport(run: Run, ops: unknown, final = false) {
  const i = run.interrupted;
  if (!i || i.reportedAt) return;
  const op = Array.isArray(ops) ? (ops as Op[]).find((o) => o && typeof o === "object" && ["StepRun", "StepFailed", "StepError"].includes(o.op) && o.id !== COMPLETE_ID) : undefined;
  if (!op) {
    if (final) i.reportedAt = new Date().toISOString();
    return;
  }
  Object.assign(i, { reportedAt: new Date().toISOString(), stepId: op.id, name: op.userland?.id ?? op.displayName ?? op.name ?? op.id, op: op.op }, op.op === "StepRun" ? { output: op.data ?? null } : { error: op.error });
}
