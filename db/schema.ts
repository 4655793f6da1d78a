import { sql } from "drizzle-orm";
import {
  check,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  bigserial,
  boolean,
  numeric,
  bigint,
} from "drizzle-orm/pg-core";
import {
  APPLY_POLICIES,
  APPROVAL_DECISIONS,
  IN_FLIGHT_STATUSES,
  LEASE_STATUSES,
  type ApplyPolicy,
  type ApprovalDecision,
  type ClosedReason,
  type EventKind,
  type LeaseProposal,
  type LeaseStatus,
  type ReviewFinding,
} from "../lib/lease-codes";
import {
  CHANGE_KINDS,
  INVOICE_STATUSES,
  ROLES,
  type ChangeKind,
  type InvoiceChanges,
  type InvoiceStatus,
  type Role,
} from "../lib/org-codes";

/**
 * `'open','proposed'`: a list of codes as SQL literals, not bound parameters, so the planner
 * matches the partial indexes' predicate in generic plans too. Codes only: never user input.
 */
export const sqlCodes = (codes: readonly string[]) => sql.raw(codes.map((code) => `'${code}'`).join(","));

export const appUser = pgTable("app_user", {
  id: uuid("id").primaryKey().defaultRandom(),
  email: text("email").notNull().unique(),
  name: text("name").notNull(),
  passwordHash: text("password_hash").notNull(),
  // When the user was last removed from an organization (lib/members.ts removeMember). Such a user
  // gets no organization of their own on their next need (user_home_org, migration 0009): sign-in
  // refuses them, no_organization (docs/decisions/0077).
  removedAt: timestamp("removed_at", { withTimezone: true }),
});

// A workspace: it owns invoices; people belong to it through a membership with a role.
export const organization = pgTable("organization", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

// Who belongs to which organization, as what. A user may hold several memberships (the key is
// the pair); a session works in one of them (app_session.org_id).
export const membership = pgTable(
  "membership",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => appUser.id, { onDelete: "cascade" }),
    role: text("role").$type<Role>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.userId] }),
    check("membership_role_check", sql`${t.role} in (${sqlCodes(ROLES)})`),
    index("membership_user_idx").on(t.userId),
  ],
);

