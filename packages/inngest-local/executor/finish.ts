// How a run ends, however it ends: its status and time, its defers scheduled, its timers and
// waits stopped, the step.invoke that started it settled, and the internal event that says so
// (`inngest/function.finished`, `inngest/function.failed` for onFailure handlers). Cancelling
// is in cancel.ts.
import { INTERNAL, messageOf } from "../util";
import type { Memo, Run, RunStatus } from "../types";
import { scheduleDefers } from "./defers";
import { emit } from "./intake";
import { settle } from "./pending";
import type { ExecutorState } from "./state";

export function endRun(ex: ExecutorState, run: Run, status: RunStatus) {
  run.status = status;
  run.endedAt = new Date().toISOString();
  scheduleDefers(ex, run);
  run.waiters.clear();
  for (const stop of [...run.stops]) stop();
  run.stops.clear();
  run.wakeDriver?.();
  // A run that step.invoke started hands its end to the invoking step.
  const link = run.parent;
  if (link) {
    run.parent = undefined;
    const memo: Memo = status === "completed" ? { data: run.output ?? null } : { error: status === "failed" ? run.error : { name: "Error", message: `invoked run ${run.id} was cancelled`, stack: "" } };
    settle(ex, link.run, link.op, memo);
  }
}

export function completeRun(ex: ExecutorState, run: Run, output: unknown) {
  if (run.status !== "running") return;
  run.output = output;
  endRun(ex, run, "completed");
  ex.ctx.log(`run ${run.id} finished: fn ${run.functionId} completed`);
  emit(ex, INTERNAL.finished, { function_id: run.functionId, run_id: run.id, event: run.event, result: output });
}

export function failRun(ex: ExecutorState, run: Run, error: unknown) {
  if (run.status !== "running") return;
  run.error = error;
  endRun(ex, run, "failed");
  ex.ctx.log(`ERROR run ${run.id} failed: fn ${run.functionId} after ${run.attempts} attempt(s): ${messageOf(error)}`);
  const e = error as Record<string, unknown>;
  const err = { ...e, name: String(e?.name ?? "Error"), message: messageOf(error), stack: String(e?.stack ?? "") };
  // Shape read by the SDK's failure handler: data.error is a serialized error.
  emit(ex, INTERNAL.failed, { function_id: run.functionId, run_id: run.id, error: err, event: run.event });
  emit(ex, INTERNAL.finished, { function_id: run.functionId, run_id: run.id, event: run.event, error: err });
}
