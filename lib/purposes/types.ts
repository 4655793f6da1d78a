// What a purpose declares (docs/contract.md, Purposes): everything the lease core needs to
// generate, show and apply a proposal for it, so the three checks, the run nonce, the fencing
// by invoice version, the stream, cancel and abort are the core's, the same for every purpose.
// A purpose says what it reads, what it may answer (a zod schema), what apply may write (its
// target, and nothing else), how long its lease lives, its prompt and prompt version, and who
// may ask for it.
import type { SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Tx } from "@/db/client";
import type { InvoiceForModel, ModelRequest } from "@/lib/model/types";
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
  /**
   * Every `invoice.<column>` that is some purpose's target, by its SQL name, as JSON: read from
   * the registry, so a purpose with a new target column finds its value here with no change to the core.
   */
  invoice: Record<string, unknown>;
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

/**
 * What a person reads about a lease of this purpose where the words differ from purpose to
 * purpose: plain data (no functions), so the server page hands them to the client panels as
 * props, and the words modules of app/_lib take them as an argument. `{name}` and `{until}` are
 * filled in by app/_lib/team-words.ts.
 */
export type PurposeWords = {
  heading: string;
  none: string;
  generating: string;
  proposed: string;
  /** The badge of a proposed lease. */
  ready: string;
  applied: string;
  changesHeading: string;
  /** The button that opens a lease of this purpose, and again after one ended. */
  open: string;
  openAgain: string;
  /** What the lease makes, in the sentences shared by every purpose ("summary", "review"). */
  noun: string;
  /** The timeline's line when it is ready ("Summary ready for review": not "Review ready for review"). */
  readyEvent: string;
  /** The timeline's line when it was applied. */
  appliedEvent: string;
  /** What was wrong with a proposal apply could not use, after the noun ("came back empty"). */
  unusable: string;
  /** The history's name of an attempt, before its number: "Review attempt" (2). */
  attempt: string;
  /** A teammate's line while it is being written, before its countdown: "{name} is reviewing the invoice". */
  teammateWriting: string;
  /** A teammate's line while it waits for its author: "A review by {name} waits for their decision until {until}". */
  teammateReview: string;
};

/**
 * How the openai-compatible lane (lib/model/openai-compatible.ts) asks for a purpose whose
 * model answer is not its output: the answer's schema (sent as the strict JSON schema) and how
 * an answer becomes the output; `toOutput` throws a ModelSchemaError for an answer that names
 * what the request does not have.
 */
export type Wire = { answer: z.ZodType; toOutput(answer: unknown, request: ModelRequest): unknown };

export interface PurposeDefinition<Output = unknown, Context extends Record<string, unknown> = Record<string, unknown>> {
  /** Its code, the registry's key (lib/purposes/index.ts): inference_lease.purpose, POST /api/leases `purpose`. */
  name: string;
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
   * Applies by line: its changes are keyed by line id, the panel shows a box per change, and
   * apply takes the ticked keys (`POST /api/leases/:id/apply` `{lines}`). Otherwise a proposal
   * is applied whole and a `lines` body is refused (invalid_lines).
   */
  byLine: boolean;
  /** Everything a person reads about it where purposes differ (PurposeWords). */
  words: PurposeWords;
  /**
   * The openai-compatible lane's wire form, built per request (its schema may depend on the
   * context, as categorize_lines' chart of accounts does). Absent: the model answers the output itself.
   */
  wire?(request: ModelRequest): Wire;
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
