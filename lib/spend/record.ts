import "server-only";
// Recording a model call's usage: one model_usage row per call, and the lease's reservation
// released, in ONE statement (a CTE), so the transitions that end a call (propose, a late
// completion, an actor mismatch, a failed generation) record it in their own transaction at the
// cost of one statement, and an aborted call records it on its own.
import { sql } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";

/** How a call ended, as model_usage.outcome says it. */
export const USAGE_OUTCOMES = ["proposed", "late", "aborted", "failed"] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** A call's usage as the generation measured it, priced (lib/spend/price.ts). */
export type CallUsage = {
  /** The lease and the generation's attempt: a retried step that records again records nothing. */
  callKey: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  estimated: boolean;
  costCents: number;
};

/** The call key of a lease's generation attempt (Inngest's attempt number, from 0). */
export const callKey = (leaseId: string, attempt: number) => `${leaseId}:${attempt}`;

const whole = (n: number) => (Number.isFinite(n) && n > 0 ? Math.round(n) : 0);
const cents = (n: number) => (Number.isFinite(n) && n > 0 ? n.toFixed(6) : "0");

/**
 * Records `usage` for the lease's call, ended as `outcome`, and clears the lease's reservation,
 * in one statement. Org, actor, invoice and purpose are the lease's own (the organization the
 * invoice is in), never the caller's word. Returns whether a row was written (false: this call
 * was recorded already).
 */
export async function recordUsage(db: Db | Tx, leaseId: string, usage: CallUsage, outcome: UsageOutcome): Promise<boolean> {
  const result = await db.execute(sql`
    with released as (
      update inference_lease set reserved_cents = null where id = ${leaseId}
      returning id, actor_id, invoice_id, purpose
    )
    insert into model_usage (org_id, actor_id, lease_id, invoice_id, purpose, model, input_tokens, output_tokens,
      cost_cents, outcome, estimated, call_key)
    select i.org_id, r.actor_id, r.id, r.invoice_id, r.purpose, ${usage.model}, ${whole(usage.inputTokens)},
      ${whole(usage.outputTokens)}, ${cents(usage.costCents)}::numeric, ${outcome}, ${usage.estimated}, ${usage.callKey}
    from released r join invoice i on i.id = r.invoice_id
    on conflict (call_key) do nothing
    returning id`);
  return rowCount(result) > 0;
}

function rowCount(result: unknown): number {
  const r = result as { rows?: unknown[]; length?: number; count?: number };
  if (Array.isArray(r)) return r.length;
  if (Array.isArray(r.rows)) return r.rows.length;
  return r.count ?? 0;
}
