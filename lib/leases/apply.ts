import "server-only";
// Apply (check 3): the only write of a purpose's target (lib/purposes: the summary, the review
// notes, the lines' categories), by the lease's own actor, while it is proposed and unexpired and
// the invoice is as it was. The deadline is judged once the rows are locked, on the clock of that
// moment (docs/decisions/0045). What is written is the purpose's `apply` of the proposal as its
// schema parses it, exactly what its `changes` showed; the version is bumped once, fenced.
// The write path (lockInvoiceForApply, closeChanged, writeProposal) is shared with an approval
// of the four-eyes lane (./approval.ts, docs/decisions/0078), which writes the same way.
import { rowsOf, type Db, type Tx } from "@/db/client";
import { approvalPolicy, inferenceLease, invoice } from "@/db/schema";
import { ownedInvoice } from "@/lib/access";
import { canonicalKey, isUuid } from "@/lib/ids";
import { REVIEW_HOURS, type ApplyPolicy, type ApplyRefusal, type ClosedReason } from "@/lib/lease-codes";
import { currentValues, isPurpose, plannedChanges, purposeOf } from "@/lib/purposes";
import { log } from "@/lib/log";
import { outcome, tracedLeaseOp } from "@/lib/tracing";
import { and, eq, ne, sql } from "drizzle-orm";
import { clockNow, expireDue, holdLiveSession, inFlight, judgedAt, recordEvent, sessionLiveNow } from "./shared";

export type ApplyResult =
  | { ok: true; invoiceVersion: number; /** The keys of the changes written (lib/purposes PlannedChange). */ written: string[] }
  | {
      ok: false;
      // not_signed_in only when a sessionId is given (the HTTP route checks the session here).
      code: ApplyRefusal | "not_signed_in";
      /** Why a lease_rejected lease was closed, so the page can say it without reading again. */
      closedReason?: ClosedReason | null;
    };
type Refused = Exclude<ApplyResult, { ok: true }>;

/** Thrown after a write, so the transaction rolls back whatever it wrote; answered with `code`. */
export class FailClosed extends Error {
  constructor(
    message: string,
    readonly code: "invoice_changed" | "lease_expired" | "proposal_unusable" = "invoice_changed",
  ) {
    super(message);
  }
}

/** The lease as apply and approve hold it: locked FOR UPDATE, with whether a request was submitted for it. */
export type LockedLease = {
  id: string;
  status: string;
  invoiceId: string;
  invoiceVersion: number | null;
  closedReason: ClosedReason | null;
  proposal: unknown;
  purpose: string;
};

/** A column of the lease's lock: whether an approval request was submitted for it (0078). */
export const hasRequest = sql<boolean>`exists (select 1 from approval_request r where r.lease_id = "inference_lease"."id")`;

/**
 * With `sessionId`, the session must be live (checked first, in this transaction, and held
 * FOR SHARE as openLease does, and not run out by the time the rows are locked), else
 * `not_signed_in` and nothing is written: the route then needs no transaction of its own to
 * resolve the session. A server action passes none: its db holds the session (sessionHeld).
 */
export const applyLease = tracedLeaseOp("lease.apply", applyLeaseUntraced, {
  leases: ([, , leaseId], result) => (result?.ok === false && result.code === "lease_not_found" ? [] : [leaseId]),
  attributes: outcome,
});

