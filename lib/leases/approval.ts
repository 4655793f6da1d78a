import "server-only";
// The four-eyes lane (docs/decisions/0078): under a purpose's `four_eyes` policy the lease's
// owner submits its proposal (frozen into an approval_request: its sha256, the invoice version,
// the accepted lines, a review window on the database clock), and another member of the
// organization who may approve (ROLE_RULES.approve) approves exactly the proposal they were shown,
// which writes the invoice as apply does (./apply.ts writeProposal, fenced by version and owner),
// or declines it with a comment. While a request waits its lease stays `proposed` (deadline: the
// window's end), so edits, owner changes, removal, cancel and the sweep end it by their own paths.
// Each call is one transaction that holds the acting session FOR SHARE first.
import type { Db, Tx } from "@/db/client";
import { rowsOf } from "@/db/client";
import { approvalRequest, inferenceLease, sqlCodes } from "@/db/schema";
import { memberMay, ownedInvoice, ROLE_RULES } from "@/lib/access";
import { endedRefusal } from "@/lib/approvals/status";
import { proposalSha256 } from "@/lib/approvals/hash";
import { canonicalKey, isUuid } from "@/lib/ids";
import { type ApprovalDecision, type ClosedReason, type DecisionRefusal, type LeaseStatus, type SubmitRefusal } from "@/lib/lease-codes";
import { log } from "@/lib/log";
import { currentValues, isPurpose, purposeOf } from "@/lib/purposes";
import { and, eq, isNull, ne, sql } from "drizzle-orm";
import { acceptable, closeChanged, FailClosed, lockInvoiceForApply, writeProposal, type LockedLease } from "./apply";
import { clockNow, expireDue, holdLiveSession, recordEvent, sessionLiveNow, toDate } from "./shared";

/** A request as its routes answer it. */
export type ApprovalAnswer = {
  id: string;
  lease_id: string;
  invoice_id: string;
  proposal_sha256: string;
  expires_at: Date;
};

export type SubmitResult = { ok: true; request: ApprovalAnswer } | { ok: false; code: SubmitRefusal; closedReason?: ClosedReason | null };
export type DecisionResult =
  { ok: true; decision: ApprovalDecision; leaseId: string; invoiceVersion: number | null } | { ok: false; code: DecisionRefusal };

type Acting = { id: string; sessionId: string };

/** Thrown to roll the decision back with everything it wrote, and answered with `code`. */
class Undo extends Error {
  constructor(readonly code: DecisionRefusal) {
    super(code);
  }
}

/**
 * POST /api/leases/:id/submit: the lease's actor submits its proposal under a four_eyes policy.
 * A retry (a request exists) answers the request as it is. 4 statements past the session: the
 * lease FOR UPDATE (with its request), the invoice FOR SHARE (with the policy and the fence),
 * the deadline moved to the window's end, the request and its event.
 */
