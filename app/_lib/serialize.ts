import type { Invoice } from "@/db/schema";
import type { InvoiceDetail, OwnedBy } from "@/lib/invoices";
import { isInFlight } from "@/lib/lease-codes";
import { sealEventsCursor, type LeaseView } from "@/lib/leases";
import type { Actor } from "@/lib/sessions";
import type { Purpose } from "@/lib/purposes";

// The API speaks snake_case JSON; the domain speaks camelCase. Mapped here, once.

export const actorJson = (a: Actor) => ({ id: a.id, email: a.email, name: a.name });

/** GET /api/session's actor: who, and in which organization as what (the role decides what the pages offer). */
export const sessionActorJson = (a: Actor) => ({ ...actorJson(a), org: { id: a.orgId, name: a.orgName }, role: a.role });

/** `overdue`: open and due before the database's today (lib/invoices.ts overdueSql). */
export const invoiceJson = (i: Invoice & { overdue: boolean }) => ({
  id: i.id,
  number: i.number,
  counterparty: i.counterparty,
  currency: i.currency,
  total_cents: i.totalCents,
  issued_on: i.issuedOn,
  due_on: i.dueOn,
  summary: i.summary,
  version: i.version,
  owner_id: i.ownerId,
  // The version the summary was written at: below `version`, the summary is out of date.
  summary_version: i.summaryVersion,
  updated_at: i.updatedAt.toISOString(),
  status: i.status,
  paid_on: i.paidOn,
  overdue: i.overdue,
});

/** An invoice of the list or the detail, with its owner: every member of the organization reads who owns it. */
export const ownedInvoiceJson = (i: OwnedBy & { overdue: boolean }) => ({ ...invoiceJson(i), owner: { id: i.ownerId, name: i.ownerName } });

/**
 * Someone else's lease in flight on the invoice, as a teammate may see it: who, for what, which
 * state, until when (the page's teammate panel says as much); no id, no proposal.
 */
export type TeammateLease = { actorName: string; purpose: Purpose; status: string; deadlineAt: Date };
export const teammateLeaseJson = (t: TeammateLease | null) =>
  t ? { name: t.actorName, purpose: t.purpose, status: t.status, deadline_at: t.deadlineAt.toISOString() } : null;

export const leaseJson = (l: LeaseView) => ({
  lease_id: l.id,
  invoice_id: l.invoiceId,
  purpose: l.purpose,
  status: l.status,
  deadline_at: l.deadlineAt.toISOString(),
  created_at: l.createdAt?.toISOString() ?? null,
  proposal: l.proposal,
  closed_reason: l.closedReason,
  server_now: l.now.toISOString(),
  events: l.events.map((e) => ({ at: e.at.toISOString(), kind: e.kind, detail: e.detail })),
  // Sent back as `?events_before=` for the page before these events: the event id sealed to
  // this lease, since ids are one counter for every lease (docs/decisions/0046).
  events_before: l.eventsBefore === null ? null : sealEventsCursor(l.id, l.eventsBefore),
});

/**
 * `heldBy`: the name of someone else whose lease is in flight on the invoice (it changed hands), or null;
 * `teammate`: someone else's lease in flight on it (lib/leases/read.ts teammateLeaseInFlight), or null.
 */
export function invoiceDetailJson(i: InvoiceDetail, latest: LeaseView | null, heldBy: string | null, teammate: TeammateLease | null) {
  const inFlight = latest && isInFlight(latest.status) ? latest : null;
  return {
    ...ownedInvoiceJson(i),
    // The review findings as applied (review_invoice), and the version they were written at, as for the summary.
    review_notes: i.reviewNotes ?? null,
    review_notes_version: i.reviewNotesVersion ?? null,
    lines: i.lines.map((line) => ({
      description: line.description,
      quantity: line.quantity,
      unit_price_cents: line.unitPriceCents,
      amount_cents: line.quantity * line.unitPriceCents,
      // The account categorize_lines wrote for the line (code and name), or null.
      category: line.category ? { code: line.category, name: line.categoryName } : null,
    })),
    lease: inFlight ? leaseJson(inFlight) : null,
    latest_lease: latest ? leaseJson(latest) : null,
    lease_held_by: heldBy ? { name: heldBy } : null,
    teammate_lease: teammateLeaseJson(teammate),
  };
}
