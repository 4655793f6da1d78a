import { authedRoute, json } from "@/app/_lib/http";
import { listInvoices } from "@/lib/invoices";
import { ownedInvoiceJson } from "@/app/_lib/serialize";

export const GET = authedRoute(async ({ db, actor }) => json((await listInvoices(db, actor)).map(ownedInvoiceJson)));
