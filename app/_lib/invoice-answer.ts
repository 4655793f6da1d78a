import "server-only";
import type { Db } from "@/db/client";
import type { Member } from "@/lib/access";
import type { InvoiceDetail } from "@/lib/invoices";
import { latestLeaseForInvoice, leaseHolderName, teammateLeaseInFlight } from "@/lib/leases";
import { invoiceDetailJson } from "./serialize";
import { json } from "./http";

/**
 * The invoice as GET /api/invoices/:id answers it to this member, with the lease state they may
 * see: the answer of every route that reads or changes one invoice (edit, status, owner).
 */
export async function invoiceAnswer(db: Db, member: Member, invoice: InvoiceDetail): Promise<Response> {
  const [latest, heldBy, teammate] = await Promise.all([
    latestLeaseForInvoice(db, member.id, invoice.id),
    leaseHolderName(db, member.id, invoice.id),
    // A teammate's view only: the owner reads who else holds a lease in `lease_held_by`, by name alone.
    invoice.owned ? null : teammateLeaseInFlight(db, member, invoice.id),
  ]);
  return json(invoiceDetailJson(invoice, latest, heldBy, teammate));
}
