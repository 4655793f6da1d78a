import "server-only";
import { and, asc, desc, eq, getTableColumns, sql } from "drizzle-orm";
import { z } from "zod";
import { isUniqueViolation, type Db } from "@/db/client";
import { account, appUser, invoice, invoiceChange, invoiceLine, type Invoice, type InvoiceLine } from "@/db/schema";
import { editableInvoice, visibleInvoice, type Member } from "./access";
import { isUuid } from "./ids";
import type { InvoiceChanges } from "./org-codes";
import { isoDate, positiveInt4, text } from "./input";
import { lockLeasesInFlight, tellClosed, withdrawOutdated, type LeaseDispatch } from "./leases";

/**
 * An invoice as a member sees it, with what they may do with it, judged by the same statement
 * that read it: `owned` (theirs: they may summarize and apply), `editable` (lib/access.ts).
 */
export type InvoiceDetail = OwnedBy & {
  lines: (InvoiceLine & { categoryName: string | null })[];
  owned: boolean;
  editable: boolean;
  overdue: boolean;
};

/** Overdue: open, and due before the database's today. Derived in each statement that reads it, never stored. */
export const overdueSql = sql<boolean>`(${invoice.status} = 'open' and ${invoice.dueOn} < current_date)`;

/** An invoice with its owner's name, which every member of the organization may read. */
export type OwnedBy = Invoice & { ownerName: string };

/** Every invoice of the member's organization, with its owner's name. */
export async function listInvoices(db: Db, member: Member): Promise<OwnedBy[]> {
  return db
    .select({ ...getTableColumns(invoice), ownerName: appUser.name })
    .from(invoice)
    .innerJoin(appUser, eq(appUser.id, invoice.ownerId))
    .where(visibleInvoice(member))
    .orderBy(desc(invoice.issuedOn), asc(invoice.number));
}

/** An invoice of the member's organization with its lines; null for one of another organization, as for a missing id. */
export async function getInvoice(db: Db, member: Member, invoiceId: unknown): Promise<InvoiceDetail | null> {
  if (!isUuid(invoiceId)) return null;
  const [row] = await db
    .select({
      ...getTableColumns(invoice),
      owned: sql<boolean>`${invoice.ownerId} = ${member.id}`,
      editable: sql<boolean>`${editableInvoice(member)}`,
      overdue: overdueSql,
      ownerName: appUser.name,
    })
    .from(invoice)
    .innerJoin(appUser, eq(appUser.id, invoice.ownerId))
    .where(and(eq(invoice.id, invoiceId), visibleInvoice(member)));
  if (!row) return null;
  // Each line with its category's name from the chart of accounts (categorize_lines writes the code).
  const lines = await db
    .select({ ...getTableColumns(invoiceLine), categoryName: account.name })
    .from(invoiceLine)
    .leftJoin(account, eq(account.code, invoiceLine.category))
    .where(eq(invoiceLine.invoiceId, row.id))
    .orderBy(asc(invoiceLine.position), asc(invoiceLine.id));
  return { ...row, lines };
}

/** The version of an invoice of the member's organization, or null (missing, or another organization's). */
export async function invoiceVersion(db: Db, member: Member, invoiceId: string): Promise<number | null> {
  if (!isUuid(invoiceId)) return null;
  const [row] = await db
    .select({ version: invoice.version })
    .from(invoice)
    .where(and(eq(invoice.id, invoiceId), visibleInvoice(member)));
  return row?.version ?? null;
}

/** The fields a finance user may edit. Unknown keys (owner_id, version, summary...) are dropped. */
export const InvoicePatch = z
  .object({
    number: text().trim().min(1).max(64).optional(),
    counterparty: text().trim().min(1).max(200).optional(),
    issued_on: isoDate.optional(),
    due_on: isoDate.optional(),
    // Optimistic concurrency for forms: refuse if the invoice moved since it was shown.
    expected_version: positiveInt4.optional(),
  })
  .refine((p) => p.number ?? p.counterparty ?? p.issued_on ?? p.due_on, { message: "nothing to change" })
  .refine((p) => !p.issued_on || !p.due_on || p.due_on >= p.issued_on, {
    message: "due date before issue date",
    path: ["due_on"],
  });
export type InvoicePatch = z.infer<typeof InvoicePatch>;

