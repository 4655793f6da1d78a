// Run and step metadata: scores, experiments, AI usage (`inngest.ai`) and userland metadata,
// sent on a step's op or to POST /v1/runs/{runId}/metadata.
import { calcPrice } from "@pydantic/genai-prices";
import { COMPLETE_ID } from "../util";
import type { MetadataEntry, MetadataUpdate, Op, Run } from "../types";
import { stepRecord, type ExecutorState } from "./state";

/**
 * `inngest.ai` metadata without a cost gets `estimated_cost` (USD, 6 decimals) from the
 * model and token counts, as the dev server backfills it: the response model, else the
 * requested one; no price known, no cost. Prices: @pydantic/genai-prices' table.
 */
function backfillEstimatedCost(values: Record<string, unknown>) {
  if (typeof values.estimated_cost === "number") return;
  const model = [values.response_model, values.request_model].find((m): m is string => typeof m === "string" && m !== "");
  if (!model) return;
  const usage = { input_tokens: Number(values.input_tokens) || 0, output_tokens: Number(values.output_tokens) || 0 };
  let price: ReturnType<typeof calcPrice> = null;
  for (const opts of typeof values.provider === "string" ? [{ providerId: values.provider }, undefined] : [undefined]) {
    try {
      price = calcPrice(usage, model, opts);
    } catch {
      price = null;
    }
    if (price) break;
  }
  if (price) values.estimated_cost = Math.round(Number(price.total_price) * 1e6) / 1e6;
}

/** One update: `merge` merges into the values of the same kind and scope, anything else replaces them. */
function putMetadata(holder: { metadata?: MetadataEntry[] }, u: MetadataUpdate, scope: string) {
  if (!u || typeof u.kind !== "string" || !u.values || typeof u.values !== "object") return;
  const list = (holder.metadata ??= []);
  const at = new Date().toISOString();
  const found = list.find((m) => m.kind === u.kind && m.scope === scope);
  const entry = found ?? { kind: u.kind, scope, values: {}, updatedAt: at };
  entry.values = u.op === "merge" ? { ...entry.values, ...u.values } : { ...u.values };
  entry.updatedAt = at;
  if (u.kind === "inngest.ai") backfillEstimatedCost(entry.values);
  if (!found) list.push(entry);
}

/** Metadata on a step's op: `step` scope goes on that step, `run` scope on the run. */
export function opMetadata(ex: ExecutorState, run: Run, op: Op) {
  if (!Array.isArray(op.metadata) || op.id === COMPLETE_ID) return;
  for (const u of op.metadata) {
    if (u?.scope === "run") putMetadata(run, u, "run");
    else if (u?.scope === "step" || u?.scope === undefined) putMetadata(stepRecord(run, op), u, "step");
    else ex.ctx.log(`run ${run.id} step "${op.userland?.id ?? op.id}": metadata of scope "${String(u?.scope)}" is not kept by inngest-local`);
  }
}

/**
 * POST /v1/runs/{runId}/metadata (client.score, metadata.update from outside the step).
 * A `step_id` names the step as written; one the run does not have keeps nothing (as the
 * dev server, whose orphan span never shows), nor does a `span_id` (userland spans).
 */
export function updateMetadata(ex: ExecutorState, run: Run, target: { step_id?: string; span_id?: string }, updates: MetadataUpdate[]) {
  const { log } = ex.ctx;
  if (target.span_id) {
    log(`run ${run.id}: metadata for span ${target.span_id} not kept (inngest-local has no userland spans)`);
    return;
  }
  if (target.step_id) {
    const step = run.steps.find((s) => s.name === target.step_id);
    if (!step) {
      log(`run ${run.id}: metadata for step "${target.step_id}", which the run does not have, not kept`);
      return;
    }
    for (const u of updates) putMetadata(step, u, "step");
    return;
  }
  for (const u of updates) putMetadata(run, u, "run");
}
