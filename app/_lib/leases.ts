import "server-only";
// The web layer's one way to the lease writes that tell the generation: open, cancel, sign-out
// (this session or every one) and an invoice edit, status change or owner change, which withdraws the leases it outdates. The
// domain (lib/leases, lib/invoices) takes the dispatch as an argument, so Inngest functions,
// scripts and tests pass their own; here it is Inngest, sent after the response where the
// answer need not wait (inngest/dispatch.ts). The API routes and the server actions call these,
// never the domain's own versions nor inngest/dispatch (eslint.config.mjs holds app/ to that;
// docs/decisions/0054-route-refusals-and-one-door-to-the-dispatch.md).
import type { Db } from "@/db/client";
import type { Member } from "@/lib/access";
import { appEnv } from "@/lib/env";
import * as invoices from "@/lib/invoices";
import * as invoiceStatus from "@/lib/invoice-status";
import * as owners from "@/lib/invoice-owner";
import * as leases from "@/lib/leases";
import * as members from "@/lib/members";
import { inngestDispatch } from "@/inngest/dispatch";

/** A cookie's session: whose it is and which one. */
type SessionClaim = { actorId: string; sessionId: string };

/**
 * Opening a lease, for the API route and the Summarize action alike: the actor and session from
 * the request's session (never from the body), the lease's time from the environment.
 */
export async function openLeaseAs(
  db: Db,
  actor: { id: string; sessionId: string | null },
  request: { invoiceId: unknown; purpose: unknown },
): Promise<leases.OpenResult> {
  const input = {
    actorId: actor.id,
    sessionId: actor.sessionId,
    invoiceId: request.invoiceId,
    purpose: request.purpose,
    ttlSeconds: appEnv().leaseTtlSeconds,
  };
  return leases.openLease(db, input, inngestDispatch);
}

/** Cancel (a generation) or discard (a proposal): lib/leases cancelLease. */
export function cancelLease(db: Db, actorId: string, leaseId: unknown): Promise<leases.CancelResult> {
  return leases.cancelLease(db, actorId, leaseId, inngestDispatch);
}

/** Sign-out of one session, live or not, and its leases closed: lib/leases revokeSession. */
export function revokeSession(db: Db, claim: SessionClaim) {
  return leases.revokeSession(db, claim, inngestDispatch);
}

/** Sign out everywhere, from a live session: lib/leases revokeAllSessions. */
export function revokeAllSessions(db: Db, claim: SessionClaim) {
  return leases.revokeAllSessions(db, claim, inngestDispatch);
}

/** An invoice edit, and the leases it outdates withdrawn: lib/invoices updateInvoice. */
export function updateInvoice(
  db: Db,
  member: Member,
  invoiceId: unknown,
  patch: invoices.InvoicePatch,
): Promise<invoices.UpdateInvoiceResult> {
  return invoices.updateInvoice(db, member, invoiceId, patch, inngestDispatch);
}

/** A change of an invoice's status (paid, void, open again), and the leases it outdates withdrawn: lib/invoice-status. */
export function setInvoiceStatus(
  db: Db,
  member: Member,
  invoiceId: unknown,
  change: invoiceStatus.StatusChange,
): Promise<invoiceStatus.SetStatusResult> {
  return invoiceStatus.setInvoiceStatus(db, member, invoiceId, change, inngestDispatch);
}

/** A member removed: their sessions end and their leases in flight close as at sign-out (lib/members removeMember). */
export function removeMember(db: Db, actor: Member, memberId: unknown) {
  return members.removeMember(db, actor, memberId, inngestDispatch);
}

/** An invoice given to another member by an admin, and the leases it outdates withdrawn: lib/invoice-owner reassignInvoice. */
export function reassignInvoice(db: Db, member: Member, invoiceId: unknown, ownerId: string): Promise<owners.ReassignResult> {
  return owners.reassignInvoice(db, member, invoiceId, ownerId, inngestDispatch);
}
