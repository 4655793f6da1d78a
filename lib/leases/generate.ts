import "server-only";
// Generate (check 2): load, then propose. Nothing here is held across the model call.
import { rowsOf, type Db, type Tx } from "@/db/client";
import { inferenceLease, invoice } from "@/db/schema";
import { ownedInvoice } from "@/lib/access";
import { isUuid } from "@/lib/ids";
import type { GenerationFailureCode, LeaseProposal, LeaseStatus } from "@/lib/lease-codes";
import { log } from "@/lib/log";
import { contextSql, type PurposeInput } from "@/lib/purposes";
import type { CallUsage, UsageOutcome } from "@/lib/spend";
import { outcome, tracedLeaseOp } from "@/lib/tracing";
import { and, eq, getTableColumns, gt, isNotNull, sql } from "drizzle-orm";
import { clockNow, dbNow, expireDue, isOverdue, isPurpose, judgedAt, overdueInFlight, recordEvent } from "./shared";
import type { Purpose } from "@/lib/purposes";

export type GenerationInput =
  | {
      ok: true;
      lease: { id: string; actorId: string; purpose: Purpose; deadlineAt: Date; remainingMs: number };
      orgId: string;
      invoice: PurposeInput["invoice"];
      /** What the lease's purpose reads besides the invoice (lib/purposes contextSql), read by the same statement. */
      context: Record<string, unknown>;
    }
  | { ok: false; reason: "lease_not_found" | "not_open" | "expired" | "invoice_not_found"; status?: LeaseStatus };

/** The invoice's lines as one JSON array, in the order the page shows them. */
const linesJson = sql<{ id: string; description: string; quantity: number; unitPriceCents: number }[]>`coalesce((
  select json_agg(json_build_object('id', l.id, 'description', l.description, 'quantity', l.quantity, 'unitPriceCents', l.unit_price_cents)
    order by l.position, l.id)
  from invoice_line l where l.invoice_id = invoice.id), '[]'::json)`;

/**
 * Reads what a generation needs: the lease if it is open and in time, and its invoice read as
 * the lease's actor. One read statement, remaining time on the database clock; a write
 * transaction only for a lease in flight past its deadline, which is recorded `expired`.
 */
export async function loadForGeneration(db: Db, leaseId: string): Promise<GenerationInput> {
  if (!isUuid(leaseId)) return { ok: false, reason: "lease_not_found" };
  return readForGeneration(db, leaseId, false);
}

async function readForGeneration(db: Db, leaseId: string, recorded: boolean): Promise<GenerationInput> {
  const [row] = await db
    .select({
      id: inferenceLease.id,
      actorId: inferenceLease.actorId,
      purpose: inferenceLease.purpose,
      status: inferenceLease.status,
      deadlineAt: inferenceLease.deadlineAt,
      remainingMs: sql<number>`greatest(0, floor(extract(epoch from (${inferenceLease.deadlineAt} - now())) * 1000))`.mapWith(Number),
      overdueInFlight,
      // Scoped to the lease's actor (the join): a lease can never read someone else's invoice.
      invoice: getTableColumns(invoice),
      lines: linesJson,
      // Null when the join found no invoice: every context reads through the joined invoice's organization.
      context: contextSql(inferenceLease.purpose),
    })
    .from(inferenceLease)
    .leftJoin(invoice, and(eq(invoice.id, inferenceLease.invoiceId), ownedInvoice(inferenceLease.actorId)))
    .where(eq(inferenceLease.id, leaseId));
  if (!row) return { ok: false, reason: "lease_not_found" };
  if (row.overdueInFlight) {
    // Still in flight after our expiry found nothing to do: a writer we cannot see yet.
    if (recorded) return { ok: false, reason: "not_open", status: row.status };
    const expired = await db.transaction((tx) => expireDue(tx, eq(inferenceLease.id, leaseId), "generate"));
    if (expired.length) return { ok: false, reason: "expired", status: "expired" };
    // Closed meanwhile by someone else (the sweep, a cancel): read what it is now.
    return readForGeneration(db, leaseId, true);
  }
  if (row.status !== "open" || !isPurpose(row.purpose)) return { ok: false, reason: "not_open", status: row.status };
  const inv = row.invoice;
  if (!inv) return { ok: false, reason: "invoice_not_found" };
  return {
    ok: true,
    lease: { id: row.id, actorId: row.actorId, purpose: row.purpose, deadlineAt: row.deadlineAt, remainingMs: row.remainingMs },
    orgId: inv.orgId,
    context: row.context ?? {},
    invoice: {
      id: inv.id,
      number: inv.number,
      counterparty: inv.counterparty,
      currency: inv.currency,
      totalCents: inv.totalCents,
      issuedOn: inv.issuedOn,
      dueOn: inv.dueOn,
      lines: row.lines,
    },
  };
}

