// GET /api/invoices – the organization's invoices, filtered as the list page filters them (?q=&status=&state=&due=&sort=).
// POST /api/invoices – a new invoice of the actor's organization.
import { z } from "zod";
import { authedRoute, json, readBody, memberWriteRoute } from "@/app/_lib/http";
import { getInvoice } from "@/lib/invoices";
import { createInvoice, fieldOf, NewInvoice } from "@/lib/invoice-create";
import { listInvoicesWithState, listQueryOf } from "@/lib/invoice-list";
import { invoiceDetailJson, invoiceJson } from "@/app/_lib/serialize";

export const GET = authedRoute(async ({ req, db, actor }) => {
  const { rows } = await listInvoicesWithState(db, actor, listQueryOf(new URL(req.url).searchParams));
  return json(rows.map((row) => ({ ...invoiceJson(row), owner_name: row.ownerName, owner: { id: row.ownerId, name: row.ownerName } })));
});

// The session is held in the creating transaction (`held`), as every write's is.
export const POST = memberWriteRoute(async ({ req, db, held, member: actor }) => {
  const body = await readBody(req, z.unknown());
  if (!body.ok) return body;
  const input = NewInvoice.safeParse(body.value);
  if (!input.success) return { ok: false, code: "invalid_request", more: { field: fieldOf(input.error) } };
  const result = await createInvoice(held, actor, input.data);
  if (!result.ok) return result;
  const invoice = await getInvoice(db, actor, result.id);
  return json(invoiceDetailJson(invoice!, null, null, null), 201);
});
