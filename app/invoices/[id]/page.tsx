import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { getInvoice } from "@/lib/invoices";
import { latestLeaseForInvoice } from "@/lib/leases";
import { leaseJson } from "@/lib/serialize";
import { requireActor } from "@/app/_lib/actor";
import { formatDate, formatMoney } from "@/app/_lib/format";
import { EditInvoiceForm } from "./edit-form";
import { LeasePanel } from "./lease-panel";

export const metadata: Metadata = { title: "Invoice" };

export default async function InvoicePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const actor = await requireActor();
  const db = await getDb();
  // Scoped to the actor in the query: someone else's invoice is as absent as a missing one.
  const invoice = await getInvoice(db, actor.id, id);
  if (!invoice) notFound();
  const latest = await latestLeaseForInvoice(db, actor.id, invoice.id);
  const lease = latest ? leaseJson(latest) : null;
  const money = (cents: number) => formatMoney(cents, invoice.currency);

  return (
    <>
      <Link href="/invoices" className="back-link">
        ← All invoices
      </Link>
      <h1>
        Invoice {invoice.number} <span className="muted">· {invoice.counterparty}</span>
      </h1>

      {/* Details and summary, then the lease panel, then lines and edits: on a phone the
          panel sits right under what it summarizes; on a wide screen it is a side column. */}
      <div className="invoice-grid">
        <div className="invoice-grid__top">
          <section className="card" aria-labelledby="details-heading">
            <h2 id="details-heading">Details</h2>
            <dl className="facts">
              <div>
                <dt>Counterparty</dt>
                <dd>{invoice.counterparty}</dd>
              </div>
              <div>
                <dt>Total</dt>
                <dd>{money(invoice.totalCents)}</dd>
              </div>
              <div>
                <dt>Issued</dt>
                <dd>{formatDate(invoice.issuedOn)}</dd>
              </div>
              <div>
                <dt>Due</dt>
                <dd>{formatDate(invoice.dueOn)}</dd>
              </div>
            </dl>
          </section>

          <section className="card" aria-labelledby="summary-heading">
            <h2 id="summary-heading">Summary on the invoice</h2>
            {invoice.summary ? (
              <p className="summary-text" data-testid="invoice-summary">
                {invoice.summary}
              </p>
            ) : (
              <p className="muted" data-testid="invoice-summary">
                No summary yet.
              </p>
            )}
          </section>
        </div>

        <div className="invoice-grid__panel">
          {/* Keyed by lease: a new lease starts a fresh panel and a fresh subscription. */}
          <LeasePanel key={lease?.lease_id ?? "none"} invoiceId={invoice.id} initial={lease} />
        </div>

        <div className="invoice-grid__bottom">
          <section className="card" aria-labelledby="lines-heading">
            <h2 id="lines-heading">Lines</h2>
            <div className="table-wrap">
              <table className="lines">
                <thead>
                  <tr>
                    <th scope="col">Description</th>
                    <th scope="col" className="num wide-only">
                      Qty
                    </th>
                    <th scope="col" className="num wide-only">
                      Unit price
                    </th>
                    <th scope="col" className="num">
                      Amount
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {invoice.lines.map((line) => (
                    <tr key={line.id}>
                      <td>
                        {line.description}
                        <span className="narrow-only muted small">
                          {line.quantity} × {money(line.unitPriceCents)}
                        </span>
                      </td>
                      <td className="num wide-only">{line.quantity}</td>
                      <td className="num wide-only">{money(line.unitPriceCents)}</td>
                      <td className="num">{money(line.quantity * line.unitPriceCents)}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row">Total</th>
                    <td className="wide-only" colSpan={2} />
                    <td className="num">{money(invoice.totalCents)}</td>
                  </tr>
                </tfoot>
              </table>
            </div>
          </section>

          <EditInvoiceForm
            invoice={{
              id: invoice.id,
              number: invoice.number,
              counterparty: invoice.counterparty,
              issued_on: invoice.issuedOn,
              due_on: invoice.dueOn,
              version: invoice.version,
            }}
          />
        </div>
      </div>
    </>
  );
}