export type ProposeResult =
  { ok: true } | { ok: false; code: "lease_not_found" | "run_mismatch" | "actor_mismatch" | "late_completion"; status?: LeaseStatus };

/** The lease's run nonce equals `runNonce`, compared in the database: the nonce is never read out. */
const runMatches = (runNonce: unknown) =>
  typeof runNonce === "string" ? sql<boolean>`(${inferenceLease.runNonce} = ${runNonce})` : sql<boolean>`false`;

/**
 * Check 2's write: one conditional UPDATE. If it changes no row the completion comes from a
 * run this lease did not dispatch, is late, names the wrong actor, or is this same proposal
 * again (the step retried); we re-read only to say which, and write nothing but the event.
 * The UPDATE may have waited for the row, and its WHERE is then not judged again unless the
 * holder changed the row: its RETURNING, computed once the row is ours, judges the deadline
 * on the clock of that moment (docs/decisions/0045).
 *
 * `runNonce` is what the lease/opened event carried (never re-read here): a call that did not
 * come from the run the lease dispatched cannot know it. Such a proposal changes nothing at
 * all, not even an overdue or mismatched lease's status, so a forger cannot close leases either.
 */
export const proposeLease = tracedLeaseOp("lease.propose", proposeLeaseUntraced, {
  leases: ([, input]) => [input.leaseId],
  attributes: outcome,
});

