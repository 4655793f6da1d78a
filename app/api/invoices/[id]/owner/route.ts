// PUT /api/invoices/:id/owner {owner_id} — an admin gives the invoice to another member of the
// organization: 200 the invoice (version incremented, its leases in flight withdrawn). The
// session is held in the change's own transaction (`held`), as the edit's is.
import { param, readBody, memberWriteRoute } from "@/app/_lib/http";
import { reassignInvoice } from "@/app/_lib/leases";
import { invoiceAnswer } from "@/app/_lib/invoice-answer";
import { getInvoice } from "@/lib/invoices";
import { OwnerChange } from "@/lib/invoice-owner";

export const PUT = memberWriteRoute(async ({ req, db, held, member: actor, params }) => {
  const id = param(params, "id");
  // The invoice first, so another organization's id is a 404 whatever the body says.
  if (!(await getInvoice(db, actor, id))) return "invoice_not_found";
  const body = await readBody(req, OwnerChange);
  if (!body.ok) return body;
  const result = await reassignInvoice(held, actor, id, body.value.owner_id);
  if (!result.ok) return result;
  return invoiceAnswer(db, actor, result.invoice);
});
