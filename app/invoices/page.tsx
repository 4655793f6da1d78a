import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { listInvoices } from "@/lib/invoices";
import { requireActor } from "@/app/_lib/actor";
import { formatDate, formatMoney } from "@/app/_lib/format";

export const metadata: Metadata = { title: "Invoices" };

export default async function InvoicesPage() {
  const actor = await requireActor();
  const invoices = await listInvoices(await getDb(), actor.id);
  return (
    <>
      <h1>Your invoices</h1>
      {invoices.length === 0 ? (
        <p className="muted">You have no invoices yet.</p>
      ) : (
        <ul className="invoice-list">
          {invoices.map((inv) => (
            <li key={inv.id} className="card">
              <Link href={`/invoices/${inv.id}`}>
                <div className="invoice-list__top">
                  <span className="invoice-list__number">{inv.number}</span>
                  <span className="invoice-list__total">{formatMoney(inv.totalCents, inv.currency)}</span>
                </div>
                <div>{inv.counterparty}</div>
                <div className="muted small">
                  Issued {formatDate(inv.issuedOn)} · due {formatDate(inv.dueOn)} ·{" "}
                  {inv.summary ? "summarized" : "no summary yet"}
                </div>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