// An admin's invitation to join an organization with a role: a link holding a token, of which
// only the sha256 is kept. Single use (accepted_at), revocable, bound to its email and role.
export const invitation = pgTable(
  "invitation",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role").$type<Role>().notNull(),
    tokenSha256: text("token_sha256").notNull().unique(),
    invitedBy: uuid("invited_by").references(() => appUser.id, { onDelete: "set null" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true })
      .notNull()
      .default(sql`now() + interval '7 days'`),
    acceptedAt: timestamp("accepted_at", { withTimezone: true }),
    acceptedBy: uuid("accepted_by").references(() => appUser.id, { onDelete: "set null" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [check("invitation_role_check", sql`${t.role} in (${sqlCodes(ROLES)})`), index("invitation_org_idx").on(t.orgId)],
);

// Server-side record of every signed-in session. The cookie only names a row here, so
// signing out (revoked_at) ends the session even for a replayed copy of the cookie.
export const appSession = pgTable("app_session", {
  id: uuid("id").primaryKey().defaultRandom(),
  userId: uuid("user_id")
    .notNull()
    .references(() => appUser.id, { onDelete: "cascade" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
  // The session's own end, judged by the database clock: the cookie's expiry is checked by
  // iron-session on the app's clock with 60 s of skew allowed, so it cannot be the last word.
  expiresAt: timestamp("expires_at", { withTimezone: true })
    .notNull()
    .default(sql`now() + interval '12 hours'`),
  // The organization this session works in, chosen at sign-in. The actor is resolved through
  // the membership (org_id, user_id), so a member removed or never added reads as signed out.
  orgId: uuid("org_id").references(() => organization.id, { onDelete: "cascade" }),
});

// Sign-in attempt counters (rate-limiter-flexible's Drizzle store), kept in the database so
// a limit holds across app instances. Keys are prefixed by what they count (email, address).
export const rateLimit = pgTable("rate_limit", {
  key: text("key").primaryKey(),
  points: integer("points").notNull().default(0),
  expire: timestamp("expire", { withTimezone: true }),
});

export const invoice = pgTable(
  "invoice",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    ownerId: uuid("owner_id")
      .notNull()
      .references(() => appUser.id),
    // Filled from the owner's membership by a trigger when an insert leaves it out (see the
    // migration), so an invoice seeded by hand with the contract's columns is valid.
    orgId: uuid("org_id")
      .notNull()
      .default(sql`null`)
      .references(() => organization.id),
    number: text("number").notNull(),
    counterparty: text("counterparty").notNull(),
    currency: text("currency").notNull(),
    totalCents: integer("total_cents").notNull(),
    issuedOn: date("issued_on", { mode: "string" }).notNull(),
    dueOn: date("due_on", { mode: "string" }).notNull(),
    summary: text("summary"),
    version: integer("version").notNull().default(1),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    status: text("status").$type<InvoiceStatus>().notNull().default("open"),
    paidOn: date("paid_on", { mode: "string" }),
    // The version the summary was written at (by the apply that wrote it): a later version
    // means the invoice changed since, and the page says what.
    summaryVersion: integer("summary_version"),
    // What the review_invoice purpose found, as applied (lib/purposes/review-invoice.ts): an array
    // of findings, and the version they were written at, as for the summary.
    reviewNotes: jsonb("review_notes").$type<ReviewFinding[]>(),
    reviewNotesVersion: integer("review_notes_version"),
  },
  (t) => [
    index("invoice_owner_idx").on(t.ownerId),
    uniqueIndex("invoice_org_number_idx").on(t.orgId, t.number),
    // A counterparty's invoices in an organization: what summarize_invoice and review_invoice read
    // of its history (lib/purposes), so a generation's one read stays an index lookup.
    index("invoice_org_counterparty_idx").on(t.orgId, sql`lower(${t.counterparty})`, t.currency),
    check("invoice_status_check", sql`${t.status} in (${sqlCodes(INVOICE_STATUSES)})`),
    check("invoice_paid_on_check", sql`(${t.status} = 'paid') = (${t.paidOn} is not null)`),
  ],
);

// An invoice's own history: every creation, edit, change of owner and change of status, with
// who made it, when (database clock) and each field before and after. A summary applied is a
// lease event, beside these on the page.
export const invoiceChange = pgTable(
  "invoice_change",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    invoiceId: uuid("invoice_id")
      .notNull()
      .references(() => invoice.id, { onDelete: "cascade" }),
    actorId: uuid("actor_id").references(() => appUser.id, { onDelete: "set null" }),
    at: timestamp("at", { withTimezone: true })
      .notNull()
      .default(sql`clock_timestamp()`),
    kind: text("kind").$type<ChangeKind>().notNull(),
    // The invoice's version once this change was made.
    version: integer("version").notNull(),
    changes: jsonb("changes").$type<InvoiceChanges>().notNull().default({}),
  },
  (t) => [
    check("invoice_change_kind_check", sql`${t.kind} in (${sqlCodes(CHANGE_KINDS)})`),
    index("invoice_change_invoice_idx").on(t.invoiceId, t.id),
  ],
);

export const invoiceLine = pgTable(
  "invoice_line",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    invoiceId: uuid("invoice_id")
      .notNull()
      .references(() => invoice.id, { onDelete: "cascade" }),
    position: integer("position").notNull().default(0),
    description: text("description").notNull(),
    quantity: integer("quantity").notNull(),
    unitPriceCents: integer("unit_price_cents").notNull(),
    // The line's account in the chart of accounts: written only by an apply of categorize_lines.
    category: text("category").references(() => account.code),
  },
  (t) => [index("invoice_line_invoice_idx").on(t.invoiceId)],
);

// The chart of accounts a line may be categorized into: fixed, loaded by the migration, the same
// for every organization.
export const account = pgTable("account", {
  code: text("code").primaryKey(),
  name: text("name").notNull(),
  // What the local model matches a line's description against (lower-case words).
  keywords: text("keywords")
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
});

export const inferenceLease = pgTable(
  "inference_lease",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    actorId: uuid("actor_id")
      .notNull()
      .references(() => appUser.id),
    invoiceId: uuid("invoice_id")
      .notNull()
      .references(() => invoice.id),
    purpose: text("purpose").notNull(),
    status: text("status").$type<LeaseStatus>().notNull(),
    deadlineAt: timestamp("deadline_at", { withTimezone: true }).notNull(),
    proposal: jsonb("proposal").$type<LeaseProposal>(),
    createdAt: timestamp("created_at", { withTimezone: true }).defaultNow(),
    // Additions of our own: each nullable or defaulted, so a row inserted with only the
    // contract's columns is valid.
    sessionId: uuid("session_id"),
    // The fencing token. Filled from invoice.version by a trigger when an insert leaves it
    // out (see the migration), so a hand-seeded lease is fenced like any other.
    invoiceVersion: integer("invoice_version"),
    closedReason: text("closed_reason").$type<ClosedReason>(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).defaultNow(),
    // A per-lease secret sent only in the lease's own lease/opened event. A proposal must
    // carry it back, so only the generation run this lease dispatched can propose for it.
    // Never serialised to a client. Defaulted, so a hand-seeded lease has one too.
    // The estimated cost of this lease's model call, reserved against the budget from open (capped
    // or not) until its call's final usage is recorded, whatever the lease's status; a retried
    // attempt draws its cost from it (lib/spend, docs/decisions/0075). Null once released.
    reservedCents: numeric("reserved_cents", { precision: 18, scale: 6, mode: "number" }),
    runNonce: text("run_nonce")
      .notNull()
      .default(sql`replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')`),
    // Set by proposeLease's conditional UPDATE, for the receipt (docs/decisions/0079): the purpose's
    // prompt version, the instant the proposal was judged in time, and the invoice it was made against.
    promptVersion: text("prompt_version"),
    proposedAt: timestamp("proposed_at", { withTimezone: true }),
    proposedInvoiceVersion: integer("proposed_invoice_version"),
    proposedInvoiceSha256: text("proposed_invoice_sha256"),
  },
  (t) => [
    check("inference_lease_status_check", sql`${t.status} in (${sqlCodes(LEASE_STATUSES)})`),
    // One lease in flight per invoice and purpose, enforced by the database.
    uniqueIndex("inference_lease_one_in_flight")
      .on(t.invoiceId, t.purpose)
      .where(sql`status in (${sqlCodes(IN_FLIGHT_STATUSES)})`),
    // Serves the expiry sweep: in-flight leases ordered by deadline.
    index("inference_lease_sweep_idx")
      .on(t.deadlineAt)
      .where(sql`status in (${sqlCodes(IN_FLIGHT_STATUSES)})`),
    index("inference_lease_actor_idx").on(t.actorId),
    // An invoice's attempts, newest first: the invoice page's latest lease and history, the
    // list's newest attempt per invoice. Without it these scan every closed lease of the
    // actor (or the table) once history grows (npm run bench lifecycle -- --scale). NULLS
    // FIRST is what `order by ... desc` means, so the index serves that order as written.
    index("inference_lease_invoice_history_idx").on(t.invoiceId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index("inference_lease_session_idx")
      .on(t.sessionId)
      .where(sql`status in (${sqlCodes(IN_FLIGHT_STATUSES)})`),
    // Serves the budget admission's sum (lib/spend admitCall): the reservations still held, by
    // deadline, so it reads only the leases whose deadline plus the grace has not passed yet,
    // whatever their status. A lease whose call was recorded holds none and is not in it.
    index("inference_lease_reserved_idx")
      .on(t.deadlineAt)
      .where(sql`reserved_cents is not null`),
  ],
);

export const leaseEvent = pgTable(
  "lease_event",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    leaseId: uuid("lease_id")
      .notNull()
      .references(() => inferenceLease.id, { onDelete: "cascade" }),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    kind: text("kind").$type<EventKind>().notNull(),
    detail: jsonb("detail"),
  },
  (t) => [index("lease_event_lease_idx").on(t.leaseId, t.id)],
);