async function proposeLeaseUntraced(
  db: Db,
  input: {
    leaseId: string;
    actorId: string;
    runNonce: string;
    proposal: LeaseProposal;
    /** What the `proposed` event says of it besides the model: its purpose's numbers and prompt version. */
    detail?: Record<string, unknown>;
    /** The call's usage, recorded in this transaction however it ends (not for a run this lease did not dispatch). */
    usage?: CallUsage;
  },
): Promise<ProposeResult> {
  const { leaseId, actorId, runNonce, proposal } = input;
  if (!isUuid(leaseId)) return { ok: false, code: "lease_not_found" };
  const result = await db.transaction(async (tx): Promise<ProposeResult> => {
    const spent = async (outcome: UsageOutcome) => {
      if (input.usage) await recordUsage(tx, leaseId, input.usage, outcome);
    };
    if (isUuid(actorId) && typeof runNonce === "string") {
      const [row] = await tx
        .update(inferenceLease)
        .set({
          status: "proposed",
          proposal,
          // The call's final outcome: its reservation is released here, and its usage row written
          // below in this transaction (docs/decisions/0075), so the uncapped path writes the row once.
          reservedCents: null,
          updatedAt: clockNow,
          // For the receipt (0079), in this same statement: the prompt version, the instant judged
          // in time (RETURNING dates the event by it), and the invoice the proposal was made against.
          promptVersion: typeof input.detail?.prompt_version === "string" ? input.detail.prompt_version : null,
          proposedAt: clockNow,
          proposedInvoiceVersion: sql`${inferenceLease.invoiceVersion}`,
          proposedInvoiceSha256: sql`invoice_sha256(${inferenceLease.invoiceId})`,
        })
        .where(
          and(
            eq(inferenceLease.id, leaseId),
            eq(inferenceLease.status, "open"),
            eq(inferenceLease.actorId, actorId),
            eq(inferenceLease.runNonce, runNonce),
            gt(inferenceLease.deadlineAt, dbNow),
          ),
        )
        // Judged once the row is ours (RETURNING runs after any wait for it; SET does not when the
        // holder changed nothing, so proposed_at can precede the wait), and the event dated by that instant.
        .returning({ id: inferenceLease.id, inTimeAt: judgedAt(inferenceLease.deadlineAt) });
      if (row?.inTimeAt) {
        await recordEvent(tx, leaseId, "proposed", { model: proposal.model, ...input.detail }, row.inTimeAt);
        await spent("proposed");
        return { ok: true };
      }
      if (row) {
        // The row came to us past its deadline: this transaction turns it expired instead, so
        // nobody ever sees it proposed, and keeps nothing of the late answer.
        await tx
          .update(inferenceLease)
          .set({
            status: "expired",
            closedReason: "deadline_passed",
            proposal: null,
            promptVersion: null,
            proposedAt: null,
            proposedInvoiceVersion: null,
            proposedInvoiceSha256: null,
            updatedAt: clockNow,
          })
          .where(eq(inferenceLease.id, leaseId));
        await recordEvent(tx, leaseId, "expired", { by: "propose" });
        await recordEvent(tx, leaseId, "late_completion", { status: "expired", model: proposal.model });
        await spent("late");
        return { ok: false, code: "late_completion", status: "expired" };
      }
    }
    const [current] = await tx
      .select({
        status: inferenceLease.status,
        actorId: inferenceLease.actorId,
        overdue: isOverdue,
        runMatches: runMatches(runNonce),
        // jsonb equality: key order does not matter.
        sameProposal: sql<boolean>`coalesce(${inferenceLease.proposal} = ${JSON.stringify(proposal)}::jsonb, false)`,
      })
      .from(inferenceLease)
      .where(eq(inferenceLease.id, leaseId));
    if (!current) return { ok: false, code: "lease_not_found" };
    if (!current.runMatches) {
      await recordEvent(tx, leaseId, "run_mismatch", { step: "propose", status: current.status });
      return { ok: false, code: "run_mismatch", status: current.status };
    }
    if (current.actorId !== actorId) {
      // A completion made for someone else fails closed, and the lease with it.
      const closed = await tx
        .update(inferenceLease)
        .set({ status: "rejected", closedReason: "actor_mismatch", updatedAt: dbNow })
        .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.status, "open")))
        .returning({ id: inferenceLease.id });
      await recordEvent(tx, leaseId, "actor_mismatch", {
        claimed_actor: isUuid(actorId) ? actorId : "invalid",
        status: closed.length ? "rejected" : current.status,
        // Whether this completion closed the lease, so the timeline tells a transition from a refusal.
        closed: closed.length > 0,
      });
      await spent("failed");
      return { ok: false, code: "actor_mismatch", status: closed.length ? "rejected" : current.status };
    }
    // This run's own proposal, already recorded: Inngest ran the propose step again (its answer
    // was lost), with the memoized completion of the generate step. Not a late completion.
    if (current.sameProposal) return { ok: true };
    let status = current.status;
    if (status === "open" && current.overdue) {
      await expireDue(tx, eq(inferenceLease.id, leaseId), "propose");
      status = "expired";
    }
    await recordEvent(tx, leaseId, "late_completion", { status, model: proposal.model });
    await spent("late");
    return { ok: false, code: "late_completion", status };
  });
  if (!result.ok) log.warn("completion not proposed", { lease_id: leaseId, code: result.code, status: result.status });
  return result;
}

/**
 * Why a generation failed, as the actor sees it: a stable code and plain words. The error
 * itself (SQL text, hosts, ids) goes to the server log only.
 */
export const GENERATION_FAILURES = {
  model_unavailable: "The model could not be reached.",
  model_output_invalid: "The model's answer could not be used.",
  invalid_output: "The model's answer was not in the form this task needs.",
  model_not_configured: "The model is not configured.",
  invoice_not_found: "The invoice could not be read.",
  internal_error: "Something went wrong on our side.",
} as const satisfies Record<GenerationFailureCode, string>;

/**
 * A generation that cannot finish closes its lease at once, so the user learns now, not at the
 * deadline. Like propose, it needs the run's nonce: any other caller writes only `run_mismatch`.
 */
export const failGeneration = tracedLeaseOp("lease.fail_generation", failGenerationUntraced, {
  leases: ([, input]) => [input.leaseId],
  attributes: (result) => ({ "claimcheck.closed": result.closed }),
});

