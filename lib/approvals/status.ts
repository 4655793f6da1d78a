// Where an approval request stands, derived, never stored (docs/decisions/0078): a decided
// request has its decision; otherwise it is `pending` while its lease is proposed in time,
// `expired` once the lease expired (or its window passed unrecorded), `withdrawn` once the lease
// was closed otherwise: the lease's closed_reason says why (invoice_changed, cancelled,
// signed_out). Every end of a request is an end of its lease, written where the lease ends.
import type { ApprovalDecision, ApprovalStatus, ClosedReason, DecisionRefusal, LeaseStatus } from "@/lib/lease-codes";

export type RequestState = {
  decision: ApprovalDecision | null;
  leaseStatus: LeaseStatus;
  closedReason: ClosedReason | null;
  /** The lease's deadline: the review window's end once submitted. */
  deadlineAt: Date;
  /** The database clock as the row was read. */
  now: Date;
};

export function approvalStatus(r: RequestState): ApprovalStatus {
  if (r.decision) return r.decision;
  if (r.leaseStatus === "expired") return "expired";
  if (r.leaseStatus === "proposed") return r.deadlineAt > r.now ? "pending" : "expired";
  // applied without a decision never happens (apply refuses a submitted lease); rejected: withdrawn.
  return "withdrawn";
}

/** What a later approve or decline answers, for a request that is no longer pending (0078's table). */
export function endedRefusal(r: RequestState): DecisionRefusal | null {
  const status = approvalStatus(r);
  switch (status) {
    case "pending":
      return null;
    case "approved":
    case "declined":
    case "expired":
      return `approval_${status}`;
    case "withdrawn":
      return r.closedReason === "invoice_changed" ? "invoice_changed" : "approval_withdrawn";
  }
}