// Every model call's usage and estimated cost (lib/spend): one row per call, written with the
// transition that ended it (propose, a late completion, a failure) or, for a call aborted by a
// close, on its own. `cost_cents` is fractional (a call costs a fraction of a cent).
export const modelUsage = pgTable(
  "model_usage",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    actorId: uuid("actor_id")
      .notNull()
      .references(() => appUser.id, { onDelete: "cascade" }),
    leaseId: uuid("lease_id")
      .notNull()
      .references(() => inferenceLease.id, { onDelete: "cascade" }),
    invoiceId: uuid("invoice_id").notNull(),
    purpose: text("purpose").notNull(),
    model: text("model").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    costCents: numeric("cost_cents", { precision: 18, scale: 6, mode: "number" }).notNull(),
    // How the call ended: proposed, late (a late completion), aborted (by a close), failed.
    outcome: text("outcome").notNull(),
    // The tokens are counted by us, not reported by the model (the local lane, an aborted call).
    estimated: boolean("estimated").notNull().default(false),
    // One row per call: the lease and the generation attempt, so a retried step records once.
    callKey: text("call_key").notNull().unique(),
    at: timestamp("at", { withTimezone: true })
      .notNull()
      .default(sql`clock_timestamp()`),
  },
  (t) => [index("model_usage_org_at_idx").on(t.orgId, t.at), index("model_usage_actor_at_idx").on(t.orgId, t.actorId, t.at)],
);