async function applyLeaseUntraced(
  db: Db,
  actorId: string,
  leaseId: unknown,
  opts: {
    sessionId?: string;
    /** The session a server action's db already holds (sessionHeld): not checked again, recorded on the receipt. */
    heldSessionId?: string;
    /** The keys of the changes the user accepted (categorize_lines: line ids); undefined: every change. */
    accept?: readonly string[];
  } = {},
): Promise<ApplyResult> {
  if (!isUuid(leaseId)) return { ok: false, code: "lease_not_found" };
  // A line id in upper case is the line the page showed in lower case.
  const accept = opts.accept?.map(canonicalKey);
  try {
    return await db.transaction(async (tx): Promise<ApplyResult> => {
      if (opts.sessionId !== undefined && !(await holdLiveSession(tx, actorId, opts.sessionId))) {
        return { ok: false, code: "not_signed_in" };
      }
      const [lease] = await tx
        .select({
          id: inferenceLease.id,
          status: inferenceLease.status,
          invoiceId: inferenceLease.invoiceId,
          invoiceVersion: inferenceLease.invoiceVersion,
          closedReason: inferenceLease.closedReason,
          proposal: inferenceLease.proposal,
          purpose: inferenceLease.purpose,
          // The four-eyes lane costs the lifecycle a column, not a statement (0078).
          hasRequest,
        })
        .from(inferenceLease)
        .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId)))
        .for("update");
      if (!lease) return { ok: false, code: "lease_not_found" };

      const refuse = async (code: Refused["code"]) => {
        await recordEvent(tx, lease.id, "apply_refused", { code });
        return { ok: false as const, code, ...(code === "lease_rejected" ? { closedReason: lease.closedReason } : {}) };
      };
      // The row is ours from here, however long we waited for it: past its deadline by the
      // clock now, it is recorded `expired` in this same transaction, and refused.
      const expiredNow = async () => (await expireDue(tx, eq(inferenceLease.id, lease.id), "apply", clockNow)).length > 0;
      if (lease.status === "open") return refuse((await expiredNow()) ? "lease_expired" : "lease_open");
      // Withdrawn by an edit (withdrawOutdated): the answer says why, as it did when apply found it.
      if (lease.status === "rejected" && lease.closedReason === "invoice_changed") return refuse("invoice_changed");
      if (lease.status !== "proposed") return refuse(`lease_${lease.status}`);
      // Submitted for approval: only an approver writes it now, whatever the policy says since.
      if (lease.hasRequest) return refuse((await expiredNow()) ? "lease_expired" : "approval_pending");

      const inv = await lockInvoiceForApply(tx, lease, actorId, "update");
      if (!inv || inv.version !== lease.invoiceVersion) {
        if (await expiredNow()) return refuse("lease_expired");
        return closeChanged(tx, lease, inv?.version ?? null);
      }
      // The purpose's policy asks for a second person: the owner submits instead (0078).
      if (inv.apply === "four_eyes") return refuse((await expiredNow()) ? "lease_expired" : "approval_required");
      return await writeProposal(tx, {
        lease,
        actorId,
        version: inv.version,
        accept,
        sessionId: opts.sessionId,
        receiptSessionId: opts.sessionId ?? opts.heldSessionId,
        refuse,
        expiredNow,
      });
    });
  } catch (error) {
    if (error instanceof FailClosed) {
      log.warn("apply failed closed", { lease_id: leaseId, reason: error.message });
      return { ok: false, code: error.code };
    }
    throw error;
  }
}

/**
 * The lease's invoice, locked (`update` to write it, `share` to hold it still), owned by
 * `actorId` (the lease's actor) in an organization they belong to, with the policy of the
 * lease's purpose there: left-joined, so `self` with no row and no statement more; `OF invoice`
 * locks nothing but the invoice. Null when the invoice is no longer the actor's.
 */
export async function lockInvoiceForApply(
  tx: Tx,
  lease: Pick<LockedLease, "invoiceId" | "purpose">,
  actorId: string,
  strength: "update" | "share",
): Promise<{ version: number; orgId: string; apply: ApplyPolicy; reviewHours: number } | null> {
  const [inv] = await tx
    .select({
      version: invoice.version,
      orgId: invoice.orgId,
      apply: sql<ApplyPolicy>`coalesce(${approvalPolicy.apply}, 'self')`,
      reviewHours: sql<number>`coalesce(${approvalPolicy.reviewHours}, ${sql.raw(String(REVIEW_HOURS.default))})`.mapWith(Number),
    })
    .from(invoice)
    .leftJoin(approvalPolicy, and(eq(approvalPolicy.orgId, invoice.orgId), eq(approvalPolicy.purpose, lease.purpose)))
    .where(and(eq(invoice.id, lease.invoiceId), ownedInvoice(actorId)))
    .for(strength, { of: invoice });
  return inv ?? null;
}

/** The invoice changed since the proposal (or changed hands): the lease is closed as out of date, and refused. */
export async function closeChanged(
  tx: Tx,
  lease: Pick<LockedLease, "id" | "invoiceVersion">,
  invoiceVersion: number | null,
): Promise<Refused & { code: "invoice_changed" }> {
  await tx
    .update(inferenceLease)
    .set({ status: "rejected", closedReason: "invoice_changed", updatedAt: clockNow })
    .where(eq(inferenceLease.id, lease.id));
  await recordEvent(tx, lease.id, "invoice_changed", {
    by: "apply",
    lease_version: lease.invoiceVersion,
    invoice_version: invoiceVersion,
  });
  return { ok: false, code: "invoice_changed" };
}

