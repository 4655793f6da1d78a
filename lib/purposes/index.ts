// The purpose registry: what a model may propose and where apply may write (docs/contract.md,
// Purposes; docs/decisions/0076). Each purpose is one file of this folder declaring everything
// about it (its reads, output, target, prompt, roles, whether it applies by line, the model
// lane's wire form, and every word a person reads about it); this record names them, and it is
// the one list of purposes: PURPOSES, the Purpose type and isPurpose are derived from it. The
// lease core (lib/leases) reads only this: open takes a purpose's roles and lifetime, generation
// its context and output schema, apply its target, the page its changes and words.
// Not client-safe (the definitions hold SQL and drizzle tables): a client component imports only
// the `Purpose` type from here, and receives a purpose's words and `byLine` as props.
import { sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { categorizeLinesPurpose } from "./categorize-lines";
import { reviewInvoicePurpose } from "./review-invoice";
import { summarizeInvoicePurpose } from "./summarize-invoice";
import type { CurrentValues, PlannedChange, PurposeDefinition, PurposeWords } from "./types";

export type * from "./types";

// The registry's one line per purpose, in the order the pages show them. tests/unit/purposes.test.ts
// holds every definition to its key and to complete words, target and wire form.
export const PURPOSE_DEFINITIONS = {
  summarize_invoice: summarizeInvoicePurpose,
  review_invoice: reviewInvoicePurpose,
  categorize_lines: categorizeLinesPurpose,
} as const satisfies Record<string, { name: string }>;

/**
 * What a lease may be opened for (inference_lease.purpose, POST /api/leases `purpose`, the model
 * seam's request): a key of the registry. The column is plain text with no CHECK (migration
 * 0000), so a new purpose needs no migration for its code; a row of a purpose no longer here
 * reads as unusable (apply) or as a summary (the words).
 */
export type Purpose = keyof typeof PURPOSE_DEFINITIONS;

/** Every purpose, in registry order. */
export const PURPOSES = Object.keys(PURPOSE_DEFINITIONS) as readonly Purpose[] as readonly [Purpose, ...Purpose[]];

export function isPurpose(value: unknown): value is Purpose {
  return typeof value === "string" && Object.hasOwn(PURPOSE_DEFINITIONS, value);
}

/** A purpose's definition, typed loosely for the core, which handles every purpose alike. */
export function purposeOf(name: Purpose): PurposeDefinition<unknown, Record<string, unknown>> {
  return PURPOSE_DEFINITIONS[name] as unknown as PurposeDefinition<unknown, Record<string, unknown>>;
}

/** A purpose's words, as the page hands them to its panels; a lease of no known purpose reads as a summary, as it did before purposes. */
export function purposeWordsOf(name: string | null | undefined): PurposeWords {
  return (isPurpose(name) ? purposeOf(name) : purposeOf("summarize_invoice")).words;
}

/** The `invoice.<column>` targets of every purpose, by SQL name: what currentValues reads as `invoice`. */
const INVOICE_TARGETS = [
  ...new Set(
    PURPOSES.flatMap((name) => purposeOf(name).target)
      .filter((column) => column.startsWith("invoice."))
      .map((column) => column.slice("invoice.".length)),
  ),
];

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
      json_build_object(${sql.join(
        INVOICE_TARGETS.map((column) => sql`${sql.raw(`'${column}'`)}, invoice.${sql.identifier(column)}`),
        sql`, `,
      )}) as targets,
      coalesce((select json_agg(json_build_object('id', l.id, 'position', l.position, 'description', l.description, 'category', l.category)
        order by l.position, l.id) from invoice_line l where l.invoice_id = invoice.id), '[]'::json) as lines,
      (select coalesce(json_object_agg(a.code, a.name), '{}'::json) from account a) as accounts
    from invoice where invoice.id = ${invoiceId} and ${where}`,
  );
  const row = rowsOf<{
    summary: string | null;
    review_notes: unknown;
    targets: Record<string, unknown>;
    lines: CurrentValues["lines"];
    accounts: Record<string, string>;
  }>(result)[0];
  if (!row) return null;
  // The lines' positions as the page numbers them: 0, 1, 2… in their order.
  const lines = row.lines.map((line, index) => ({ ...line, position: index }));
  return { invoice: row.targets, summary: row.summary, reviewNotes: row.review_notes, lines, accounts: row.accounts };
}

/** What applying the proposal would change, or null when the proposal is not one of its purpose's outputs. */
export function plannedChanges(purpose: Purpose, proposal: unknown, current: CurrentValues): PlannedChange[] | null {
  const definition = purposeOf(purpose);
  const output = definition.output.safeParse(proposal);
  return output.success ? definition.changes(output.data, current) : null;
}
