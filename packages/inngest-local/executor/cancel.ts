// Cancellation: an event that matches a running run's `cancelOn` ends it, as does a cancel by
// hand (the dashboard, POST /runs/:id/cancel). A cancelled run makes no further call: its
// timers stop (endRun) and the answer of a request in flight is discarded (drive.ts).
import { INTERNAL } from "../util";
import type { EventPayload, Run } from "../types";
import { endRun } from "./finish";
import { emit } from "./intake";
import type { ExecutorState } from "./state";

export function applyCancellations(ex: ExecutorState, event: EventPayload) {
  for (const run of ex.runs.values()) {
    if (run.status !== "running") continue;
    for (const c of run.fn.cancel) {
      if (c.event !== event.name) continue;
      if (c.timeoutMs !== undefined && Date.now() - Date.parse(run.startedAt) > c.timeoutMs) continue;
      if (c.expr && c.expr.evaluate({ event: run.event, async: event }) !== true) continue;
      cancelRun(ex, run, `event ${event.name} ${event.id}`);
      break;
    }
  }
}

export function cancelRun(ex: ExecutorState, run: Run, by: string) {
  if (run.status !== "running") return;
  run.cancelledBy = by;
  for (const s of run.steps) if (!s.endedAt) s.endedAt = new Date().toISOString();
  endRun(ex, run, "cancelled");
  ex.ctx.log(`run ${run.id} cancelled: fn ${run.functionId} by ${by}`);
  emit(ex, INTERNAL.cancelled, { function_id: run.functionId, run_id: run.id, event: run.event });
}
