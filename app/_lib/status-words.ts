// The words a finance user reads about an invoice's status (open, paid, void, and overdue, which
// is derived), the list's status filter, and the refusals of a status change, keyed by code as
// lease-words.ts keys the lease's. `satisfies Record<...>` makes a missing case a type error.
import type { StatusFilter } from "@/lib/invoice-list";
import type { StatusCode } from "@/lib/invoice-status";
import type { InvoiceStatus } from "@/lib/org-codes";

/** How an invoice's status reads, overdue being an open invoice past its due date. */
export type ShownStatus = InvoiceStatus | "overdue";
export const STATUS_WORDS = {
  open: "Open",
  overdue: "Overdue",
  paid: "Paid",
  void: "Void",
} as const satisfies Record<ShownStatus, string>;

export const shownStatus = (i: { status: InvoiceStatus; overdue: boolean }): ShownStatus => (i.overdue ? "overdue" : i.status);

/** The list's status filter, in the order the menu lists them. */
export const STATUS_FILTER_WORDS = {
  any: "Any status",
  open: "Open (overdue included)",
  overdue: "Overdue",
  paid: "Paid",
  void: "Void",
} as const satisfies Record<StatusFilter, string>;

/** The buttons of the invoice page: the status each one sets. */
export const STATUS_ACTION_WORDS = {
  paid: "Mark paid",
  void: "Void",
  open: "Reopen",
} as const satisfies Record<InvoiceStatus, string>;

/** What the page says once a change went through (`?notice=status.<status>`). */
export const STATUS_DONE_WORDS = {
  paid: "Marked paid.",
  void: "The invoice was voided.",
  open: "The invoice is open again.",
} as const satisfies Record<InvoiceStatus, string>;

/** Why a status change was refused, in the words of the page. */
export const STATUS_REFUSAL_WORDS = {
  invalid_request: "Give the date the invoice was paid, as a date such as 2026-12-01.",
  paid_on_in_future: "The payment date cannot be later than today.",
  invoice_changed: "Not changed: someone else changed this invoice meanwhile. Look at it again and retry.",
  forbidden: "Only the invoice's owner or an administrator can change its status.",
  invoice_not_found: "This invoice no longer exists, or you no longer have access to it.",
} as const satisfies Record<StatusCode | "invalid_request", string>;