export async function submitLease(
  db: Db,
  actor: Acting,
  leaseId: unknown,
  opts: { accept?: readonly string[] } = {},
): Promise<SubmitResult> {
  if (!isUuid(leaseId)) return { ok: false, code: "lease_not_found" };
  const accept = opts.accept?.map(canonicalKey);
  return db.transaction(async (tx): Promise<SubmitResult> => {
    if (!(await holdLiveSession(tx, actor.id, actor.sessionId))) return { ok: false, code: "not_signed_in" };
    const [lease] = await tx
      .select({
        id: inferenceLease.id,
        status: inferenceLease.status,
        invoiceId: inferenceLease.invoiceId,
        invoiceVersion: inferenceLease.invoiceVersion,
        closedReason: inferenceLease.closedReason,
        proposal: inferenceLease.proposal,
        purpose: inferenceLease.purpose,
        requestId: sql<string | null>`(select r.id from approval_request r where r.lease_id = "inference_lease"."id")`,
      })
      .from(inferenceLease)
      .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actor.id)))
      .for("update");
    if (!lease) return { ok: false, code: "lease_not_found" };
    if (lease.requestId) {
      // Submitted already (a retry, another tab): the request as it stands.
      const [request] = await tx.select(answerColumns).from(approvalRequest).where(eq(approvalRequest.id, lease.requestId));
      return { ok: true, request: request! };
    }
    const expiredNow = async () => (await expireDue(tx, eq(inferenceLease.id, lease.id), "submit", clockNow)).length > 0;
    if (lease.status === "open") return { ok: false, code: (await expiredNow()) ? "lease_expired" : "lease_open" };
    if (lease.status === "rejected" && lease.closedReason === "invoice_changed") return { ok: false, code: "invoice_changed" };
    if (lease.status !== "proposed") {
      return { ok: false, code: `lease_${lease.status}`, ...(lease.status === "rejected" ? { closedReason: lease.closedReason } : {}) };
    }

    // FOR SHARE: the invoice held still (an edit waits) while the proposal is frozen against it.
    const inv = await lockInvoiceForApply(tx, lease, actor.id, "share");
    if (!inv || inv.version !== lease.invoiceVersion) {
      if (await expiredNow()) return { ok: false, code: "lease_expired" };
      return closeChanged(tx, lease, inv?.version ?? null);
    }
    if (inv.apply !== "four_eyes") return { ok: false, code: (await expiredNow()) ? "lease_expired" : "approval_not_required" };
    const parsed = isPurpose(lease.purpose) ? purposeOf(lease.purpose).output.safeParse(lease.proposal) : null;
    if (!parsed?.success) {
      if (await expiredNow()) return { ok: false, code: "lease_expired" };
      await tx
        .update(inferenceLease)
        .set({ status: "rejected", closedReason: "proposal_unusable", updatedAt: clockNow })
        .where(eq(inferenceLease.id, lease.id));
      await recordEvent(tx, lease.id, "proposal_unusable", { by: "submit" });
      return { ok: false, code: "proposal_unusable" };
    }
    if (accept !== undefined) {
      const current = await currentValues(tx, lease.invoiceId, ownedInvoice(actor.id));
      if (!current || !acceptable(lease, accept, current))
        return { ok: false, code: (await expiredNow()) ? "lease_expired" : "invalid_lines" };
    }

    // The lease's deadline becomes the window's end: "until when this proposal may be written".
    // Judged in time and with the session live on the clock now, after any wait for the rows.
    const [moved] = await tx
      .update(inferenceLease)
      .set({ deadlineAt: sql`clock_timestamp() + make_interval(hours => ${inv.reviewHours}::integer)`, updatedAt: clockNow })
      .where(
        and(
          eq(inferenceLease.id, lease.id),
          eq(inferenceLease.status, "proposed"),
          sql`${inferenceLease.deadlineAt} > ${clockNow}`,
          sessionLiveNow(actor.sessionId),
        ),
      )
      .returning({ id: inferenceLease.id });
    if (!moved) return { ok: false, code: (await expiredNow()) ? "lease_expired" : "not_signed_in" };
    const [request] = await tx
      .insert(approvalRequest)
      .values({
        orgId: inv.orgId,
        leaseId: lease.id,
        invoiceId: lease.invoiceId,
        purpose: lease.purpose,
        requesterId: actor.id,
        requesterSessionId: actor.sessionId,
        // Over the proposal this transaction read under the lease's lock: RFC 8785 by `canonicalize`,
        // the bytes the receipt's SQL audit_jcs makes of the same proposal (integration/audit/jcs.test.ts
        // holds the two equal over generated documents, and receipt.test.ts the two hashes of one write).
        proposalSha256: proposalSha256(lease.proposal),
        invoiceVersion: inv.version,
        accept: accept ? [...accept] : null,
        // The moment the window was measured from: its end less review_hours, exactly.
        submittedAt: sql`(select l.deadline_at from inference_lease l where l.id = ${lease.id}::uuid) - make_interval(hours => ${inv.reviewHours}::integer)`,
        // The lease's new deadline to the microsecond (a Date would keep milliseconds).
        expiresAt: sql`(select l.deadline_at from inference_lease l where l.id = ${lease.id}::uuid)`,
      })
      .returning(answerColumns);
    await recordEvent(tx, lease.id, "submitted", {
      approval_id: request!.id,
      proposal_sha256: request!.proposal_sha256,
      invoice_version: inv.version,
    });
    return { ok: true, request: request! };
  });
}

