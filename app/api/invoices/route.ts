import { authedRoute, json } from "@/lib/http";
import { listInvoices } from "@/lib/invoices";
import { invoiceJson } from "@/lib/serialize";

export const GET = authedRoute(async ({ db, actor }) => json((await listInvoices(db, actor.id)).map(invoiceJson)));
