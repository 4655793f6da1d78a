// Direct reads (and a few seeds) on the run's database, so every scenario checks what was
// written, not only what the page says.
import { randomBytes } from "node:crypto";
import postgres from "postgres";

export type Sql = postgres.Sql;

export function connect(): Sql {
  const url = process.env.E2E_DATABASE_URL;
  if (!url) throw new Error("E2E_DATABASE_URL is unset: run the tests through `npx playwright test`");
  return postgres(url, { max: 2, onnotice: () => {} });
}

export type InvoiceRow = { id: string; number: string; counterparty: string; summary: string | null; version: number };
export type LeaseRow = {
  id: string;
  actor_id: string;
  invoice_id: string;
  status: string;
  closed_reason: string | null;
  proposal: { summary: string; model: string } | null;
  session_id: string | null;
  invoice_version: number | null;
};

export async function userId(sql: Sql, email: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`select id from app_user where email = ${email}`;
  if (!row) throw new Error(`no user ${email}: was the database seeded?`);
  return row.id;
}

/** A fresh invoice with two lines for `email`, so no scenario shares state with another. */
export async function createInvoice(sql: Sql, email: string, counterparty = "Northwind Traders"): Promise<InvoiceRow> {
  const owner = await userId(sql, email);
  const number = `E2E-${randomBytes(3).toString("hex").toUpperCase()}`;
  const lines = [
    { description: "Consulting, November", quantity: 10, unit: 120000 },
    { description: "Travel expenses", quantity: 1, unit: 34550 },
  ];
  const total = lines.reduce((sum, l) => sum + l.quantity * l.unit, 0);
  return sql.begin(async (tx) => {
    const [inv] = await tx<InvoiceRow[]>`
      insert into invoice (owner_id, number, counterparty, currency, total_cents, issued_on, due_on)
      values (${owner}, ${number}, ${counterparty}, 'EUR', ${total}, '2026-11-01', '2026-12-01')
      returning id, number, counterparty, summary, version`;
    for (const [position, l] of lines.entries()) {
      await tx`
        insert into invoice_line (invoice_id, position, description, quantity, unit_price_cents)
        values (${inv!.id}, ${position}, ${l.description}, ${l.quantity}, ${l.unit})`;
    }
    return inv!;
  });
}

export async function invoiceRow(sql: Sql, id: string): Promise<InvoiceRow> {
  const [row] = await sql<InvoiceRow[]>`select id, number, counterparty, summary, version from invoice where id = ${id}`;
  if (!row) throw new Error(`invoice ${id} is gone`);
  return row;
}

export async function leasesFor(sql: Sql, invoiceId: string): Promise<LeaseRow[]> {
  return sql<LeaseRow[]>`
    select id, actor_id, invoice_id, status, closed_reason, proposal, session_id, invoice_version
    from inference_lease where invoice_id = ${invoiceId} order by created_at, id`;
}

export async function leaseRow(sql: Sql, id: string): Promise<LeaseRow> {
  const [row] = await sql<LeaseRow[]>`
    select id, actor_id, invoice_id, status, closed_reason, proposal, session_id, invoice_version
    from inference_lease where id = ${id}`;
  if (!row) throw new Error(`lease ${id} not found`);
  return row;
}

export async function eventKinds(sql: Sql, leaseId: string): Promise<string[]> {
  const rows = await sql<{ kind: string }[]>`select kind from lease_event where lease_id = ${leaseId} order by id`;
  return rows.map((r) => r.kind);
}

export async function eventDetails(sql: Sql, leaseId: string, kind: string): Promise<unknown[]> {
  const rows = await sql<{ detail: unknown }[]>`
    select detail from lease_event where lease_id = ${leaseId} and kind = ${kind} order by id`;
  return rows.map((r) => r.detail);
}

/** A lease written by hand, as the contract allows: only its own columns plus a reason. */
export async function seedClosedLease(
  sql: Sql,
  input: { invoiceId: string; actorId: string; status: string; closedReason: string; events: { kind: string; detail?: object }[] },
): Promise<string> {
  return sql.begin(async (tx) => {
    const [lease] = await tx<{ id: string }[]>`
      insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at, closed_reason)
      values (${input.actorId}, ${input.invoiceId}, 'summarize_invoice', ${input.status}, now() + interval '60 seconds', ${input.closedReason})
      returning id`;
    for (const event of input.events) {
      await tx`insert into lease_event (lease_id, kind, detail) values (${lease!.id}, ${event.kind}, ${tx.json((event.detail ?? null) as never)})`;
    }
    return lease!.id;
  });
}
