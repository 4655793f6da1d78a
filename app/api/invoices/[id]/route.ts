import { authedRoute, param, readBody, memberWriteRoute } from "@/app/_lib/http";
import { getInvoice, InvoicePatch } from "@/lib/invoices";
import { updateInvoice } from "@/app/_lib/leases";
import { invoiceAnswer } from "@/app/_lib/invoice-answer";

export const GET = authedRoute(async ({ db, actor, params }) => {
  const invoice = await getInvoice(db, actor, param(params, "id"));
  if (!invoice) return "invoice_not_found";
  return invoiceAnswer(db, actor, invoice);
});

// The session is held in the edit's own transaction (`held`), and its end judged after the
// wait for the invoice row: a sign-out waits for the edit, and a session dead by then writes nothing.
export const PATCH = memberWriteRoute(async ({ req, db, held, member: actor, params }) => {
  const id = param(params, "id");
  // The invoice first, so a foreign id is a 404 whatever the body says; then the role (403).
  const current = await getInvoice(db, actor, id);
  if (!current) return "invoice_not_found";
  if (!current.editable) return "forbidden";
  const body = await readBody(req, InvoicePatch);
  if (!body.ok) return body;
  const result = await updateInvoice(held, actor, id, body.value);
  if (!result.ok) return result;
  return invoiceAnswer(db, actor, result.invoice);
});
