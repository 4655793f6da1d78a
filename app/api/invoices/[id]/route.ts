import { authedRoute, json, param, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { getInvoice, InvoicePatch } from "@/lib/invoices";
import { latestLeaseForInvoice, leaseHolderName, teammateLeaseInFlight } from "@/lib/leases";
import { updateInvoice } from "@/app/_lib/leases";
import { invoiceDetailJson } from "@/app/_lib/serialize";
import { resolveActor } from "@/lib/sessions";

export const GET = authedRoute(async ({ db, actor, params }) => {
  const invoice = await getInvoice(db, actor, param(params, "id"));
  if (!invoice) return "invoice_not_found";
  const [latest, heldBy, teammate] = await Promise.all([
    latestLeaseForInvoice(db, actor.id, invoice.id),
    leaseHolderName(db, actor.id, invoice.id),
    // A teammate's view only: the owner reads who else holds a lease in `lease_held_by`, by name alone.
    invoice.owned ? null : teammateLeaseInFlight(db, actor, invoice.id),
  ]);
  return json(invoiceDetailJson(invoice, latest, heldBy, teammate));
});

// The session is held in the edit's own transaction (`held`), and its end judged after the
// wait for the invoice row: a sign-out waits for the edit, and a session dead by then writes nothing.
export const PATCH = sessionCheckedRoute(async ({ req, db, held, actor: claim, params }) => {
  const id = param(params, "id");
  // The member's organization and role: an edit is not on a lease's path, so it pays this read.
  const actor = await resolveActor(db, { sid: claim.sessionId, uid: claim.id });
  if (!actor) return "not_signed_in";
  // The invoice first, so a foreign id is a 404 whatever the body says; then the role (403).
  const current = await getInvoice(db, actor, id);
  if (!current) return "invoice_not_found";
  if (!current.editable) return "forbidden";
  const body = await readBody(req, InvoicePatch);
  if (!body.ok) return body;
  const result = await updateInvoice(held, actor, id, body.value);
  if (!result.ok) return result;
  const [latest, heldBy, teammate] = await Promise.all([
    latestLeaseForInvoice(db, actor.id, result.invoice.id),
    leaseHolderName(db, actor.id, result.invoice.id),
    result.invoice.owned ? null : teammateLeaseInFlight(db, actor, result.invoice.id),
  ]);
  return json(invoiceDetailJson(result.invoice, latest, heldBy, teammate));
});
