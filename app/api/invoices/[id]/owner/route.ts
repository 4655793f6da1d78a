// PUT /api/invoices/:id/owner {owner_id} — an admin gives the invoice to another member of the
// organization: 200 the invoice (version incremented, its leases in flight withdrawn). The
// session is held in the change's own transaction (`held`), as the edit's is.
import { json, param, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { reassignInvoice } from "@/app/_lib/leases";
import { invoiceDetailJson } from "@/app/_lib/serialize";
import { getInvoice } from "@/lib/invoices";
import { OwnerChange } from "@/lib/invoice-owner";
import { latestLeaseForInvoice, leaseHolderName, teammateLeaseInFlight } from "@/lib/leases";
import { resolveActor } from "@/lib/sessions";

export const PUT = sessionCheckedRoute(async ({ req, db, held, actor: claim, params }) => {
  const id = param(params, "id");
  const actor = await resolveActor(db, { sid: claim.sessionId, uid: claim.id });
  if (!actor) return "not_signed_in";
  // The invoice first, so another organization's id is a 404 whatever the body says.
  if (!(await getInvoice(db, actor, id))) return "invoice_not_found";
  const body = await readBody(req, OwnerChange);
  if (!body.ok) return body;
  const result = await reassignInvoice(held, actor, id, body.value.owner_id);
  if (!result.ok) return result;
  const [latest, heldBy, teammate] = await Promise.all([
    latestLeaseForInvoice(db, actor.id, result.invoice.id),
    leaseHolderName(db, actor.id, result.invoice.id),
    result.invoice.owned ? null : teammateLeaseInFlight(db, actor, result.invoice.id),
  ]);
  return json(invoiceDetailJson(result.invoice, latest, heldBy, teammate));
});
