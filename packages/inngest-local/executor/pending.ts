// What goes on beside the call loop: a planned step (queued as a request of its own), a
// sleep, a waitForEvent and a step.invoke, each by itself; when one ends, settle() stores its
// result and queues the request that resumes the function.
import { compileExpression, type CompiledExpression } from "../expr";
import { toEvent } from "../events";
import { appIdOf } from "../gql";
import { INTERNAL, messageOf, parseDelay, ulid } from "../util";
import type { Memo, Op, Run } from "../types";
import { enqueue } from "./drive";
import { failRun } from "./finish";
import { recordEvent } from "./intake";
import { startRun } from "./runs";
import { memoize, stepRecord, type ExecutorState } from "./state";

/** Take up a step, sleep, wait or invoke the SDK reported: each goes on by itself. */
export function schedule(ex: ExecutorState, run: Run, op: Op) {
  const { log, later } = ex.ctx;
  const s = stepRecord(run, op);
  if (op.op === "StepPlanned") {
    run.pending.set(op.id, { op, kind: "step" });
    enqueue(run, { stepId: op.id, attempt: 0 });
    return;
  }
  let ms: number;
  try {
    ms = op.op === "Sleep" ? parseDelay(String(op.name)) : op.op === "InvokeFunction" && !op.opts?.timeout ? Infinity : parseDelay(String(op.opts?.timeout ?? ""));
  } catch (e) {
    return failRun(ex, run, { name: "InngestLocalUnsupported", message: `${op.op} "${s.name}": ${messageOf(e)}`, stack: "" });
  }
  run.pending.set(op.id, { op, kind: op.op === "Sleep" ? "sleep" : op.op === "WaitForEvent" ? "wait" : "invoke" });
  const timer = (onTimeout: () => void) => {
    if (ms === Infinity) return;
    const stop = later(Math.max(0, ms), () => {
      run.stops.delete(stop);
      onTimeout();
    });
    run.stops.add(stop);
  };
  if (op.op === "Sleep") {
    s.status = "sleeping";
    log(`run ${run.id} step "${s.name}" sleeping ${ms} ms`);
    timer(() => settle(ex, run, op, { data: null }));
  } else if (op.op === "WaitForEvent") {
    let expr: CompiledExpression | undefined;
    try {
      expr = op.opts?.if ? compileExpression(String(op.opts.if), ["event", "async"]) : undefined;
    } catch (e) {
      return failRun(ex, run, { name: "InngestLocalUnsupported", message: `waitForEvent "${s.name}": ${messageOf(e)}`, stack: "" });
    }
    s.status = "waiting";
    log(`run ${run.id} step "${s.name}" waiting for ${op.name} (timeout ${ms} ms)`);
    run.waiters.set(op.id, { event: String(op.name), expr, resolve: (e) => settle(ex, run, op, { data: e }) });
    timer(() => settle(ex, run, op, { data: null })); // null = timed out, as the SDK expects
  } else {
    s.status = "waiting";
    startInvoke(ex, run, op, s.name, timer);
  }
}

/** step.invoke: a child run of the named function; its end settles the step. */
function startInvoke(ex: ExecutorState, run: Run, op: Op, name: string, timer: (onTimeout: () => void) => void) {
  const { log } = ex.ctx;
  const fnId = String(op.opts?.function_id ?? "");
  const fn = ex.fns.get(fnId);
  if (!fn) {
    log(`run ${run.id} step "${name}" invokes ${fnId}, which is not synced`);
    return settle(ex, run, op, { error: { name: "Error", message: `could not find function with ID "${fnId}"`, stack: "" } });
  }
  const payload = (op.opts?.payload ?? {}) as { data?: Record<string, unknown>; v?: string; meta?: Record<string, unknown> };
  const data = { ...(payload.data ?? {}), _inngest: { source_app_id: appIdOf(run.fn.appUrl), source_fn_id: run.functionId, source_run_id: run.id, invoke_correlation_id: `${run.id}.${op.id}` } };
  const internalId = ulid();
  const event = toEvent({ name: INTERNAL.invoked, data, ...(payload.v ? { v: payload.v } : {}), ...(payload.meta ? { meta: payload.meta } : {}) }, internalId);
  const record = recordEvent(ex, event, internalId);
  log(`run ${run.id} step "${name}" invokes ${fnId}`);
  const child = startRun(ex, fn, event, { run, op });
  if (child) record.runs.push(child.id);
  if (!child) return settle(ex, run, op, { error: { name: "Error", message: `${fnId} was not run (idempotency key already used)`, stack: "" } });
  if (child.status !== "running") return;
  timer(() => {
    if (child.parent) child.parent = undefined;
    settle(ex, run, op, { error: { name: "InngestInvokeTimeoutError", message: `Timed out waiting for invoked function ${fnId} to complete`, stack: "" } });
  });
}

/** A sleep, wait or invoke ended: store its result and resume the function. */
export function settle(ex: ExecutorState, run: Run, op: Op, memo: Memo) {
  if (run.status !== "running" || ex.ctx.closed || !run.pending.has(op.id)) return;
  run.pending.delete(op.id);
  run.waiters.delete(op.id);
  memoize(ex, run, op, memo, 0);
  enqueue(run, { stepId: "step", attempt: 0 });
}
