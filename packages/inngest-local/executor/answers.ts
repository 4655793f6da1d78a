// Step handling: what the app's answer to a request says, and what the executor does next.
// 200 finishes the run; another status is retried or fails it; 206 is a list of ops: results
// to store (StepRun, StepFailed), a step to retry (StepError), work to take up (StepPlanned,
// Sleep, WaitForEvent, InvokeFunction: pending.ts), the run's end (RunComplete), a call
// again (DiscoveryRequest), and the lazy defers (defers.ts).
import { COMPLETE_ID } from "../util";
import type { Op, Request, Run } from "../types";
import { LAZY, deferOp } from "./defers";
import { enqueue, type Answer } from "./drive";
import { completeRun, failRun } from "./finish";
import { opMetadata } from "./metadata";
import { schedule } from "./pending";
import { retryOrFail } from "./retry";
import { memoize, stepRecord, type ExecutorState } from "./state";

const PLANS = new Set(["StepPlanned", "Sleep", "WaitForEvent", "InvokeFunction"]);

export async function handleAnswer(ex: ExecutorState, run: Run, ans: Answer, req: Request): Promise<void> {
  if (ans.status === 200) {
    completeRun(ex, run, ans.body);
    return;
  }
  if (ans.status !== 206) {
    const noRetry = ans.headers.get("x-inngest-no-retry") === "true";
    const error = ans.body && typeof ans.body === "object" ? ans.body : { name: "Error", message: `HTTP ${ans.status}: ${ans.text.slice(0, 500)}`, stack: "" };
    if (noRetry) return failRun(ex, run, error);
    return retryOrFail(ex, run, req, error, ans.headers.get("retry-after"));
  }

  const ops = (Array.isArray(ans.body) ? ans.body : [ans.body]) as Op[];
  if (!ops.every((o) => o && typeof o === "object" && typeof o.op === "string" && typeof o.id === "string")) {
    return failRun(ex, run, { name: "InngestLocalError", message: `206 answer is not a list of ops: ${ans.text.slice(0, 300)}`, stack: "" });
  }
  // Several steps, sleeps, waits or invokes reported together are a parallel group: from
  // now on the SDK must plan every step before running it, as the executor makes it do.
  if (ops.filter((o) => PLANS.has(o.op)).length > 1) run.forceStepPlan = true;
  let ranResults = false;
  let planned = 0;
  const finished: Op[] = [];
  let retry: { error: unknown } | undefined;
  // Lazy ops first, as the executor does, so a defer reported with RunComplete is scheduled.
  for (const op of ops) if (LAZY.has(op.op)) deferOp(ex, run, op);
  for (const op of ops) if (op.metadata && !LAZY.has(op.op)) opMetadata(ex, run, op);
  for (const op of ops) {
    switch (op.op) {
      case "DeferAdd":
      case "DeferAbort":
        break;
      case "StepRun":
      case "StepFailed":
        if (op.id === COMPLETE_ID && op.op === "StepFailed") return failRun(ex, run, op.error);
        memoize(ex, run, op, op.op === "StepRun" ? { data: op.data ?? null } : { error: op.error }, req.attempt);
        ranResults = true;
        if (run.pending.get(op.id)?.kind === "step") {
          finished.push(run.pending.get(op.id)!.op);
          run.pending.delete(op.id);
        }
        break;
      case "StepError":
        if (req.attempt + 1 >= run.maxAttempts) {
          // The SDK says StepFailed on the last attempt because we send
          // max_attempts; if it did not, the step has still run out of attempts.
          if (op.id === COMPLETE_ID) return failRun(ex, run, op.error);
          memoize(ex, run, op, { error: op.error }, req.attempt);
          ranResults = true;
          if (run.pending.delete(op.id)) finished.push(op);
        } else {
          if (op.id !== COMPLETE_ID) {
            const s = stepRecord(run, op, true);
            s.status = "retrying";
            s.attempts = req.attempt + 1;
            s.error = op.error;
          }
          retry = { error: op.error };
        }
        break;
      case "StepPlanned":
      case "Sleep":
      case "WaitForEvent":
      case "InvokeFunction":
        if (op.id in run.memo || run.pending.has(op.id)) break;
        planned++;
        schedule(ex, run, op);
        break;
      case "RunComplete":
        return completeRun(ex, run, op.data ?? null);
      case "DiscoveryRequest":
        enqueue(run, { stepId: "step", attempt: 0 });
        break;
      default:
        return failRun(ex, run, { name: "InngestLocalUnsupported", message: `inngest-local does not support the "${op.op}" op (step "${op.userland?.id ?? op.displayName ?? op.id}")`, stack: "" });
    }
  }
  if (retry) return retryOrFail(ex, run, req, retry.error, ans.headers.get("retry-after"));
  if (finished.length) {
    // A step of a parallel group resumes the function when the whole group is done (a
    // "race" group: at once). Then the group is over, and the SDK may again run the next
    // step at once and checkpoint (request version 2, as the executor resets it).
    const race = finished.some((op) => op.opts?.parallelMode === "race");
    if (!run.pending.size) {
      if (run.forceStepPlan && (run.version ?? 2) >= 2) run.forceStepPlan = false;
      enqueue(run, { stepId: "step", attempt: 0 });
    } else if (race) {
      enqueue(run, { stepId: "step", attempt: 0 });
    }
  } else if (req.stepId === "step" && ranResults && !planned) {
    enqueue(run, { stepId: "step", attempt: 0 });
  } else if (ops.every((op) => LAZY.has(op.op))) {
    // Only defers and nothing to go on with (the executor's fallback): ask again.
    enqueue(run, { stepId: "step", attempt: 0 });
  }
}
