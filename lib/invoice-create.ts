import "server-only";
// Invoices coming in: one by the API or the form (createInvoice), many by a CSV import
// (lib/invoice-import.ts). Both insert through insertInvoices, whose INSERT ... SELECT carries
// the role rule of lib/access.ts, so the membership is judged by the statement that writes.
import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { isUniqueViolation, rowsOf, type Db, type Tx } from "@/db/client";
import { invoice, invoiceChange, invoiceLine } from "@/db/schema";
import { memberMay, memberOf, visibleInvoice, type Member } from "./access";
import { INT4_MAX, isoDate, positiveInt4, text } from "./input";
import { canonicalKey, isUuid } from "./ids";

export const MAX_LINES = 200;

// The currencies ISO 4217 lists, as the runtime's ICU knows them (three upper-case letters).
const CURRENCIES = new Set(Intl.supportedValuesOf("currency"));

/** Each field's rule, shared by the JSON body, the form and each CSV row. */
export const invoiceField = {
  number: text().trim().min(1).max(64),
  counterparty: text().trim().min(1).max(200),
  currency: z.string().refine((c) => /^[A-Z]{3}$/.test(c) && CURRENCIES.has(c), { message: "not an ISO 4217 currency code" }),
  issued_on: isoDate,
  due_on: isoDate,
};
export const lineField = {
  description: text().trim().min(1).max(200),
  quantity: positiveInt4,
  unit_price_cents: z.number().int().min(0).max(INT4_MAX),
};

export const NewLine = z.object(lineField);
export type NewLine = z.infer<typeof NewLine>;

/** The sum of the lines' amounts; larger than an `integer` column holds is refused, not wrapped. */
export const totalOf = (lines: readonly NewLine[]) => lines.reduce((sum, l) => sum + l.quantity * l.unit_price_cents, 0);

export const NewInvoice = z
  .object({
    ...invoiceField,
    lines: z.array(NewLine).min(1).max(MAX_LINES),
    // As the database spells ids (lower case), so that naming oneself is never "for others".
    owner_id: z.string().refine(isUuid, { message: "not a user id" }).transform(canonicalKey).optional(),
  })
  .refine((i) => i.due_on >= i.issued_on, { message: "due date before issue date", path: ["due_on"] })
  .refine((i) => totalOf(i.lines) <= INT4_MAX, { message: "total too large", path: ["lines"] });
export type NewInvoice = z.infer<typeof NewInvoice>;

/** The field a refused body is refused for, as `lines.0.quantity`. */
export function fieldOf(error: z.ZodError): string {
  return error.issues[0]?.path.map(String).join(".") ?? "";
}

export type CreateInvoiceResult =
  | { ok: true; id: string }
  | { ok: false; code: "forbidden" | "invoice_number_taken" }
  | { ok: false; code: "invalid_request"; more: { field: string } };

type Row = Omit<NewInvoice, "owner_id" | "lines"> & { lines: NewLine[] };

/**
 * Inserts the invoices for `ownerId` in the member's organization, if the statement finds the
 * member allowed `act` there and the owner a member of it (lib/access.ts). `skipTaken`: a
 * number the organization already has is passed over (ON CONFLICT DO NOTHING on the org/number
 * index), so an import run twice, or two at once, skips rather than fails; else it is a unique
 * violation for the caller to answer. Returns what was inserted, by number. Rows are inserted
 * in number order, so two imports of the same numbers take the index's locks in one order.
 */
async function insertInvoices(
  tx: Tx,
  member: Member,
  ownerId: string,
  act: "create_invoice" | "create_for_others",
  rows: readonly Row[],
  skipTaken: boolean,
): Promise<Map<string, string>> {
  const allowed: SQL = sql`${memberMay(member.orgId, member.id, act)} and ${memberOf(member.orgId, ownerId)}`;
  const values = sql.join(
    rows.map(
      (r) =>
        sql`(${r.number}::text, ${r.counterparty}::text, ${r.currency}::text, ${totalOf(r.lines)}::int4, ${r.issued_on}::date, ${r.due_on}::date)`,
    ),
    sql`, `,
  );
  const result = await tx.execute(sql`
    insert into ${invoice} (owner_id, org_id, number, counterparty, currency, total_cents, issued_on, due_on)
    select ${ownerId}::uuid, ${member.orgId}::uuid, v.number, v.counterparty, v.currency, v.total, v.issued_on, v.due_on
    from (values ${values}) as v(number, counterparty, currency, total, issued_on, due_on)
    where ${allowed}
    ${skipTaken ? sql`on conflict (org_id, number) do nothing` : sql``}
    returning id, number`);
  const inserted = new Map<string, string>();
  for (const row of rowsOf<{ id: string; number: string }>(result)) inserted.set(row.number, row.id);
  return inserted;
}