// An organization's spending caps, in whole cents; null is no cap, 0 admits no call. One row
// per organization, locked by every open of a lease that a cap applies to (lib/spend).
export const orgBudget = pgTable(
  "org_budget",
  {
    orgId: uuid("org_id")
      .primaryKey()
      .references(() => organization.id, { onDelete: "cascade" }),
    organizationDailyCents: integer("organization_daily_cents"),
    organizationMonthlyCents: integer("organization_monthly_cents"),
    memberDailyCents: integer("member_daily_cents"),
    memberMonthlyCents: integer("member_monthly_cents"),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    updatedBy: uuid("updated_by").references(() => appUser.id, { onDelete: "set null" }),
  },
  (t) => [
    check(
      "org_budget_caps_check",
      sql`coalesce(${t.organizationDailyCents}, 0) >= 0 and coalesce(${t.organizationMonthlyCents}, 0) >= 0 and coalesce(${t.memberDailyCents}, 0) >= 0 and coalesce(${t.memberMonthlyCents}, 0) >= 0`,
    ),
  ],
);

// The audit trail (docs/decisions/0080): one hash chain per organization, appended by deferred
// constraint triggers (audit_row_trigger, migration 0010) at the commit of what each entry records.
// No foreign key: deleting an organization or a row leaves its entries. Append-only (a trigger
// raises on UPDATE, DELETE and TRUNCATE); `npm run audit:verify` catches what gets past that.
export const AUDIT_OPS = ["insert", "update", "delete"] as const;
export type AuditOp = (typeof AUDIT_OPS)[number];
export const auditEntry = pgTable(
  "audit_entry",
  {
    orgId: uuid("org_id").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    at: timestamp("at", { withTimezone: true })
      .notNull()
      .default(sql`clock_timestamp()`),
    // The audited table, the row's key as text (its key columns joined by ':'), and what was done to it.
    source: text("source").notNull(),
    sourceKey: text("source_key").notNull(),
    op: text("op").$type<AuditOp>().notNull(),
    actorId: uuid("actor_id"),
    // RFC 8785 text of {actor_id, at, before?, key, op, row, source}; the hashes are sha256 hex:
    // content = sha256(canonical), entry = sha256(prev ':' seq ':' content).
    canonical: text("canonical").notNull(),
    contentSha256: text("content_sha256").notNull(),
    prevSha256: text("prev_sha256").notNull(),
    entrySha256: text("entry_sha256").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.seq] }),
    check("audit_entry_op_check", sql`${t.op} in (${sqlCodes(AUDIT_OPS)})`),
    index("audit_entry_org_at_idx").on(t.orgId, t.at),
  ],
);