/**
 * The write itself, once the lease and its invoice are locked and the fence held: the proposal
 * parsed by its purpose, the lease `applied` (deadline and the acting session judged on the clock
 * now), the purpose's target written on the invoice fenced by owner and version, the other
 * purposes' leases carried forward, the `applied` event. `actorId` is the lease's actor, whose
 * invoice it must still be; `sessionId` the acting session (the owner's, or the approver's);
 * `approval` names the decision an approval writes under. A refusal after the first write throws
 * FailClosed, so nothing is written.
 */
export async function writeProposal(
  tx: Tx,
  input: {
    lease: LockedLease;
    actorId: string;
    version: number;
    accept?: readonly string[];
    sessionId?: string;
    /** The acting session for the receipt when `sessionId` is not given (a server action's, held by its db). */
    receiptSessionId?: string;
    approval?: { requestId: string; approverId: string };
    refuse: (code: Refused["code"]) => Promise<Refused>;
    expiredNow: () => Promise<boolean>;
  },
): Promise<ApplyResult> {
  const { lease, actorId, accept, refuse, expiredNow } = input;
  // Only a lease seeded by hand (or a model's blank answer) holds no proposal its purpose's
  // schema accepts: its own reason, not invoice_changed, since the invoice is as it was.
  const unusable = async () => {
    if (await expiredNow()) return refuse("lease_expired");
    await tx
      .update(inferenceLease)
      .set({ status: "rejected", closedReason: "proposal_unusable", updatedAt: clockNow })
      .where(eq(inferenceLease.id, lease.id));
    await recordEvent(tx, lease.id, "proposal_unusable", { by: input.approval ? "approve" : "apply" });
    return { ok: false as const, code: "proposal_unusable" as const };
  };
  if (!isPurpose(lease.purpose)) return unusable();
  const purpose = purposeOf(lease.purpose);
  const parsed = purpose.output.safeParse(lease.proposal);
  if (!parsed.success) return unusable();
  // The invoice's targets as they are now, under the locks: read only where a purpose needs them.
  const needsCurrent = accept !== undefined || purpose.usable !== undefined;
  const current = needsCurrent ? await currentValues(tx, lease.invoiceId, ownedInvoice(actorId)) : null;
  if (purpose.usable && !purpose.usable(parsed.data, current!)) return unusable();
  if (accept !== undefined && !acceptable(lease, accept, current!)) {
    // A lease past its deadline is expired whatever it names: the state before the body.
    return refuse((await expiredNow()) ? "lease_expired" : "invalid_lines");
  }

  // The first write, on rows this transaction already holds, so it waits for nothing and
  // its conditions are judged now. (A condition of a statement that waits for a row is not
  // judged again after the wait unless the holder changed the row.)
  const [applied] = await tx
    .update(inferenceLease)
    .set({ status: "applied", closedReason: null, updatedAt: clockNow })
    .where(
      and(
        eq(inferenceLease.id, lease.id),
        eq(inferenceLease.status, "proposed"),
        sql`${inferenceLease.deadlineAt} > ${clockNow}`,
        input.sessionId === undefined ? undefined : sessionLiveNow(input.sessionId),
      ),
    )
    // The instant it was judged in time, which dates the `applied` event (not the later insert).
    .returning({ id: inferenceLease.id, inTimeAt: judgedAt(inferenceLease.deadlineAt) });
  // The deadline passed in the microseconds between the condition and RETURNING: undone, refused.
  if (applied && !applied.inTimeAt) throw new FailClosed("the deadline passed as apply wrote", "lease_expired");
  if (!applied) {
    if (await expiredNow()) return refuse("lease_expired");
    if (input.sessionId !== undefined) return { ok: false, code: "not_signed_in" };
    throw new FailClosed("the locked lease changed meanwhile");
  }

  const write = await purpose.apply(tx, {
    invoiceId: lease.invoiceId,
    version: input.version,
    output: parsed.data,
    current: current ?? { invoice: {}, summary: null, reviewNotes: null, lines: [], accounts: {} },
    accept,
  });
  if (write.unusable) throw new FailClosed("the proposal names what the invoice does not have", "proposal_unusable");
  const written = await tx
    .update(invoice)
    .set({ ...write.invoiceSet, version: sql`${invoice.version} + 1`, updatedAt: clockNow })
    .where(and(eq(invoice.id, lease.invoiceId), ownedInvoice(actorId), eq(invoice.version, input.version)))
    .returning({ version: invoice.version });
  // Thrown, so the lease's update above rolls back with the transaction.
  if (written.length !== 1) throw new FailClosed(`invoice write changed ${written.length} rows`);
  // The invoice's other purposes read nothing any purpose writes (lib/purposes: no target is
  // read), so their proposals made against the version before this write still hold: they
  // follow the invoice to its new version instead of failing as out of date.
  await tx
    .update(inferenceLease)
    .set({ invoiceVersion: written[0]!.version })
    .where(
      and(
        eq(inferenceLease.invoiceId, lease.invoiceId),
        ne(inferenceLease.id, lease.id),
        eq(inferenceLease.invoiceVersion, input.version),
        inFlight,
      ),
    );

  const changed = accept === undefined ? {} : { written: write.written.length };
  const approval = input.approval ? { approval_id: input.approval.requestId, approver_id: input.approval.approverId } : {};
  await recordApplied(tx, {
    leaseId: lease.id,
    invoiceVersion: written[0]!.version,
    written: write.written,
    sessionId: input.sessionId ?? input.receiptSessionId ?? null,
    approvalId: input.approval?.requestId ?? null,
    detail: { invoice_version: written[0]!.version, ...changed, ...approval },
    at: applied.inTimeAt!,
  });
  return { ok: true, invoiceVersion: written[0]!.version, written: write.written };
}

