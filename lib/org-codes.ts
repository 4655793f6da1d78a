// The workspace's codes, defined once, as lib/lease-codes.ts defines the lease's: a member's role,
// an invoice's status, the kinds of change an invoice's history records. db/schema.ts writes its
// check constraints with them; lib/access.ts decides who may do what with them; the words a
// person reads for each are in app/_lib/org-words.ts. Client-safe and dependency-free.

/** membership.role. `admin` manages members and settings; `approver` approves (the four-eyes lane); `member` works on their invoices. */
export const ROLES = ["admin", "approver", "member"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** invoice.status. "Overdue" is not a status: an open invoice past its due date by the database clock. */
export const INVOICE_STATUSES = ["open", "paid", "void"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export function isInvoiceStatus(value: unknown): value is InvoiceStatus {
  return typeof value === "string" && (INVOICE_STATUSES as readonly string[]).includes(value);
}

/** invoice_change.kind: every way an invoice changes, besides a summary applied (a lease event). */
export const CHANGE_KINDS = ["created", "imported", "edited", "owner_changed", "status_changed"] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** The fields an invoice_change records, before and after. */
export type FieldChange = { from: string | number | null; to: string | number | null };
export type InvoiceChanges = Record<string, FieldChange>;
