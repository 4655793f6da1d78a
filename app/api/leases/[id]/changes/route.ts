// GET /api/leases/:id/changes – what applying the lease's proposal would change ("what will change").
import { json, param, sessionCheckedRoute } from "@/app/_lib/http";
import { ownedInvoice } from "@/lib/access";
import { readLeaseForSession } from "@/lib/leases";
import { currentValues, plannedChanges } from "@/lib/purposes";
import { isPurpose } from "@/lib/purposes";

// The lease's actor only, as every lease route (another's lease is 404, as a missing one), and
// only while it is proposed: before, there is nothing to show; after, nothing can be applied.
// The changes are its proposal against the invoice's targets now, as the invoice page shows them.
export const GET = sessionCheckedRoute(async ({ db, actor, params }) => {
  const lease = await readLeaseForSession(db, { actorId: actor.id, sessionId: actor.sessionId }, param(params, "id"));
  if (lease === "signed_out") return "not_signed_in";
  if (!lease) return "lease_not_found";
  if (lease.status !== "proposed") return `lease_${lease.status}`;
  // The invoice is the actor's while their lease is proposed (an owner change withdraws it).
  const current = await currentValues(db, lease.invoiceId, ownedInvoice(actor.id));
  if (!current) return "invoice_changed";
  const changes = isPurpose(lease.purpose) ? plannedChanges(lease.purpose, lease.proposal, current) : null;
  if (!changes) return "proposal_unusable";
  return json({ lease_id: lease.id, changes: changes.map(({ key, label, before, after }) => ({ key, label, before, after })) });
});