export type UpdateInvoiceResult =
  | { ok: true; invoice: InvoiceDetail }
  | { ok: false; code: "invoice_not_found" | "invoice_changed" | "invalid_request" | "forbidden" | "invoice_number_taken" };

/** The edited fields, as invoice_change records them, and the invoice columns they are. */
const EDITABLE = { number: "number", counterparty: "counterparty", issued_on: "issuedOn", due_on: "dueOn" } as const;

/** Each field whose value differs, before and after. */
export function changesOf<K extends string>(
  before: Record<K, string | number | null>,
  after: Record<K, string | number | null>,
  fields: readonly K[],
): InvoiceChanges {
  const changes: InvoiceChanges = {};
  for (const f of fields) if (before[f] !== after[f]) changes[f] = { from: before[f], to: after[f] };
  return changes;
}

/**
 * Every change increments `version`, which fences the leases opened against the old one; the
 * leases in flight on the invoice are withdrawn in the same transaction (withdrawOutdated),
 * and their generations told to stop once it commits. The invoice's owner edits it, and an
 * admin of its organization; another member gets `forbidden`, another organization
 * `invoice_not_found`. The change goes into the invoice's history with each field before and
 * after, in the same transaction.
 */
export async function updateInvoice(
  db: Db,
  member: Member,
  invoiceId: unknown,
  patch: InvoicePatch,
  dispatch: LeaseDispatch,
): Promise<UpdateInvoiceResult> {
  if (!isUuid(invoiceId)) return { ok: false, code: "invoice_not_found" };
  const mine = and(eq(invoice.id, invoiceId), editableInvoice(member));
  const fields = (["number", "counterparty", "issued_on", "due_on"] as const).filter((f) => patch[f] !== undefined);
  const outcome = await db
    .transaction(async (tx) => {
      await lockLeasesInFlight(tx, invoiceId);
      const [before] = await tx
        .select({ number: invoice.number, counterparty: invoice.counterparty, issued_on: invoice.issuedOn, due_on: invoice.dueOn })
        .from(invoice)
        .where(mine)
        .for("update");
      if (!before) return null;
      const [row] = await tx
        .update(invoice)
        .set({
          ...(patch.number !== undefined && { number: patch.number }),
          ...(patch.counterparty !== undefined && { counterparty: patch.counterparty }),
          ...(patch.issued_on !== undefined && { issuedOn: patch.issued_on }),
          ...(patch.due_on !== undefined && { dueOn: patch.due_on }),
          version: sql`${invoice.version} + 1`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            mine,
            patch.expected_version === undefined ? undefined : eq(invoice.version, patch.expected_version),
            // Only one date may arrive; the pair must still be in order once applied.
            sql`coalesce(${patch.due_on ?? null}::date, ${invoice.dueOn}) >= coalesce(${patch.issued_on ?? null}::date, ${invoice.issuedOn})`,
          ),
        )
        .returning({
          id: invoice.id,
          version: invoice.version,
          number: invoice.number,
          counterparty: invoice.counterparty,
          issued_on: invoice.issuedOn,
          due_on: invoice.dueOn,
        });
      if (!row) return null;
      await tx.insert(invoiceChange).values({
        invoiceId: row.id,
        actorId: member.id,
        kind: "edited",
        version: row.version,
        changes: changesOf(before, row, Object.keys(EDITABLE) as (keyof typeof EDITABLE)[]),
      });
      return { id: row.id, withdrawn: await withdrawOutdated(tx, row.id, row.version, fields) };
    })
    .catch((error: unknown) => {
      if (isUniqueViolation(error, "invoice_org_number_idx")) return "invoice_number_taken" as const;
      throw error;
    });
  if (outcome === "invoice_number_taken") return { ok: false, code: outcome };
  if (!outcome) {
    const [exists] = await db
      .select({ version: invoice.version, editable: sql<boolean>`${editableInvoice(member)}` })
      .from(invoice)
      .where(and(eq(invoice.id, invoiceId), visibleInvoice(member)));
    if (!exists) return { ok: false, code: "invoice_not_found" };
    if (!exists.editable) return { ok: false, code: "forbidden" };
    if (patch.expected_version !== undefined && exists.version !== patch.expected_version) return { ok: false, code: "invoice_changed" };
    return { ok: false, code: "invalid_request" };
  }
  await tellClosed(dispatch, outcome.withdrawn, "invoice_changed");
  const detail = await getInvoice(db, member, outcome.id);
  return { ok: true, invoice: detail! };
}
