// POST /api/invoices/:id/status – mark an invoice paid (on a day), void, or open again.
import { param, readBody, memberWriteRoute } from "@/app/_lib/http";
import { getInvoice } from "@/lib/invoices";
import { StatusChange } from "@/lib/invoice-status";
import { setInvoiceStatus } from "@/app/_lib/leases";
import { invoiceAnswer } from "@/app/_lib/invoice-answer";

// As PATCH /api/invoices/:id: the session held in the change's own transaction (`held`), the
// invoice looked up before the body, so a foreign id is a 404 whatever the body says; then the role (403).
export const POST = memberWriteRoute(async ({ req, db, held, member: actor, params }) => {
  const id = param(params, "id");
  const current = await getInvoice(db, actor, id);
  if (!current) return "invoice_not_found";
  if (!current.editable) return "forbidden";
  const body = await readBody(req, StatusChange);
  if (!body.ok) return body;
  const result = await setInvoiceStatus(held, actor, id, body.value);
  if (!result.ok) return result;
  return invoiceAnswer(db, actor, result.invoice);
});
