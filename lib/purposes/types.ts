// What a purpose declares (docs/contract.md, Purposes): everything the lease core needs to
// generate, show and apply a proposal for it, so the three checks, the run nonce, the fencing
// by invoice version, the stream, cancel and abort are the core's, the same for every purpose.
// A purpose says what it reads, what it may answer (a zod schema), what apply may write (its
// target, and nothing else), how long its lease lives, its prompt and prompt version, and who
// may ask for it.
import type { SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Tx } from "@/db/client";
import type { Purpose } from "@/lib/lease-codes";
import type { InvoiceForModel } from "@/lib/model/types";
import type { Role } from "@/lib/org-codes";

/** A column apply may write: `table.column`. The model test holds every apply to its purpose's list. */
export type TargetColumn = `invoice.${string}` | `invoice_line.${string}`;

/** The invoice as generation read it (as the lease's actor), and the organization it is in. */
export type PurposeInput = {
  orgId: string;
  invoice: Omit<InvoiceForModel, "lines"> & { lines: { id: string; description: string; quantity: number; unitPriceCents: number }[] };
};

/**
 * One change apply would make, as the page shows it before apply ("what will change") and apply
 * then writes: a target, its value now and its value after. `key` names it for a partial apply
 * (categorize_lines: the line's id); `label` is plain words ("Summary", "Line 2: Laptop").
 */
export type PlannedChange = { key: string; label: string; before: string | null; after: string | null };

/** The current values of a purpose's targets on the invoice, read by the core before a diff or an apply. */
export type CurrentValues = {
  summary: string | null;
  reviewNotes: unknown;
  lines: { id: string; position: number; description: string; category: string | null }[];
  /** The chart of accounts: code → name. */
  accounts: Record<string, string>;
};

export type ApplyInput<Output> = {
  invoiceId: string;
  /** The invoice's version as the lease was opened against it, locked and unchanged: the fence. */
  version: number;
  output: Output;
  current: CurrentValues;
  /** The keys of the changes the user accepted; undefined: all of them. */
  accept: readonly string[] | undefined;
};

/**
 * What apply wrote: `written` the keys of the changes made (empty when the user accepted none
 * that change anything), `invoice` the columns of invoice set besides version and updated_at.
 * The core bumps the version once, fenced, after this returns.
 */
export type ApplyWrite = {
  written: string[];
  invoiceSet: Record<string, unknown>;
  /** The proposal names something the invoice does not have (a line, an account): nothing is written. */
  unusable?: boolean;
};

export interface PurposeDefinition<Output = unknown, Context extends Record<string, unknown> = Record<string, unknown>> {
  name: Purpose;
  /** A finance user's name for it: the button and the panel's heading. */
  title: string;
  /** One sentence: what it proposes and where apply writes it. */
  description: string;
  /** Who may open a lease for it; the open statement states these roles (lib/access.ts memberOf). */
  roles: readonly Role[];
  /** Its lease's lifetime; null: LEASE_TTL_SECONDS. */
  ttlSeconds: number | null;
  /** Bumped whenever `instructions` change, and recorded with every proposal. */
  promptVersion: string;
  /** The system prompt of the openai-compatible lane. */
  instructions: string;
  /** What a proposal must be: the model's answer is parsed with it, and apply parses it again. */
  output: z.ZodType<Output>;
  /** Exactly the columns apply may write. */
  target: readonly TargetColumn[];
  /**
   * What it reads besides the invoice, as one JSON expression that the generate step's one read
   * statement evaluates (lib/leases/generate.ts), so a purpose adds no statement: it may refer to
   * the lease's invoice as `invoice.<column>` (joined as the lease's actor, so `invoice.org_id`
   * is the organization it may read) and must read nothing outside that organization. Null when
   * it needs nothing.
   */
  context: SQL<Context> | null;
  /** The `local` model: deterministic, from the invoice and the context alone. */
  local(input: PurposeInput, context: Context): Output;
  /** The proposal against the targets' values now: what the page shows before apply. */
  changes(output: Output, current: CurrentValues): PlannedChange[];
  /**
   * Whether the proposal can be applied to the invoice as it is (categorize_lines: each line is
   * the invoice's, each code the chart's), judged before anything is written, so apply can close
   * the lease as `proposal_unusable`. Absent: any output its schema accepts is usable.
   */
  usable?(output: Output, current: CurrentValues): boolean;
  /** Writes the accepted changes (the core holds the rows and fences the version). */
  apply(tx: Tx, input: ApplyInput<Output>): Promise<ApplyWrite>;
  /** A few numbers about a proposal for its `proposed` event (never the text itself). */
  describe(output: Output): Record<string, number>;
}
