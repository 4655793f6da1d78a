import "server-only";
// An invoice's status: open, paid (on a day) or void. A change is an edit like any other: it
// bumps `version`, which fences and withdraws the leases in flight on the invoice, and goes into
// the invoice's history (`status_changed`), all in one transaction that holds the invoice row.
// "Overdue" is not stored: an open invoice whose due date is before the database's today.
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { invoice, invoiceChange } from "@/db/schema";
import { editableInvoice, visibleInvoice, type Member } from "./access";
import { isUuid } from "./ids";
import { isoDate, positiveInt4 } from "./input";
import { getInvoice, changesOf, type InvoiceDetail } from "./invoices";
import { lockLeasesInFlight, tellClosed, withdrawOutdated, type LeaseDispatch } from "./leases";
import { INVOICE_STATUSES } from "./org-codes";

/**
 * `{status, paid_on?, expected_version?}`: paid needs the day it was paid; open and void take
 * none (they clear it). Unknown keys are dropped.
 */
export const StatusChange = z
  .object({
    status: z.enum(INVOICE_STATUSES),
    paid_on: isoDate.nullish(),
    expected_version: positiveInt4.optional(),
  })
  .refine((c) => (c.status === "paid") === (c.paid_on != null), {
    message: "paid needs paid_on; open and void take none",
    path: ["paid_on"],
  });
export type StatusChange = z.infer<typeof StatusChange>;

export type StatusCode = "invoice_not_found" | "forbidden" | "invoice_changed" | "paid_on_in_future";
export type SetStatusResult = { ok: true; changed: boolean; invoice: InvoiceDetail } | { ok: false; code: StatusCode };

/**
 * Sets the invoice's status as the member (its owner, or an admin of its organization:
 * lib/access.ts `editableInvoice`). The same status and day again changes nothing and answers
 * as a success (a form posted twice), before `expected_version` is looked at; a paid day after
 * the database's today is refused. Otherwise the version goes up, the change is recorded with
 * each field before and after, and the leases in flight are withdrawn, told to stop after the commit.
 */
export async function setInvoiceStatus(
  db: Db,
  member: Member,
  invoiceId: unknown,
  change: StatusChange,
  dispatch: LeaseDispatch,
): Promise<SetStatusResult> {
  if (!isUuid(invoiceId)) return { ok: false, code: "invoice_not_found" };
  const mine = and(eq(invoice.id, invoiceId), editableInvoice(member));
  const paidOn = change.status === "paid" ? change.paid_on! : null;
  const outcome = await db.transaction(async (tx) => {
    // In updateInvoice's order (leases, then the invoice), so an edit and a status change never deadlock.
    await lockLeasesInFlight(tx, invoiceId);
    const [before] = await tx
      .select({
        status: invoice.status,
        paid_on: invoice.paidOn,
        version: invoice.version,
        future: sql<boolean>`coalesce(${paidOn}::date > current_date, false)`,
      })
      .from(invoice)
      .where(mine)
      .for("update");
    if (!before) return null;
    if (before.status === change.status && before.paid_on === paidOn) return { id: invoiceId, changed: false, withdrawn: [] };
    if (before.future) return "paid_on_in_future" as const;
    if (change.expected_version !== undefined && before.version !== change.expected_version) return "invoice_changed" as const;
    const [row] = await tx
      .update(invoice)
      .set({ status: change.status, paidOn, version: sql`${invoice.version} + 1`, updatedAt: sql`now()` })
      .where(mine)
      .returning({ id: invoice.id, version: invoice.version, status: invoice.status, paid_on: invoice.paidOn });
    if (!row) return null;
    const changes = changesOf(before, row, ["status", "paid_on"]);
    await tx.insert(invoiceChange).values({ invoiceId: row.id, actorId: member.id, kind: "status_changed", version: row.version, changes });
    return { id: row.id, changed: true, withdrawn: await withdrawOutdated(tx, row.id, row.version, Object.keys(changes)) };
  });
  if (outcome === "paid_on_in_future" || outcome === "invoice_changed") return { ok: false, code: outcome };
  if (!outcome) {
    // Not theirs to change: visible in their organization is 403, anything else the same 404 as a missing id.
    const [visible] = await db
      .select({ id: invoice.id })
      .from(invoice)
      .where(and(eq(invoice.id, invoiceId), visibleInvoice(member)));
    return { ok: false, code: visible ? "forbidden" : "invoice_not_found" };
  }
  await tellClosed(dispatch, outcome.withdrawn, "invoice_changed");
  const detail = await getInvoice(db, member, outcome.id);
  if (!detail) return { ok: false, code: "invoice_not_found" };
  return { ok: true, changed: outcome.changed, invoice: detail };
}

/** The database's today, YYYY-MM-DD: the day a "Mark paid" form starts from, and the latest it may name. */
export async function databaseToday(db: Db): Promise<string> {
  const [row] = await db.select({ today: sql<string>`current_date::text` }).from(sql`(select 1) as one`);
  return row!.today;
}