/**
 * Whether a partial apply names changes the page showed: only a purpose that applies by line (its
 * `byLine`) takes a choice (any other takes its proposal whole); each key one of the proposal's,
 * at least one.
 */
export function acceptable(
  lease: Pick<LockedLease, "purpose" | "proposal">,
  accept: readonly string[],
  current: Parameters<typeof plannedChanges>[2],
): boolean {
  if (!isPurpose(lease.purpose)) return false;
  const keys = new Set((plannedChanges(lease.purpose, lease.proposal, current) ?? []).map((c) => canonicalKey(c.key)));
  return purposeOf(lease.purpose).byLine === true && accept.length > 0 && accept.every((key) => keys.has(key));
}

/**
 * The `applied` event and the write's receipt (docs/decisions/0079), in one statement: the receipt
 * is inserted from the lease, its invoice as this transaction left it (`invoice_sha256`, after the
 * fenced UPDATE) and, under four_eyes, the approved request; the event is inserted from the
 * receipt, so neither is written without the other. `sessionId` is the acting session: the
 * requester's under self; under four_eyes the requester's is the one that submitted and the
 * approver's is the request's. The deferred trigger `lease_applied_needs_receipt` fails the
 * commit of an `applied` lease without one.
 */
export async function recordApplied(
  tx: Tx,
  input: {
    leaseId: string;
    invoiceVersion: number;
    written: readonly string[];
    sessionId: string | null;
    approvalId: string | null;
    detail: Record<string, unknown>;
    at: string;
  },
): Promise<void> {
  const written = sql`array[${sql.join(
    input.written.map((k) => sql`${k}`),
    sql`, `,
  )}]::text[]`;
  const result = await tx.execute(sql`
    with receipt as (
      insert into lease_receipt (
        lease_id, invoice_id, org_id, lane, purpose, prompt_version, model,
        requester_id, requester_session_id, approval_id, approver_id, approver_session_id, approved_at,
        proposal_sha256, proposed_invoice_version, proposed_invoice_sha256, proposed_at,
        written_invoice_version, written_invoice_sha256, written_at, written_keys)
      select l.id, l.invoice_id, i.org_id, case when r.id is null then 'self' else 'four_eyes' end, l.purpose,
        l.prompt_version, l.proposal->>'model',
        l.actor_id, case when r.id is null then ${input.sessionId}::uuid else r.requester_session_id end,
        r.id, r.approver_id, r.approver_session_id, r.decided_at,
        audit_sha256(audit_jcs(l.proposal)), l.proposed_invoice_version, l.proposed_invoice_sha256, l.proposed_at,
        ${input.invoiceVersion}::int, invoice_sha256(i.id), clock_timestamp(), ${written}
      from inference_lease l
      join invoice i on i.id = l.invoice_id
      left join approval_request r on r.id = ${input.approvalId}::uuid and r.lease_id = l.id and r.decision = 'approved'
      where l.id = ${input.leaseId}::uuid
      returning lease_id
    )
    insert into lease_event (lease_id, kind, detail, at)
    select lease_id, 'applied', ${JSON.stringify(input.detail)}::jsonb, ${input.at}::timestamptz from receipt
    returning id`);
  if (rowsOf(result).length !== 1) throw new FailClosed("the applied lease left no receipt");
}
