import "server-only";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { invoice, invoiceLine, type Invoice, type InvoiceLine } from "@/db/schema";
import { isUuid } from "./ids";
import { isoDate, positiveInt4, text } from "./input";
import { lockLeasesInFlight, tellClosed, withdrawOutdated, type LeaseDispatch } from "./leases";

export type InvoiceDetail = Invoice & { lines: InvoiceLine[] };

export async function listInvoices(db: Db, actorId: string): Promise<Invoice[]> {
  return db.select().from(invoice).where(eq(invoice.ownerId, actorId)).orderBy(desc(invoice.issuedOn), asc(invoice.number));
}

export async function getInvoice(db: Db, actorId: string, invoiceId: unknown): Promise<InvoiceDetail | null> {
  if (!isUuid(invoiceId)) return null;
  const [row] = await db
    .select()
    .from(invoice)
    .where(and(eq(invoice.id, invoiceId), eq(invoice.ownerId, actorId)));
  if (!row) return null;
  const lines = await db
    .select()
    .from(invoiceLine)
    .where(eq(invoiceLine.invoiceId, row.id))
    .orderBy(asc(invoiceLine.position), asc(invoiceLine.id));
  return { ...row, lines };
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
  { ok: true; invoice: InvoiceDetail } | { ok: false; code: "invoice_not_found" | "invoice_changed" | "invalid_request" };

/**
 * Every change increments `version`, which fences the leases opened against the old one; the
 * leases in flight on the invoice are withdrawn in the same transaction (withdrawOutdated),
 * and their generations told to stop once it commits.
 */
export async function updateInvoice(
  db: Db,
  actorId: string,
  invoiceId: unknown,
  patch: InvoicePatch,
  dispatch: LeaseDispatch,
): Promise<UpdateInvoiceResult> {
  if (!isUuid(invoiceId)) return { ok: false, code: "invoice_not_found" };
  const mine = and(eq(invoice.id, invoiceId), eq(invoice.ownerId, actorId));
  const fields = (["number", "counterparty", "issued_on", "due_on"] as const).filter((f) => patch[f] !== undefined);
  const outcome = await db.transaction(async (tx) => {
    await lockLeasesInFlight(tx, invoiceId);
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
      .returning({ id: invoice.id, version: invoice.version });
    if (!row) return null;
    return { id: row.id, withdrawn: await withdrawOutdated(tx, row.id, row.version, fields) };
  });
  if (!outcome) {
    const [exists] = await db.select({ version: invoice.version }).from(invoice).where(mine);
    if (!exists) return { ok: false, code: "invoice_not_found" };
    if (patch.expected_version !== undefined && exists.version !== patch.expected_version) return { ok: false, code: "invoice_changed" };
    return { ok: false, code: "invalid_request" };
  }
  await tellClosed(dispatch, outcome.withdrawn, "invoice_changed");
  const detail = await getInvoice(db, actorId, outcome.id);
  return { ok: true, invoice: detail! };
}