const LINE_BATCH = 1000;

async function insertLinesAndHistory(
  tx: Tx,
  actorId: string,
  kind: "created" | "imported",
  rows: readonly Row[],
  ids: Map<string, string>,
) {
  const lines = rows.flatMap((r) => {
    const invoiceId = ids.get(r.number);
    return invoiceId
      ? r.lines.map((l, position) => ({
          invoiceId,
          position,
          description: l.description,
          quantity: l.quantity,
          unitPriceCents: l.unit_price_cents,
        }))
      : [];
  });
  for (let i = 0; i < lines.length; i += LINE_BATCH) await tx.insert(invoiceLine).values(lines.slice(i, i + LINE_BATCH));
  const changes = [...ids.values()].map((invoiceId) => ({ invoiceId, actorId, kind, version: 1, changes: {} }));
  for (let i = 0; i < changes.length; i += LINE_BATCH) await tx.insert(invoiceChange).values(changes.slice(i, i + LINE_BATCH));
}

/**
 * One invoice with its lines and its `created` history row, in one transaction. The owner is
 * the member unless `owner_id` names another member of the organization, which needs the
 * admin's `create_for_others` (403 otherwise); an owner who is not a member is the field at fault.
 */
export async function createInvoice(db: Db, member: Member, input: NewInvoice): Promise<CreateInvoiceResult> {
  const ownerId = input.owner_id ?? member.id;
  const act = ownerId === member.id ? "create_invoice" : "create_for_others";
  const outcome = await db
    .transaction(async (tx) => {
      const ids = await insertInvoices(tx, member, ownerId, act, [input], false);
      if (ids.size === 0) return null;
      await insertLinesAndHistory(tx, member.id, "created", [input], ids);
      return ids.get(input.number)!;
    })
    .catch((error: unknown) => {
      if (isUniqueViolation(error, "invoice_org_number_idx")) return "invoice_number_taken" as const;
      throw error;
    });
  if (outcome === "invoice_number_taken") return { ok: false, code: outcome };
  if (outcome) return { ok: true, id: outcome };
  // Nothing inserted: which of the statement's two conditions failed.
  const [why] = rowsOf<{ may: boolean }>(await db.execute(sql`select ${memberMay(member.orgId, member.id, act)} as may`));
  if (!why?.may) return { ok: false, code: "forbidden" };
  return { ok: false, code: "invalid_request", more: { field: "owner_id" } };
}

export type ImportOutcome = { created: number; skipped: number } | null;

const INVOICE_BATCH = 500;

/**
 * The invoices of a validated import, owned by the importer, in one transaction, inserted in
 * batches; a number the organization already has is skipped. Null: the member may not create
 * invoices (no longer a member), and nothing was written.
 */
export async function importInvoices(db: Db, member: Member, rows: readonly Row[]): Promise<ImportOutcome> {
  const sorted = [...rows].sort((a, b) => (a.number < b.number ? -1 : a.number > b.number ? 1 : 0));
  return db.transaction(async (tx) => {
    const [may] = rowsOf<{ may: boolean }>(await tx.execute(sql`select ${memberMay(member.orgId, member.id, "create_invoice")} as may`));
    if (!may?.may) return null;
    let created = 0;
    for (let i = 0; i < sorted.length; i += INVOICE_BATCH) {
      const batch = sorted.slice(i, i + INVOICE_BATCH);
      const ids = await insertInvoices(tx, member, member.id, "create_invoice", batch, true);
      await insertLinesAndHistory(tx, member.id, "imported", batch, ids);
      created += ids.size;
    }
    return { created, skipped: sorted.length - created };
  });
}

/** How many of these numbers the organization already has: the preview's "will be skipped". */
export async function takenNumbers(db: Db, member: Member, numbers: readonly string[]): Promise<Set<string>> {
  const taken = new Set<string>();
  for (let i = 0; i < numbers.length; i += LINE_BATCH) {
    const batch = numbers.slice(i, i + LINE_BATCH);
    if (batch.length === 0) continue;
    const result = await db.execute(
      sql`select number from ${invoice} where ${visibleInvoice(member)} and number in (${sql.join(
        batch.map((n) => sql`${n}`),
        sql`, `,
      )})`,
    );
    for (const row of rowsOf<{ number: string }>(result)) taken.add(row.number);
  }
  return taken;
}