const answerColumns = {
  id: approvalRequest.id,
  lease_id: approvalRequest.leaseId,
  invoice_id: approvalRequest.invoiceId,
  proposal_sha256: approvalRequest.proposalSha256,
  expires_at: approvalRequest.expiresAt,
};

type LockedRequest = {
  id: string;
  org_id: string;
  lease_id: string;
  requester_id: string;
  proposal_sha256: string;
  accept: string[] | null;
  decision: ApprovalDecision | null;
  status: LeaseStatus;
  invoice_id: string;
  invoice_version: number | null;
  closed_reason: ClosedReason | null;
  proposal: unknown;
  purpose: string;
  actor_id: string;
  deadline_at: unknown;
  now: unknown;
  same_person: boolean;
  may_approve: boolean;
};

/**
 * The decision's lock: the request and its lease FOR UPDATE (racing approvers queue here; the
 * second finds the decision made), and the approver's membership FOR SHARE, so a demotion or a
 * removal (which update or delete that row) waits for the commit and the role is judged at the
 * moment of approval. Found only in the organization the approver's session works in, with the
 * approver a member of it: anything else is the same 404 as a missing id.
 */
async function lockRequest(tx: Tx, approver: Acting, requestId: string): Promise<LockedRequest | null> {
  const result = await tx.execute(sql`
    select r.id, r.org_id, r.lease_id, r.requester_id, r.proposal_sha256, r.accept, r.decision,
      l.status, l.invoice_id, l.invoice_version, l.closed_reason, l.proposal, l.purpose, l.actor_id, l.deadline_at,
      clock_timestamp() as now,
      r.requester_id = ${approver.id}::uuid as same_person,
      m.role in (${sqlCodes(ROLE_RULES.approve)}) as may_approve
    from approval_request r
    join inference_lease l on l.id = r.lease_id
    join membership m on m.org_id = r.org_id and m.user_id = ${approver.id}::uuid
    where r.id = ${requestId}::uuid
      and r.org_id = (select s.org_id from app_session s where s.id = ${approver.sessionId}::uuid)
    for update of r, l
    for share of m`);
  const [row] = rowsOf<LockedRequest>(result);
  return row ?? null;
}

/** The refusals every decision shares, in order: 404, 403 same_person, 403 forbidden, 409 by how the request ended. */
async function judge(tx: Tx, row: LockedRequest | null, by: string): Promise<DecisionRefusal | null> {
  if (!row) return "approval_not_found";
  if (row.same_person) return "same_person";
  if (!row.may_approve) return "forbidden";
  const state = {
    decision: row.decision,
    leaseStatus: row.status,
    closedReason: row.closed_reason,
    deadlineAt: toDate(row.deadline_at),
    now: toDate(row.now),
  };
  const ended = endedRefusal(state);
  // The window passed with nothing recording it yet: recorded now, in this transaction.
  if (ended === "approval_expired" && row.status === "proposed") await expireDue(tx, eq(inferenceLease.id, row.lease_id), by, clockNow);
  return ended;
}

/** The decision itself: on rows already held, by someone other than the requester who may approve now, in a live session. */
async function decide(tx: Tx, approver: Acting, requestId: string, decision: ApprovalDecision, comment: string | null) {
  const [decided] = await tx
    .update(approvalRequest)
    .set({ decision, approverId: approver.id, approverSessionId: approver.sessionId, decidedAt: clockNow, comment })
    .where(
      and(
        eq(approvalRequest.id, requestId),
        isNull(approvalRequest.decision),
        ne(approvalRequest.requesterId, approver.id),
        memberMay(approvalRequest.orgId, approver.id, "approve"),
        sessionLiveNow(approver.sessionId),
      ),
    )
    .returning({ id: approvalRequest.id });
  // The role was read from the membership this transaction holds: what failed is the session's end.
  if (!decided) throw new Undo("not_signed_in");
}

