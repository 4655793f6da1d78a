import { z } from "zod";
import { json, readBody, sessionCheckedRoute, authedRoute } from "@/app/_lib/http";
import { getInvoice, listInvoices } from "@/lib/invoices";
import { createInvoice, fieldOf, NewInvoice } from "@/lib/invoice-create";
import { invoiceDetailJson, invoiceJson } from "@/app/_lib/serialize";
import { resolveActor } from "@/lib/sessions";

export const GET = authedRoute(async ({ db, actor }) => json((await listInvoices(db, actor)).map(invoiceJson)));

// The session is held in the creating transaction (`held`), as every write's is.
export const POST = sessionCheckedRoute(async ({ req, db, held, actor: claim }) => {
  const actor = await resolveActor(db, { sid: claim.sessionId, uid: claim.id });
  if (!actor) return "not_signed_in";
  const body = await readBody(req, z.unknown());
  if (!body.ok) return body;
  const input = NewInvoice.safeParse(body.value);
  if (!input.success) return { ok: false, code: "invalid_request", more: { field: fieldOf(input.error) } };
  const result = await createInvoice(held, actor, input.data);
  if (!result.ok) return result;
  const invoice = await getInvoice(db, actor, result.id);
  return json(invoiceDetailJson(invoice!, null, null), 201);
});
