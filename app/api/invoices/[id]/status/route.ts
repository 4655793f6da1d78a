// POST /api/invoices/:id/status – mark an invoice paid (on a day), void, or open again.
import { json, param, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { getInvoice } from "@/lib/invoices";
import { StatusChange } from "@/lib/invoice-status";
import { latestLeaseForInvoice, leaseHolderName, teammateLeaseInFlight } from "@/lib/leases";
import { setInvoiceStatus } from "@/app/_lib/leases";
import { invoiceDetailJson } from "@/app/_lib/serialize";
import { resolveActor } from "@/lib/sessions";

// As PATCH /api/invoices/:id: the session held in the change's own transaction (`held`), the
// invoice looked up before the body, so a foreign id is a 404 whatever the body says; then the role (403).
export const POST = sessionCheckedRoute(async ({ req, db, held, actor: claim, params }) => {
  const id = param(params, "id");
  const actor = await resolveActor(db, { sid: claim.sessionId, uid: claim.id });
  if (!actor) return "not_signed_in";
  const current = await getInvoice(db, actor, id);
  if (!current) return "invoice_not_found";
  if (!current.editable) return "forbidden";
  const body = await readBody(req, StatusChange);
  if (!body.ok) return body;
  const result = await setInvoiceStatus(held, actor, id, body.value);
  if (!result.ok) return result;
  const [latest, heldBy, teammate] = await Promise.all([
    latestLeaseForInvoice(db, actor.id, result.invoice.id),
    leaseHolderName(db, actor.id, result.invoice.id),
    result.invoice.owned ? null : teammateLeaseInFlight(db, actor, result.invoice.id),
  ]);
  return json(invoiceDetailJson(result.invoice, latest, heldBy, teammate));
});
