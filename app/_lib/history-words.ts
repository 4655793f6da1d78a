// The words a person reads about an invoice's own history and about a summary that went out of
// date: each kind of change, each field, each value before and after, in the viewer's formats.
// Keyed by the codes of lib/org-codes.ts; a kind without words here fails `tsc`. Client-safe.
import type { ChangeKind, FieldChange, InvoiceChanges } from "@/lib/org-codes";
import { formatDate, formatMoney } from "./format";
import type { PurposeWords } from "@/lib/purposes/types";

/** What the history says a change was. */
export const CHANGE_WORDS = {
  created: "Invoice created",
  imported: "Invoice imported",
  edited: "Invoice edited",
  owner_changed: "Owner changed",
  status_changed: "Status changed",
} as const satisfies Record<ChangeKind, string>;

/**
 * "Review attempt 2", "Summary attempt 3": an attempt named by its purpose (its words' `attempt`).
 * Numbers count the invoice's attempts of that purpose: the first review is "Review attempt 1"
 * whatever summaries came before it (lib/leases/read.ts attemptNumber).
 */
export const attemptWords = (words: Pick<PurposeWords, "attempt">, number: number) => `${words.attempt} ${number}`;

/** The history's opening sentence, before the zone its times are in. */
export const HISTORY_INTRO =
  "Every change to this invoice and every summary, review and category suggestion requested for it, newest first.";

/** Each field a change may record, as a label ("Due date") and inside a sentence ("due date"). */
const FIELDS: Record<string, string> = {
  number: "Invoice number",
  counterparty: "Counterparty",
  issued_on: "Issue date",
  due_on: "Due date",
  owner: "Owner",
  status: "Status",
  paid_on: "Payment date",
  currency: "Currency",
  total_cents: "Total",
};

const STATUS_WORDS: Record<string, string> = { open: "Open", paid: "Paid", void: "Void" };

/** A field's label: a known one in words, an unknown one from its code ("po_number" → "Po number"). */
export function fieldLabel(field: string): string {
  const known = FIELDS[field];
  if (known) return known;
  const spaced = field.replaceAll("_", " ");
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

export type ValueContext = { locale: string; currency: string; names: Record<string, string> };

/** One value before or after, as the viewer reads it. */
export function valueWords(field: string, value: FieldChange["from"], ctx: ValueContext): string {
  if (value === null || value === "") return "none";
  if (field === "owner") return ctx.names[String(value)] ?? "a former member";
  if (field === "status") return STATUS_WORDS[String(value)] ?? String(value);
  if (field.endsWith("_on") && typeof value === "string") return formatDate(value, ctx.locale);
  if (field.endsWith("_cents") && typeof value === "number") return formatMoney(value, ctx.currency, ctx.locale);
  return String(value);
}

/** "Due date: 04/12/2026 → 20/12/2026", one line per field, in the order recorded. */
export function changeLines(changes: InvoiceChanges, ctx: ValueContext): { field: string; text: string }[] {
  return Object.entries(changes).map(([field, change]) => ({
    field,
    text: `${fieldLabel(field)}: ${valueWords(field, change.from, ctx)} → ${valueWords(field, change.to, ctx)}`,
  }));
}

const listed = (names: string[]) => (names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names.at(-1)!}`);

/** "Summary written for version 3; the due date changed since." */
export function staleWords(stale: { summaryVersion: number; version?: number; changed: readonly string[] }): string {
  const names = stale.changed.map((f) => fieldLabel(f).toLowerCase());
  const what = names.length ? `the ${listed(names)}` : "the invoice";
  return `Summary written for version ${stale.summaryVersion}; ${what} changed since.`;
}

/** "Written for version 4." / "Written for version 4; the due date changed since." (the review notes). */
export function writtenForWords(version: number, changed: readonly string[]): string {
  if (!changed.length) return `Written for version ${version}.`;
  return `Written for version ${version}; the ${listed(changed.map((f) => fieldLabel(f).toLowerCase()))} changed since.`;
}

/** What the Owner form says after a post (the page's `?owner=` code). */
export const OWNER_NOTICES = {
  saved: "Owner changed.",
  forbidden: "Only an administrator of your organization can change an invoice's owner.",
  invalid_request: "That person is not a member of your organization. Choose someone from the list.",
  invoice_not_found: "This invoice could not be found.",
} as const;
export type OwnerNotice = keyof typeof OWNER_NOTICES;

export function isOwnerNotice(value: unknown): value is OwnerNotice {
  return typeof value === "string" && Object.hasOwn(OWNER_NOTICES, value);
}