function decisionTx(db: Db, approver: Acting, requestId: unknown, work: (tx: Tx, id: string) => Promise<DecisionResult>) {
  if (!isUuid(requestId)) return Promise.resolve<DecisionResult>({ ok: false, code: "approval_not_found" });
  const id = requestId.toLowerCase();
  return db
    .transaction(async (tx): Promise<DecisionResult> => {
      if (!(await holdLiveSession(tx, approver.id, approver.sessionId))) return { ok: false, code: "not_signed_in" };
      return work(tx, id);
    })
    .catch((error: unknown): DecisionResult => {
      if (error instanceof Undo) return { ok: false, code: error.code };
      if (error instanceof FailClosed) {
        log.warn("approval failed closed", { approval_id: id, reason: error.message });
        return { ok: false, code: error.code === "lease_expired" ? "approval_expired" : error.code };
      }
      throw error;
    });
}

/**
 * POST /api/approvals/:id/approve: the approver approves the proposal whose hash they were shown,
 * which writes the invoice in this same transaction as apply would (fenced by the invoice version
 * and the lease's actor still owning it), the session being the approver's.
 */
export function approveRequest(
  db: Db,
  approver: Acting,
  requestId: unknown,
  body: { proposalSha256: string; comment?: string | null },
): Promise<DecisionResult> {
  return decisionTx(db, approver, requestId, async (tx, id) => {
    const row = await lockRequest(tx, approver, id);
    const refused = await judge(tx, row, "approve");
    if (refused) return { ok: false, code: refused };
    const r = row!;
    // The proposal about to be written, hashed now, must be the one submitted and the one shown.
    const hash = proposalSha256(r.proposal);
    if (hash !== r.proposal_sha256 || body.proposalSha256.toLowerCase() !== r.proposal_sha256) {
      return { ok: false, code: "proposal_changed" };
    }
    const lease: LockedLease = {
      id: r.lease_id,
      status: r.status,
      invoiceId: r.invoice_id,
      invoiceVersion: r.invoice_version,
      closedReason: r.closed_reason,
      proposal: r.proposal,
      purpose: r.purpose,
    };
    const expiredNow = async () => (await expireDue(tx, eq(inferenceLease.id, r.lease_id), "approve", clockNow)).length > 0;
    const inv = await lockInvoiceForApply(tx, lease, r.actor_id, "update");
    if (!inv || inv.version !== r.invoice_version) {
      if (await expiredNow()) return { ok: false, code: "approval_expired" };
      return closeChanged(tx, lease, inv?.version ?? null);
    }
    await decide(tx, approver, id, "approved", body.comment ?? null);
    const written = await writeProposal(tx, {
      lease,
      actorId: r.actor_id,
      version: inv.version,
      accept: r.accept ?? undefined,
      sessionId: approver.sessionId,
      approval: { requestId: id, approverId: approver.id },
      refuse: async (code) => ({ ok: false, code }),
      expiredNow,
    });
    if (!written.ok) {
      const code = written.code;
      throw new Undo(
        code === "lease_expired"
          ? "approval_expired"
          : code === "not_signed_in" || code === "invoice_changed" || code === "proposal_unusable"
            ? code
            : "proposal_unusable",
      );
    }
    return { ok: true, decision: "approved", leaseId: r.lease_id, invoiceVersion: written.invoiceVersion };
  });
}

/**
 * POST /api/approvals/:id/decline: the approver declines with a comment. The lease closes as
 * `rejected`/`declined` with its event; the invoice is not touched.
 */
export function declineRequest(db: Db, approver: Acting, requestId: unknown, body: { comment: string }): Promise<DecisionResult> {
  return decisionTx(db, approver, requestId, async (tx, id) => {
    const row = await lockRequest(tx, approver, id);
    const refused = await judge(tx, row, "decline");
    if (refused) return { ok: false, code: refused };
    const r = row!;
    await decide(tx, approver, id, "declined", body.comment);
    const [closed] = await tx
      .update(inferenceLease)
      .set({ status: "rejected", closedReason: "declined", updatedAt: clockNow })
      .where(and(eq(inferenceLease.id, r.lease_id), eq(inferenceLease.status, "proposed"), sql`${inferenceLease.deadlineAt} > ${clockNow}`))
      .returning({ id: inferenceLease.id });
    if (!closed) throw new Undo("approval_expired");
    await recordEvent(tx, r.lease_id, "declined", { approval_id: id, approver_id: approver.id });
    return { ok: true, decision: "declined", leaseId: r.lease_id, invoiceVersion: null };
  });
}
