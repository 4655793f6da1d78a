// The purpose registry: what a model may propose and where apply may write (docs/contract.md,
// Purposes). Each purpose is one file of this folder; this record names them, keyed by the codes
// of lib/lease-codes.ts PURPOSES, so a code without a definition (or the reverse) fails `tsc`.
// The lease core (lib/leases) reads only this: open takes a purpose's roles and lifetime,
// generation its context and output schema, apply its target, the page its changes.
import { sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { PURPOSES, type Purpose } from "@/lib/lease-codes";
import { categorizeLinesPurpose } from "./categorize-lines";
import { reviewInvoicePurpose } from "./review-invoice";
import { summarizeInvoicePurpose } from "./summarize-invoice";
import type { CurrentValues, PlannedChange, PurposeDefinition } from "./types";

export type * from "./types";

// The registry's one line per purpose.
export const PURPOSE_DEFINITIONS = {
  summarize_invoice: summarizeInvoicePurpose,
  review_invoice: reviewInvoicePurpose,
  categorize_lines: categorizeLinesPurpose,
} as const satisfies Record<Purpose, { name: Purpose }>;

/** A purpose's definition, typed loosely for the core, which handles every purpose alike. */
export function purposeOf(name: Purpose): PurposeDefinition<unknown, Record<string, unknown>> {
  return PURPOSE_DEFINITIONS[name] as unknown as PurposeDefinition<unknown, Record<string, unknown>>;
}

export { PURPOSES };

/**
 * Every purpose's context as one JSON expression chosen by the lease's purpose: the generate
 * step's one read statement evaluates only the branch of its lease's purpose.
 */
export function contextSql(purposeColumn: SQL | unknown): SQL<Record<string, unknown> | null> {
  const branches = PURPOSES.map((name) => {
    const context = PURPOSE_DEFINITIONS[name].context;
    return context ? sql` when ${sql.raw(`'${name}'`)} then ${context}` : sql``;
  });
  return sql<Record<string, unknown> | null>`(case ${purposeColumn}${sql.join(branches, sql``)} end)`;
}

/**
 * The current values of every purpose's targets on an invoice (its summary, review notes, the
 * lines with their categories, the chart of accounts), in one statement. `where` scopes the
 * invoice (the caller's rule of lib/access.ts); null when it matches none.
 */
export async function currentValues(db: Db | Tx, invoiceId: string, where: SQL): Promise<CurrentValues | null> {
  const result = await db.execute(
    sql`select invoice.summary, invoice.review_notes,
      coalesce((select json_agg(json_build_object('id', l.id, 'position', l.position, 'description', l.description, 'category', l.category)
        order by l.position, l.id) from invoice_line l where l.invoice_id = invoice.id), '[]'::json) as lines,
      (select coalesce(json_object_agg(a.code, a.name), '{}'::json) from account a) as accounts
    from invoice where invoice.id = ${invoiceId} and ${where}`,
  );
  const row = rowsOf<{ summary: string | null; review_notes: unknown; lines: CurrentValues["lines"]; accounts: Record<string, string> }>(
    result,
  )[0];
  if (!row) return null;
  // The lines' positions as the page numbers them: 0, 1, 2… in their order.
  const lines = row.lines.map((line, index) => ({ ...line, position: index }));
  return { summary: row.summary, reviewNotes: row.review_notes, lines, accounts: row.accounts };
}

/** What applying the proposal would change, or null when the proposal is not one of its purpose's outputs. */
export function plannedChanges(purpose: Purpose, proposal: unknown, current: CurrentValues): PlannedChange[] | null {
  const definition = purposeOf(purpose);
  const output = definition.output.safeParse(proposal);
  return output.success ? definition.changes(output.data, current) : null;
}
