// Data for the invoice-list scenarios: a user of their own (so the list holds exactly what the
// test made), invoices due relative to the database's today, and leases written by hand in
// any state, as the contract allows.
import { randomBytes } from "node:crypto";
import type { Sql } from "./db";

export type ListUser = { id: string; email: string; name: string };

/** A new user with the demo password (the seeded users' hash), named `name`. */
export async function newUser(sql: Sql, name: string): Promise<ListUser> {
  const email = `list-${randomBytes(4).toString("hex")}@example.test`;
  const [row] = await sql<{ id: string }[]>`
    insert into app_user (email, name, password_hash)
    select ${email}, ${name}, password_hash from app_user where email = 'alice@example.com'
    returning id`;
  return { id: row!.id, email, name };
}

export type ListInvoice = { id: string; number: string };

/** An invoice due `dueInDays` from the database's today (negative: overdue). */
export async function addInvoice(sql: Sql, ownerId: string, number: string, counterparty: string, dueInDays: number): Promise<ListInvoice> {
  const [row] = await sql<ListInvoice[]>`
    insert into invoice (owner_id, number, counterparty, currency, total_cents, issued_on, due_on)
    values (${ownerId}, ${number}, ${counterparty}, 'EUR', 125000, current_date - 40, current_date + ${dueInDays}::int)
    returning id, number`;
  return row!;
}

/** A lease in any state, its deadline `deadlineInSeconds` from the database's now. */
export async function addLease(
  sql: Sql,
  input: { invoiceId: string; actorId: string; status: string; closedReason?: string; deadlineInSeconds: number },
): Promise<string> {
  const proposal = input.status === "proposed" || input.status === "applied" ? { summary: "A summary.", model: "local" } : null;
  const [row] = await sql<{ id: string }[]>`
    insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at, closed_reason, proposal)
    values (${input.actorId}, ${input.invoiceId}, 'summarize_invoice', ${input.status},
            now() + make_interval(secs => ${input.deadlineInSeconds}), ${input.closedReason ?? null}, ${proposal ? sql.json(proposal) : null})
    returning id`;
  return row!.id;
}