// Each organization's chain head: the last entry's seq and hash. Every append locks it (the last
// lock a transaction takes, at its commit), so an organization's entries have one order.
export const auditHead = pgTable("audit_head", {
  orgId: uuid("org_id").primaryKey(),
  seq: bigint("seq", { mode: "number" }).notNull(),
  prevSha256: text("prev_sha256"),
  entrySha256: text("entry_sha256").notNull(),
});

// Every export of the trail (GET /api/audit/export): who, which days [from_day, to_day), the format,
// and the head when it was cut. Committed before the stream starts, and itself a chain entry.
export const AUDIT_EXPORT_FORMATS = ["csv", "json"] as const;
export const auditExport = pgTable(
  "audit_export",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id").notNull(),
    actorId: uuid("actor_id").notNull(),
    fromDay: date("from_day", { mode: "string" }).notNull(),
    toDay: date("to_day", { mode: "string" }).notNull(),
    format: text("format").$type<(typeof AUDIT_EXPORT_FORMATS)[number]>().notNull(),
    headSeq: bigint("head_seq", { mode: "number" }).notNull(),
    headSha256: text("head_sha256").notNull(),
    at: timestamp("at", { withTimezone: true })
      .notNull()
      .default(sql`clock_timestamp()`),
  },
  (t) => [check("audit_export_format_check", sql`${t.format} in (${sqlCodes(AUDIT_EXPORT_FORMATS)})`)],
);

// How an organization applies a purpose's proposals (docs/decisions/0078): by the lease's owner
// (`self`, also when there is no row) or after another person approves (`four_eyes`), within a
// review window of `review_hours` on the database clock. One row per organization and purpose.
export const approvalPolicy = pgTable(
  "approval_policy",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    purpose: text("purpose").notNull(),
    apply: text("apply").$type<ApplyPolicy>().notNull(),
    reviewHours: integer("review_hours").notNull().default(24),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    updatedBy: uuid("updated_by").references(() => appUser.id, { onDelete: "set null" }),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.purpose] }),
    check("approval_policy_apply_check", sql`${t.apply} in (${sqlCodes(APPLY_POLICIES)})`),
    check("approval_policy_review_hours_check", sql`${t.reviewHours} between 1 and 720`),
  ],
);

// A proposal submitted for approval under a four_eyes policy (docs/decisions/0078): frozen at
// submit (the proposal's sha256, the invoice version, the accepted lines), then decided once, by
// someone other than the requester (the CHECK below, whatever SQL writes it; a trigger of the
// migration allows only a first decision and keeps the frozen columns frozen). Its status is
// derived from the decision and its lease (lib/approvals/status.ts), never stored.
export const approvalRequest = pgTable(
  "approval_request",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    leaseId: uuid("lease_id")
      .notNull()
      .unique()
      .references(() => inferenceLease.id, { onDelete: "cascade" }),
    invoiceId: uuid("invoice_id")
      .notNull()
      .references(() => invoice.id, { onDelete: "cascade" }),
    purpose: text("purpose").notNull(),
    requesterId: uuid("requester_id")
      .notNull()
      .references(() => appUser.id, { onDelete: "cascade" }),
    requesterSessionId: uuid("requester_session_id"),
    // sha256 hex of the RFC 8785 canonical JSON of the lease's proposal as stored.
    proposalSha256: text("proposal_sha256").notNull(),
    invoiceVersion: integer("invoice_version").notNull(),
    // categorize_lines: the line ids the requester ticked; null: the whole proposal.
    accept: text("accept").array(),
    submittedAt: timestamp("submitted_at", { withTimezone: true })
      .notNull()
      .default(sql`clock_timestamp()`),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    decision: text("decision").$type<ApprovalDecision>(),
    // No ON DELETE action: a decided row never changes (the trigger), so its approver stays.
    approverId: uuid("approver_id").references(() => appUser.id),
    approverSessionId: uuid("approver_session_id"),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    comment: text("comment"),
  },
  (t) => [
    // Four eyes, in the database: no row can hold a self-approval, whatever writes it.
    check("approval_request_four_eyes", sql`${t.approverId} <> ${t.requesterId}`),
    check("approval_request_decision_check", sql`${t.decision} in (${sqlCodes(APPROVAL_DECISIONS)})`),
    check("approval_request_decided_check", sql`(${t.decision} is null) = (${t.decidedAt} is null)`),
    check("approval_request_comment_check", sql`char_length(${t.comment}) between 1 and 2000`),
    check("approval_request_decline_comment_check", sql`${t.decision} is distinct from 'declined' or ${t.comment} is not null`),
    check("approval_request_sha256_check", sql`${t.proposalSha256} ~ '^[0-9a-f]{64}$'`),
    // The queue: an organization's undecided requests.
    index("approval_request_queue_idx")
      .on(t.orgId, t.submittedAt)
      .where(sql`decision is null`),
  ],
);