async function failGenerationUntraced(
  db: Db,
  input: {
    leaseId: string;
    runNonce: string;
    code: GenerationFailureCode;
    /** The failed call's usage, when the generation made one and measured it: recorded in this transaction. */
    usage?: CallUsage;
  },
): Promise<{ closed: boolean; refused?: "run_mismatch" }> {
  const { leaseId, runNonce, code } = input;
  if (!isUuid(leaseId)) return { closed: false };
  return db.transaction(async (tx) => {
    const [lease] = await tx
      .select({ status: inferenceLease.status, runMatches: runMatches(runNonce) })
      .from(inferenceLease)
      .where(eq(inferenceLease.id, leaseId));
    if (!lease) return { closed: false };
    if (!lease.runMatches) {
      await recordEvent(tx, leaseId, "run_mismatch", { step: "fail", status: lease.status });
      return { closed: false, refused: "run_mismatch" as const };
    }
    // Past its deadline the lease is expired, not failed: record that first.
    await expireDue(tx, eq(inferenceLease.id, leaseId), "generation_failed");
    const closed = await tx
      .update(inferenceLease)
      .set({ status: "rejected", closedReason: "generation_failed", updatedAt: dbNow })
      .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.status, "open"), eq(inferenceLease.runNonce, runNonce)))
      .returning({ id: inferenceLease.id });
    await recordEvent(tx, leaseId, "generation_failed", {
      code,
      message: GENERATION_FAILURES[code] ?? GENERATION_FAILURES.internal_error,
      closed: closed.length > 0,
    });
    // The generation's end: no call of it is left to run, so nothing stays reserved.
    if (!input.usage || !(await recordUsage(tx, leaseId, input.usage, "failed"))) await releaseReservation(tx, leaseId);
    return { closed: closed.length > 0 };
  });
}

const wholeTokens = (n: number) => (Number.isFinite(n) && n > 0 ? Math.round(n) : 0);
const centsText = (n: number) => (Number.isFinite(n) && n > 0 ? n.toFixed(6) : "0");

/**
 * Records a model call's usage, ended as `outcome`, and settles the lease's budget reservation in
 * ONE statement (a CTE), only when the row is written (a call recorded already, the same call key
 * of a retried step, changes nothing): the call's final outcome releases what is left of it
 * (null), and an attempt that will be retried (`final` false) draws its cost from it, so the
 * reservation covers the retry too and keeps counting until the last attempt's outcome
 * (docs/decisions/0075). The transitions that end a call (propose, a late completion, an actor
 * mismatch, a failed generation) record it in their own transaction at the cost of one statement,
 * and an aborted call or a retried attempt on its own. Org, actor, invoice and purpose are the
 * lease's (the organization its invoice is in), never the caller's word. Returns whether a row was written.
 */
export async function recordUsage(db: Db | Tx, leaseId: string, usage: CallUsage, outcome: UsageOutcome, final = true): Promise<boolean> {
  if (!isUuid(leaseId)) return false;
  const settled = final ? sql`null` : sql`greatest(0, held.reserved_cents - w.cost_cents)`;
  const result = await db.execute(sql`
    with lease as (
      select id, actor_id, invoice_id, purpose from inference_lease where id = ${leaseId}
    ), written as (
      insert into model_usage (org_id, actor_id, lease_id, invoice_id, purpose, model, input_tokens, output_tokens,
        cost_cents, outcome, estimated, call_key)
      select i.org_id, r.actor_id, r.id, r.invoice_id, r.purpose, ${usage.model}, ${wholeTokens(usage.inputTokens)},
        ${wholeTokens(usage.outputTokens)}, ${centsText(usage.costCents)}::numeric, ${outcome}, ${usage.estimated}, ${usage.callKey}
      from lease r join invoice i on i.id = r.invoice_id
      on conflict (call_key) do nothing
      returning id, cost_cents
    ), settled as (
      update inference_lease held set reserved_cents = ${settled}
      from written w where held.id = ${leaseId} and held.reserved_cents is not null
    )
    select id from written`);
  return rowsOf(result).length > 0;
}

/**
 * Releases the lease's reservation when its generation ends with no call left to record: the run
 * stopped before it called the model (the lease closed first), or failed with its calls recorded
 * already. One conditional UPDATE; nothing when nothing is held.
 */
export async function releaseReservation(db: Db | Tx, leaseId: string): Promise<void> {
  if (!isUuid(leaseId)) return;
  await db
    .update(inferenceLease)
    .set({ reservedCents: null })
    .where(and(eq(inferenceLease.id, leaseId), isNotNull(inferenceLease.reservedCents)));
}
