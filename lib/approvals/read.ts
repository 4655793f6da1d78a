import "server-only";
// The pages' reads of approval requests (docs/decisions/0078 step 5, 0086): one request as its
// page shows it (`/approvals/:id`: to whoever may approve in its organization, and to its
// requester read-only), and the owner's own requests behind the leases their invoice page shows.
// Each one statement; the organization, the membership and the role are conditions of it, so
// another organization's request is as absent as a missing one.
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { memberMay, memberOf, type Member } from "@/lib/access";
import { canonicalId } from "@/lib/ids";
import type { ApprovalDecision, ApprovalStatus, ClosedReason, LeaseStatus } from "@/lib/lease-codes";
import { isPurpose, plannedChanges, purposeOf, type CurrentValues, type PlannedChange } from "@/lib/purposes";
import { approvalStatus } from "./status";

export type ApprovalView = {
  id: string;
  leaseId: string;
  invoiceId: string;
  invoiceNumber: string;
  counterparty: string;
  /** The invoice's version now, and the one the proposal was made against (frozen at submit). */
  invoiceVersionNow: number;
  invoiceVersion: number;
  purpose: string;
  requester: { id: string; name: string };
  /** The lease's proposal as stored: what approve would write. */
  proposal: unknown;
  proposalSha256: string;
  accept: string[] | null;
  submittedAt: Date;
  expiresAt: Date;
  /** The lease's deadline: the request's end unless moved since (the status is judged by it). */
  deadlineAt: Date;
  decision: ApprovalDecision | null;
  approverId: string | null;
  approverName: string | null;
  decidedAt: Date | null;
  comment: string | null;
  leaseStatus: LeaseStatus;
  closedReason: ClosedReason | null;
  status: ApprovalStatus;
  /** The reader submitted it. */
  mine: boolean;
  /** The database clock as the row was read. */
  now: Date;
};

type Row = {
  id: string;
  lease_id: string;
  invoice_id: string;
  invoice_number: string;
  counterparty: string;
  version_now: number;
  invoice_version: number;
  purpose: string;
  requester_id: string;
  requester_name: string;
  proposal: unknown;
  proposal_sha256: string;
  accept: string[] | null;
  submitted_at: unknown;
  expires_at: unknown;
  decision: ApprovalDecision | null;
  approver_id: string | null;
  approver_name: string | null;
  decided_at: unknown;
  comment: string | null;
  lease_status: LeaseStatus;
  closed_reason: ClosedReason | null;
  deadline_at: unknown;
  now: unknown;
};

const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));
const json = (v: unknown) => (typeof v === "string" ? (JSON.parse(v) as unknown) : v);

function viewOf(r: Row, readerId: string): ApprovalView {
  const now = date(r.now);
  return {
    id: r.id,
    leaseId: r.lease_id,
    invoiceId: r.invoice_id,
    invoiceNumber: r.invoice_number,
    counterparty: r.counterparty,
    invoiceVersionNow: Number(r.version_now),
    invoiceVersion: Number(r.invoice_version),
    purpose: r.purpose,
    requester: { id: r.requester_id, name: r.requester_name },
    proposal: json(r.proposal),
    proposalSha256: r.proposal_sha256,
    accept: r.accept,
    submittedAt: date(r.submitted_at),
    expiresAt: date(r.expires_at),
    deadlineAt: date(r.deadline_at),
    decision: r.decision,
    approverId: r.approver_id,
    approverName: r.approver_name,
    decidedAt: r.decided_at === null ? null : date(r.decided_at),
    comment: r.comment,
    leaseStatus: r.lease_status,
    closedReason: r.closed_reason,
    status: approvalStatus({
      decision: r.decision,
      leaseStatus: r.lease_status,
      closedReason: r.closed_reason,
      deadlineAt: date(r.deadline_at),
      now,
    }),
    mine: r.requester_id === readerId,
    now,
  };
}

const columns = sql`r.id, r.lease_id, r.invoice_id, i.number as invoice_number, i.counterparty, i.version as version_now,
  r.invoice_version, r.purpose, r.requester_id, u.name as requester_name, l.proposal, r.proposal_sha256, r.accept,
  r.submitted_at, r.expires_at, r.decision, r.approver_id, a.name as approver_name, r.decided_at, r.comment,
  l.status as lease_status, l.closed_reason, l.deadline_at, now() as now`;

const joins = sql`from approval_request r
  join inference_lease l on l.id = r.lease_id
  join invoice i on i.id = r.invoice_id
  join app_user u on u.id = r.requester_id
  left join app_user a on a.id = r.approver_id`;

/**
 * One request, for its page: found only in the member's organization, and only by someone who
 * may approve there now or by its requester (who reads it, and cannot decide it). Else null.
 */
export async function readApproval(db: Db, member: Member, requestId: unknown): Promise<ApprovalView | null> {
  const id = canonicalId(requestId);
  if (!id) return null;
  const result = await db.execute(sql`select ${columns} ${joins}
    where r.id = ${id}::uuid and r.org_id = ${member.orgId}::uuid
      and (${memberMay(member.orgId, member.id, "approve")}
        or (r.requester_id = ${member.id}::uuid and ${memberOf(member.orgId, member.id)}))`);
  const [row] = rowsOf<Row>(result);
  return row ? viewOf(row, member.id) : null;
}

/** The member's own requests behind `leaseIds` (their invoice page's latest leases), by lease id. */
export async function ownRequestsFor(db: Db, member: Member, leaseIds: readonly string[]): Promise<Map<string, ApprovalView>> {
  if (leaseIds.length === 0) return new Map();
  const ids = sql.join(
    leaseIds.map((id) => sql`${id}::uuid`),
    sql`, `,
  );
  const result = await db.execute(sql`select ${columns} ${joins}
    where r.lease_id in (${ids}) and r.org_id = ${member.orgId}::uuid and r.requester_id = ${member.id}::uuid
      and ${memberOf(member.orgId, member.id)}`);
  return new Map(rowsOf<Row>(result).map((row) => [row.lease_id, viewOf(row, member.id)]));
}

/** A request's task as the pages name it: its purpose's title in the registry ("Summary", "Review", "Categories"). */
export function taskTitle(purpose: string): string {
  return isPurpose(purpose) ? purposeOf(purpose).title : purpose;
}

/**
 * What approving `request` would write: its proposal against the invoice's targets now (`current`),
 * of a by-line purpose only the lines the requester ticked. Null when it cannot be drawn (the invoice
 * out of reach, an unknown purpose, a proposal that fails its schema). The page and GET /api/approvals/:id show this.
 */
export function changesToApprove(
  request: Pick<ApprovalView, "purpose" | "proposal" | "accept">,
  current: CurrentValues | null,
): PlannedChange[] | null {
  if (!current || !isPurpose(request.purpose)) return null;
  const all = plannedChanges(request.purpose, request.proposal, current);
  return all?.filter((c) => !request.accept || request.accept.includes(c.key.toLowerCase())) ?? null;
}
