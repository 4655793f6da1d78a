// Deferred runs: the `defer()` calls a run makes (DeferAdd, DeferAbort: lazy ops, which ride
// along with a step's result, a checkpoint or the run's end), and the events they become
// when the run ends.
import { createHash } from "node:crypto";
import { appIdOf } from "../gql";
import { INTERNAL, messageOf, ulid } from "../util";
import type { Op, Run } from "../types";
import { ingest } from "./intake";
import type { ExecutorState } from "./state";

/** The lazy ops: handled before the rest of an answer, and never a reason to call again by themselves. */
export const LAZY = new Set(["DeferAdd", "DeferAbort"]);

/**
 * When a run ends, however it ends, each `defer()` it made and did not abort becomes an
 * `inngest/deferred.schedule` event, which triggers the `createDefer` function named by
 * `fn_slug` (its trigger's expression matches `event.data._inngest.fn_slug`). The data is
 * the defer's input with `_inngest` naming the parent; the id is derived from the run and
 * the defer, so the same defer can never schedule twice.
 */
export function scheduleDefers(ex: ExecutorState, run: Run) {
  const { log } = ex.ctx;
  for (const [hashedId, d] of run.defers) {
    if (d.status !== "after_run") continue;
    d.status = "scheduled"; // no longer abortable, never scheduled again
    const input = d.input && typeof d.input === "object" && !Array.isArray(d.input) ? (d.input as Record<string, unknown>) : d.input == null ? {} : undefined;
    if (!input) {
      log(`ERROR run ${run.id} defer "${d.name}": its data is not an object; not scheduled (as the executor drops it)`);
      continue;
    }
    const id = ulid(Date.now(), createHash("sha256").update(`defer-event:${run.id}:${hashedId}`).digest());
    const _inngest = { fn_slug: d.fnSlug, parent_app_id: appIdOf(run.fn.appUrl), parent_fn_id: appIdOf(`fn:${run.functionId}`), parent_fn_slug: run.functionId, parent_run_id: run.id };
    log(`run ${run.id} defer "${d.name}" scheduled: ${d.fnSlug}`);
    setImmediate(() => {
      if (ex.ctx.closed) return;
      try {
        ingest(ex, [{ name: INTERNAL.deferred, id, data: { ...input, _inngest }, ...(d.meta ? { meta: d.meta } : {}), ts: Date.now() }]);
      } catch (e) {
        log(`ERROR scheduling defer "${d.name}" of run ${run.id}: ${messageOf(e)}`);
      }
    });
  }
}

/** DeferAdd / DeferAbort: lazy ops, which ride along with a step's result or the run's end. */
export function deferOp(ex: ExecutorState, run: Run, op: Op) {
  const { log } = ex.ctx;
  if (op.op === "DeferAdd") {
    if (run.defers.has(op.id)) return; // reported again (a retried request): the first one holds
    const meta = op.opts?.meta && typeof op.opts.meta === "object" ? (op.opts.meta as Record<string, unknown>) : undefined;
    const name = op.userland?.id ?? op.displayName ?? op.id;
    run.defers.set(op.id, { fnSlug: String(op.opts?.fn_slug ?? ""), input: op.opts?.input, meta, name, status: "after_run" });
    log(`run ${run.id} defer "${name}" added: ${String(op.opts?.fn_slug)} runs after this run ends`);
  } else {
    const target = String(op.opts?.target_hashed_id ?? "");
    const d = run.defers.get(target);
    if (d) d.status = "aborted";
    // Aborted before its add reached us (the SDK drops a buffered add it aborts): keep the
    // id, so an add reported later is ignored.
    else run.defers.set(target, { fnSlug: String(op.opts?.fn_slug ?? ""), input: null, name: String(op.opts?.id ?? target), status: "aborted" });
    log(`run ${run.id} defer "${d?.name ?? op.opts?.id ?? target}" aborted`);
  }
}