export type AppUser = typeof appUser.$inferSelect;
export type Organization = typeof organization.$inferSelect;
export type Membership = typeof membership.$inferSelect;
export type Invitation = typeof invitation.$inferSelect;
export type InvoiceChange = typeof invoiceChange.$inferSelect;
export type Invoice = typeof invoice.$inferSelect;
export type InvoiceLine = typeof invoiceLine.$inferSelect;
export type InferenceLease = typeof inferenceLease.$inferSelect;
export type LeaseEvent = typeof leaseEvent.$inferSelect;
export type Account = typeof account.$inferSelect;
export type ModelUsage = typeof modelUsage.$inferSelect;
export type OrgBudget = typeof orgBudget.$inferSelect;
export type AuditEntry = typeof auditEntry.$inferSelect;
export type AuditExport = typeof auditExport.$inferSelect;
export type ApprovalPolicy = typeof approvalPolicy.$inferSelect;
export type ApprovalRequest = typeof approvalRequest.$inferSelect;

// A receipt for every write a lease causes (docs/decisions/0079): inserted by the statement that
// records `applied` (lib/leases/apply.ts recordApplied), one per lease, in the audit chain.
export const leaseReceipt = pgTable(
  "lease_receipt",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    leaseId: uuid("lease_id")
      .notNull()
      .unique()
      .references(() => inferenceLease.id, { onDelete: "cascade" }),
    invoiceId: uuid("invoice_id")
      .notNull()
      .references(() => invoice.id, { onDelete: "cascade" }),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    lane: text("lane").$type<"self" | "four_eyes">().notNull(),
    purpose: text("purpose").notNull(),
    // Null only for a lease seeded by hand.
    promptVersion: text("prompt_version"),
    model: text("model"),
    requesterId: uuid("requester_id").notNull(),
    requesterSessionId: uuid("requester_session_id"),
    approvalId: uuid("approval_id"),
    approverId: uuid("approver_id"),
    approverSessionId: uuid("approver_session_id"),
    approvedAt: timestamp("approved_at", { withTimezone: true }),
    proposalSha256: text("proposal_sha256").notNull(),
    proposedInvoiceVersion: integer("proposed_invoice_version"),
    proposedInvoiceSha256: text("proposed_invoice_sha256"),
    proposedAt: timestamp("proposed_at", { withTimezone: true }),
    writtenInvoiceVersion: integer("written_invoice_version").notNull(),
    writtenInvoiceSha256: text("written_invoice_sha256").notNull(),
    writtenAt: timestamp("written_at", { withTimezone: true }).notNull(),
    writtenKeys: text("written_keys").array().notNull(),
  },
  (t) => [
    check("lease_receipt_lane_check", sql`${t.lane} in ('self','four_eyes')`),
    check("lease_receipt_lane_approval", sql`(${t.lane} = 'four_eyes') = (${t.approvalId} is not null)`),
    check("lease_receipt_four_eyes", sql`${t.approverId} <> ${t.requesterId}`),
    check(
      "lease_receipt_approved",
      sql`(${t.approvalId} is null) = (${t.approverId} is null) and (${t.approvalId} is null) = (${t.approvedAt} is null)`,
    ),
    check("lease_receipt_sha256_check", sql`${t.proposalSha256} ~ '^[0-9a-f]{64}$' and ${t.writtenInvoiceSha256} ~ '^[0-9a-f]{64}$'`),
    index("lease_receipt_invoice_idx").on(t.invoiceId),
  ],
);
