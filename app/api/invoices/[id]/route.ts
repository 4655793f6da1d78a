import { authedRoute, json, param, problem, readBody } from "@/app/_lib/http";
import { getInvoice, InvoicePatch, updateInvoice } from "@/lib/invoices";
import { latestLeaseForInvoice, leaseHolderName } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";
import { invoiceDetailJson } from "@/app/_lib/serialize";

export const GET = authedRoute(async ({ db, actor, params }) => {
  const invoice = await getInvoice(db, actor.id, param(params, "id"));
  if (!invoice) return problem("invoice_not_found");
  const [latest, heldBy] = await Promise.all([latestLeaseForInvoice(db, actor.id, invoice.id), leaseHolderName(db, actor.id, invoice.id)]);
  return json(invoiceDetailJson(invoice, latest, heldBy));
});

export const PATCH = authedRoute(async ({ req, db, actor, params }) => {
  const id = param(params, "id");
  // Ownership first, so a foreign id is a 404 whatever the body says.
  if (!(await getInvoice(db, actor.id, id))) return problem("invoice_not_found");
  const body = await readBody(req, InvoicePatch);
  if (!body.ok) return problem(body.code);
  const result = await updateInvoice(db, actor.id, id, body.value, inngestDispatch);
  if (!result.ok) return problem(result.code);
  const [latest, heldBy] = await Promise.all([
    latestLeaseForInvoice(db, actor.id, result.invoice.id),
    leaseHolderName(db, actor.id, result.invoice.id),
  ]);
  return json(invoiceDetailJson(result.invoice, latest, heldBy));
});
