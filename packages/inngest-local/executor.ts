// The executor: events in (triggers, cancellations, waits), runs driven through the app's
// serve route one request at a time, with sleeps, waits and invoked runs going on side by
// side, retries, concurrency, cron, and the checkpoints the SDK posts.
//
// This file puts its pieces together over one state (executor/state.ts), each readable by
// itself, in the order a run meets them:
//   intake.ts       events in: dedupe, cancelOn, waits, triggers, batches; internal events
//   runs.ts         a run begins (idempotency, its record, its call loop)
//   drive.ts        the call loop: one request to the app at a time, concurrency slots
//   answers.ts      what an answer says to do next (ops), parallel groups
//   pending.ts      planned steps, sleeps, waits and step.invoke, going on by themselves
//   retry.ts        a request retried after the real server's wait, or the run failed
//   metadata.ts     scores, AI usage and other metadata on runs and steps
//   defers.ts       defer(): kept with the run, scheduled when it ends
//   cancel.ts       cancelOn and cancelling by hand
//   finish.ts       how a run ends (completed, failed), and what its end sets off
//   checkpoints.ts  step results the SDK posts, and durable endpoints' runs
//   cron-runs.ts    cron schedules, and a function invoked by hand
import type { Context } from "./context";
import type { Registry } from "./registry";
import { cancelRun } from "./executor/cancel";
import { checkpoint, endpointSteps, newEndpointRun } from "./executor/checkpoints";
import { invoke, scheduleCron } from "./executor/cron-runs";
import { ingest } from "./executor/intake";
import { updateMetadata } from "./executor/metadata";
import { startRun } from "./executor/runs";
import { createExecutorState, summary, type ExecutorState } from "./executor/state";

export type { EventRecord } from "./executor/state";
export type Executor = ReturnType<typeof createExecutor>;

export function createExecutor(ctx: Context, registry: Registry) {
  const ex = createExecutorState(ctx, registry);
  /** One of the pieces, with this executor's state given. */
  const bound =
    <A extends unknown[], R>(f: (ex: ExecutorState, ...args: A) => R) =>
    (...args: A) =>
      f(ex, ...args);

  /** Stop everything the runs wait on (close()). */
  function stopAll() {
    ex.cronCancel?.();
    for (const b of ex.batches.values()) b.stop();
    ex.batches.clear();
    for (const r of ex.runs.values()) {
      for (const stop of [...r.stops]) stop();
      r.wakeDriver?.();
    }
  }

  return {
    runs: ex.runs,
    events: ex.events,
    ingest: bound(ingest),
    startRun: bound(startRun),
    cancelRun: bound(cancelRun),
    invoke: bound(invoke),
    checkpoint: bound(checkpoint),
    newEndpointRun: bound(newEndpointRun),
    endpointSteps: bound(endpointSteps),
    updateMetadata: bound(updateMetadata),
    scheduleCron: bound(scheduleCron),
    summary,
    listRuns: () => [...ex.runs.values()].map(summary),
    stopAll,
  };
}
