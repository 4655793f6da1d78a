import "server-only";
// A summary is written at one version of its invoice (invoice.summary_version, set by apply);
// every write after it bumps the version. A summary is out of date once the invoice itself
// changed after it (an invoice_change row: an edit, a status, an owner), and the page and the list
// say so, with what changed since: those rows' fields. Another purpose's apply (review notes, the
// lines' categories) bumps the version too, to fence the leases in flight, but records no change
// and changes nothing a summary read, so it leaves the summary current. Nothing rewrites the
// summary: its owner may summarize again.
import { and, eq, gt, inArray, isNotNull, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { invoice } from "@/db/schema";
import { visibleInvoice, type Member } from "./access";

export type StaleSummary = {
  /** The version the summary was written at, and the invoice's now. */
  summaryVersion: number;
  version: number;
  /** The fields changed since (invoice_change keys: due_on, owner, status...), sorted; empty if none was recorded. */
  changed: string[];
};

/**
 * The out-of-date summaries among the member's organization's invoices (only `invoiceIds`, when
 * given), by invoice id. An invoice without a summary, or whose summary is current, is absent.
 */
export async function staleSummaries(db: Db, member: Member, invoiceIds?: string[]): Promise<Map<string, StaleSummary>> {
  if (invoiceIds && invoiceIds.length === 0) return new Map();
  const rows = await db
    .select({
      id: invoice.id,
      summaryVersion: sql<number>`${invoice.summaryVersion}`.mapWith(Number),
      version: invoice.version,
      // Written qualified: drizzle leaves a column bare in a select, and inside the subquery a bare
      // `version` would be the change's own.
      changed: sql<string[]>`coalesce((select jsonb_agg(distinct k order by k) from invoice_change c, jsonb_object_keys(c.changes) k
        where c.invoice_id = "invoice"."id" and c.version > "invoice"."summary_version"), '[]'::jsonb)`,
    })
    .from(invoice)
    .where(
      and(
        visibleInvoice(member),
        invoiceIds ? inArray(invoice.id, invoiceIds) : undefined,
        isNotNull(invoice.summary),
        isNotNull(invoice.summaryVersion),
        gt(invoice.version, invoice.summaryVersion),
        sql`exists (select 1 from invoice_change c where c.invoice_id = "invoice"."id" and c.version > "invoice"."summary_version")`,
      ),
    );
  return new Map(rows.map(({ id, ...stale }) => [id, stale]));
}

/** One invoice's out-of-date summary, or null (current, none, or not the member's organization's). */
export async function staleSummary(db: Db, member: Member, invoiceId: string): Promise<StaleSummary | null> {
  return (await staleSummaries(db, member, [invoiceId])).get(invoiceId) ?? null;
}

/**
 * The fields the invoice's own changes (invoice_change rows) touched after `version`, sorted:
 * empty when nothing but the AI's writes came after it. For the review notes, written at one
 * version as the summary is. Empty, too, for an invoice not of the member's organization.
 */
export async function changedSince(db: Db, member: Member, invoiceId: string, version: number): Promise<string[]> {
  const [row] = await db
    .select({
      changed: sql<string[]>`coalesce((select jsonb_agg(distinct k order by k) from invoice_change c, jsonb_object_keys(c.changes) k
        where c.invoice_id = "invoice"."id" and c.version > ${version}), '[]'::jsonb)`,
    })
    .from(invoice)
    .where(and(visibleInvoice(member), eq(invoice.id, invoiceId)));
  return row?.changed ?? [];
}
