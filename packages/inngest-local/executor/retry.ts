// Retries: a request that errored is sent again with attempt + 1 after the wait the real
// server would make (Retry-After, else its table: backoff.ts), until the attempts run out.
import { retryDelayMs } from "../backoff";
import { messageOf } from "../util";
import type { Request, Run } from "../types";
import { enqueue } from "./drive";
import { failRun } from "./finish";
import { pause, type ExecutorState } from "./state";

/** The wait before the next attempt: `Retry-After` (seconds or a date, never scaled), else the table, scaled. */
function backoff(attempt: number, retryAfter: string | null, retryScale: number): number {
  if (retryAfter) {
    const secs = Number(retryAfter);
    const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(retryAfter) - Date.now();
    if (Number.isFinite(ms)) return Math.max(0, ms);
  }
  return retryDelayMs(attempt, retryScale);
}

export async function retryOrFail(ex: ExecutorState, run: Run, req: Request, error: unknown, retryAfter: string | null) {
  if (req.attempt + 1 >= run.maxAttempts) {
    failRun(ex, run, error);
    return;
  }
  const delay = backoff(req.attempt, retryAfter, ex.ctx.retryScale);
  ex.ctx.log(`run ${run.id} attempt ${req.attempt + 1}/${run.maxAttempts} errored (${messageOf(error)}); retrying in ${delay} ms`);
  await pause(ex, run, delay);
  enqueue(run, { stepId: req.stepId, attempt: req.attempt + 1 }, true);
}
