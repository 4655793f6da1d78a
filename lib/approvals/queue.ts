import "server-only";
// GET /api/approvals: the approver's queue ("Waiting for your approval"): the organization's
// requests still pending (no decision, the lease proposed and in its window by the database
// clock) that someone else submitted. One statement; the role is a condition of it.
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { memberMay, memberOf, visibleInvoice, type Member } from "@/lib/access";
import type { ApprovalDecision, ApprovalStatus, ClosedReason } from "@/lib/lease-codes";
import { currentValues } from "@/lib/purposes";
import type { PlannedChange } from "@/lib/purposes";
import { changesToApprove, readApproval } from "./read";

export type QueueEntry = {
  id: string;
  lease_id: string;
  invoice_id: string;
  invoice_number: string;
  purpose: string;
  requester: { id: string; name: string };
  proposal: unknown;
  proposal_sha256: string;
  invoice_version: number;
  accept: string[] | null;
  submitted_at: string;
  expires_at: string;
};

/** A request `r` (its lease `l`) of the member's organization still pending: no decision, the lease proposed and in its window by the database clock. */
const pendingIn = (member: Member) =>
  sql`r.org_id = ${member.orgId}::uuid and r.decision is null and l.status = 'proposed' and l.deadline_at > now()`;

/** Someone else's request, and the member may approve now: it waits for their decision. */
const awaitsDecisionBy = (member: Member) =>
  sql`(r.requester_id <> ${member.id}::uuid and ${memberMay(member.orgId, member.id, "approve")})`;

export async function approvalQueue(db: Db, member: Member): Promise<QueueEntry[]> {
  const result = await db.execute(sql`
    select r.id, r.lease_id, r.invoice_id, i.number as invoice_number, r.purpose,
      json_build_object('id', u.id, 'name', u.name) as requester,
      l.proposal, r.proposal_sha256, r.invoice_version, r.accept, r.submitted_at, l.deadline_at as expires_at
    from approval_request r
    join inference_lease l on l.id = r.lease_id
    join invoice i on i.id = r.invoice_id
    join app_user u on u.id = r.requester_id
    where ${pendingIn(member)} and ${awaitsDecisionBy(member)}
    order by r.submitted_at, r.id
    limit 500`);
  const rows = rowsOf<QueueEntry>(result);
  const parse = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v);
  const iso = (v: unknown) => (v instanceof Date ? v : new Date(String(v))).toISOString();
  return rows.map((r) => ({
    ...r,
    requester: parse(r.requester) as QueueEntry["requester"],
    proposal: parse(r.proposal),
    invoice_version: Number(r.invoice_version),
    submitted_at: iso(r.submitted_at),
    expires_at: iso(r.expires_at),
  }));
}

export type ApprovalDetail = QueueEntry & {
  status: ApprovalStatus;
  /** Why a withdrawn request's lease was closed (invoice_changed, cancelled, signed_out), else null. */
  closed_reason: ClosedReason | null;
  decision: ApprovalDecision | null;
  approver: { id: string; name: string } | null;
  decided_at: string | null;
  comment: string | null;
  /** What approving would change: the proposal against the invoice's targets now (null once it can no longer be approved). */
  changes: Pick<PlannedChange, "key" | "label" | "before" | "after">[] | null;
};

/**
 * GET /api/approvals/:id: one request as readApproval finds it (its requester and the organization's
 * members who may approve; anyone else: the same null as a missing id), with its derived status and,
 * while pending, the diff the approver decides on (changesToApprove, as the page draws it). Two
 * statements: the request, then the targets now.
 */
export async function approvalDetail(db: Db, member: Member, id: unknown): Promise<ApprovalDetail | null> {
  const view = await readApproval(db, member, id);
  if (!view) return null;
  const current = view.status === "pending" ? await currentValues(db, view.invoiceId, visibleInvoice(member)) : null;
  const changes = changesToApprove(view, current)?.map(({ key, label, before, after }) => ({ key, label, before, after })) ?? null;
  return {
    id: view.id,
    lease_id: view.leaseId,
    invoice_id: view.invoiceId,
    invoice_number: view.invoiceNumber,
    purpose: view.purpose,
    requester: view.requester,
    proposal: view.proposal,
    proposal_sha256: view.proposalSha256,
    invoice_version: view.invoiceVersion,
    accept: view.accept,
    submitted_at: view.submittedAt.toISOString(),
    expires_at: view.deadlineAt.toISOString(),
    status: view.status,
    closed_reason: view.closedReason,
    decision: view.decision,
    approver: view.approverId ? { id: view.approverId, name: view.approverName ?? "" } : null,
    decided_at: view.decidedAt ? view.decidedAt.toISOString() : null,
    comment: view.comment,
    changes,
  };
}

/** What the approval pages' stream says (GET /api/approvals/events): a fingerprint of the pending requests the reader sees. */
export type PendingSnapshot = {
  /** 16 hex digits of the sha256 of the ids of the pending requests the reader sees, sorted: it changes when that set does. */
  fingerprint: string;
  /** How many of them wait for the reader's decision (others' requests, if the reader may approve). */
  waiting: number;
  /** Their leases (the stream follows their events: an edit or a cancel withdraws a request). */
  leaseIds: string[];
  /** Milliseconds until the first of them runs out, by the database clock (null: none pending). */
  nextExpiryMs: number | null;
};

/**
 * The pending requests a member sees on the approval pages: the queue (others' requests, if they
 * may approve now) and their own. One statement; the organization, the membership and the role are
 * conditions of it, as in approvalQueue and readApproval.
 */
export async function pendingSnapshot(db: Db, member: Member): Promise<PendingSnapshot> {
  const result = await db.execute(sql`
    select r.id, r.lease_id, r.requester_id = ${member.id}::uuid as mine,
      ceil(extract(epoch from (l.deadline_at - now())) * 1000)::float8 as ms_left
    from approval_request r
    join inference_lease l on l.id = r.lease_id
    where ${pendingIn(member)}
      and (${awaitsDecisionBy(member)}
        or (r.requester_id = ${member.id}::uuid and ${memberOf(member.orgId, member.id)}))
    order by r.id
    limit 500`);
  const rows = rowsOf<{ id: string; lease_id: string; mine: boolean; ms_left: number }>(result);
  return {
    fingerprint: createHash("sha256")
      .update(rows.map((r) => r.id).join(","))
      .digest("hex")
      .slice(0, 16),
    waiting: rows.filter((r) => !r.mine).length,
    leaseIds: rows.map((r) => r.lease_id),
    nextExpiryMs: rows.length ? Math.min(...rows.map((r) => Number(r.ms_left))) : null,
  };
}
