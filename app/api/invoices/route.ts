// GET /api/invoices – the organization's invoices, filtered as the list page filters them (?q=&status=&state=&due=&sort=).
import { authedRoute, json } from "@/app/_lib/http";
import { listInvoicesWithState, listQueryOf } from "@/lib/invoice-list";
import { invoiceJson } from "@/app/_lib/serialize";

export const GET = authedRoute(async ({ req, db, actor }) => {
  const { rows } = await listInvoicesWithState(db, actor, listQueryOf(new URL(req.url).searchParams));
  return json(rows.map((row) => ({ ...invoiceJson(row), owner_name: row.ownerName })));
});
