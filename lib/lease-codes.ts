// The lease's codes, defined once: the strings the machine reads and writes (the columns'
// values, the events' kinds, the API's refusals, the page's data-display), and the sets and
// classifications derived from them. Everything else takes them from here: db/schema.ts types
// its columns and writes its check constraint and partial indexes with them, lib/leases/ writes
// them, the routes and pages test them. The words a person reads about each code are in
// app/_lib/lease-words.ts, keyed by these codes (`satisfies Record<Code, string>`), so a new
// status, reason or kind fails `tsc` until someone has said what it means to the user.
// Client-safe and dependency-free: the lease panel imports it, and db/schema.ts imports it by a
// relative path (drizzle-kit loads the schema without the `@/` alias).

/** A lease in flight: its generation is running (`open`) or its proposal waits for review (`proposed`). */
export const IN_FLIGHT_STATUSES = ["open", "proposed"] as const;
/** A lease that never changes again. */
export const TERMINAL_STATUSES = ["applied", "expired", "rejected"] as const;
/** inference_lease.status: every status is in flight or terminal, nothing between. */
export const LEASE_STATUSES = [...IN_FLIGHT_STATUSES, ...TERMINAL_STATUSES] as const;
export type LeaseStatus = (typeof LEASE_STATUSES)[number];
export type InFlightStatus = (typeof IN_FLIGHT_STATUSES)[number];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export function isInFlight(status: string): status is InFlightStatus {
  return (IN_FLIGHT_STATUSES as readonly string[]).includes(status);
}

export function isTerminal(status: string): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

// What a lease may be opened for is not a code of this file: the purposes are the registry's keys
// (lib/purposes/index.ts PURPOSES, Purpose, isPurpose), the one list of them (docs/decisions/0076).

/** Why a lease left the in-flight statuses (inference_lease.closed_reason); null while in flight and once applied. */
export const CLOSED_REASONS = [
  "deadline_passed",
  "cancelled",
  "signed_out",
  "invoice_changed",
  "actor_mismatch",
  "generation_failed",
  "dispatch_failed",
  "proposal_unusable",
  // An approver declined the request the owner submitted (the four-eyes lane, docs/decisions/0078).
  "declined",
] as const;
export type ClosedReason = (typeof CLOSED_REASONS)[number];

/** What a lease_event row records: a transition, or a refusal that changed nothing. */
export const EVENT_KINDS = [
  "opened",
  "proposed",
  "applied",
  "expired",
  "cancelled",
  "revoked",
  "invoice_changed",
  "late_completion",
  "actor_mismatch",
  "run_mismatch",
  "generation_failed",
  "dispatch_failed",
  "apply_refused",
  "cancel_refused",
  "proposal_unusable",
  // The four-eyes lane (docs/decisions/0078): the owner submitted the proposal for approval; an approver declined it.
  "submitted",
  "declined",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/**
 * Whether the lease is no longer open once this event is recorded: its transitions out of
 * `open`, and the refusals only ever recorded on a lease already out of it. `opened`, and
 * `run_mismatch`, `apply_refused` and `cancel_refused` (which an open lease can receive), are
 * not. A record, so a new kind cannot be left unclassified.
 */
export const LEAVES_OPEN: Record<EventKind, boolean> = {
  opened: false,
  proposed: true,
  applied: true,
  expired: true,
  cancelled: true,
  revoked: true,
  invoice_changed: true,
  late_completion: true,
  actor_mismatch: true,
  run_mismatch: false,
  generation_failed: true,
  dispatch_failed: true,
  apply_refused: false,
  cancel_refused: false,
  proposal_unusable: true,
  submitted: true,
  declined: true,
};

/**
 * Whether a person caused the event (asked, applied, discarded, signed out, was refused);
 * the rest are the summary service's or the clock's. A record, like LEAVES_OPEN.
 */
export const CAUSED_BY_ACTOR: Record<EventKind, boolean> = {
  opened: true,
  proposed: false,
  applied: true,
  expired: false,
  cancelled: true,
  revoked: true,
  invoice_changed: false,
  late_completion: false,
  actor_mismatch: false,
  run_mismatch: false,
  generation_failed: false,
  dispatch_failed: false,
  apply_refused: true,
  cancel_refused: true,
  proposal_unusable: false,
  submitted: true,
  // The approver's act, not the lease's actor's.
  declined: false,
};

export function isEventKind(value: unknown): value is EventKind {
  return typeof value === "string" && (EVENT_KINDS as readonly string[]).includes(value);
}

export function isClosedReason(value: unknown): value is ClosedReason {
  return typeof value === "string" && (CLOSED_REASONS as readonly string[]).includes(value);
}

/**
 * The proposal a lease holds once proposed (inference_lease.proposal): the model's text and
 * which model wrote it. Not the model seam's Proposal (lib/model/types.ts), which also names
 * the actor the completion claims; propose checks that and stores only this. `model` is
 * absent on a lease seeded by hand with the contract's columns only; such a row may hold any
 * JSON at all, so readers still check the summary is a string before using it.
 */
export type LeaseProposal = { model?: string } & Record<string, unknown>;

/** How much a review finding matters: high blocks payment until checked; low is worth a look. */
export const FINDING_SEVERITIES = ["high", "medium", "low"] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/** What review_invoice can find (lib/purposes/review-invoice.ts). */
export const FINDING_CODES = [
  "lines_do_not_add_up",
  "overdue",
  "due_soon",
  "possible_duplicate",
  "unusual_amount",
  "due_before_issue",
  "zero_quantity_line",
  "missing_field",
] as const;
export type FindingCode = (typeof FINDING_CODES)[number];

/** One finding of a review, as proposed and as applied to invoice.review_notes. */
export type ReviewFinding = {
  code: FindingCode;
  severity: FindingSeverity;
  /** Plain words for a finance reader, dates ISO (the page localizes them). */
  message: string;
  /** The invoice's fields it points at: "total_cents", "due_on", "lines[2]"… */
  fields: string[];
};

/**
 * Why a generation failed, as the actor sees it: a stable code and plain words. The error
 * itself (SQL text, hosts, ids) goes to the server log only.
 */
export const GENERATION_FAILURE_CODES = [
  "model_unavailable",
  "model_output_invalid",
  // The model's answer does not match the purpose's output schema.
  "invalid_output",
  "model_not_configured",
  "invoice_not_found",
  "internal_error",
] as const;
export type GenerationFailureCode = (typeof GENERATION_FAILURE_CODES)[number];

/** Why apply was refused (lib/leases/apply.ts applyLease), as the API and the page receive it. */
export const APPLY_REFUSALS = [
  "lease_not_found",
  "lease_open",
  "lease_applied",
  "lease_rejected",
  "lease_expired",
  "invoice_changed",
  "proposal_unusable",
  // categorize_lines: an accepted line that is not one of the proposal's.
  "invalid_lines",
  // The four-eyes lane (docs/decisions/0078): the purpose's policy asks for an approval (submit
  // instead), or a request for this lease already waits for one.
  "approval_required",
  "approval_pending",
] as const;
export type ApplyRefusal = (typeof APPLY_REFUSALS)[number];

/** Why cancel (Discard, Cancel) was refused. */
export const CANCEL_REFUSALS = ["lease_not_found", "lease_not_cancelable"] as const;
export type CancelRefusal = (typeof CANCEL_REFUSALS)[number];

/** Why opening a lease (Summarize) was refused. */
export const OPEN_REFUSALS = [
  "invoice_not_found",
  // A teammate's invoice: visibly there, but only its owner may summarize it.
  "forbidden",
  "purpose_not_allowed",
  "lease_in_flight",
  // Over a spending cap of the organization or the member (lib/spend): nothing was dispatched.
  "budget_exhausted",
  "dispatch_failed",
  "not_signed_in",
] as const;
export type OpenRefusal = (typeof OPEN_REFUSALS)[number];

/**
 * The proposal's summary as stored, whatever it holds (an empty string too); null when the
 * proposal holds none (a lease seeded by hand may hold any JSON at all).
 */
export function summaryOf(proposal: unknown): string | null {
  if (proposal && typeof proposal === "object" && "summary" in proposal) {
    const summary = (proposal as { summary: unknown }).summary;
    if (typeof summary === "string") return summary;
  }
  return null;
}

/**
 * Where a lease stands as the pages show it (the lease panel's `data-display`, its badge, the
 * history's status): a rejected lease is told apart by why it was closed.
 */
export const LEASE_DISPLAYS = ["generating", "proposed", "applied", "expired", "rejected", "outdated", "failed"] as const;
export type LeaseDisplay = (typeof LEASE_DISPLAYS)[number];

/** The closed reasons that are a failure (of the model, the service, or its answer), not a person's doing. */
const FAILURES: Record<ClosedReason, boolean> = {
  deadline_passed: false,
  cancelled: false,
  signed_out: false,
  invoice_changed: false,
  actor_mismatch: true,
  generation_failed: true,
  dispatch_failed: true,
  proposal_unusable: true,
  declined: false,
};

export function displayOf(lease: { status: LeaseStatus; closed_reason: ClosedReason | null }): LeaseDisplay {
  switch (lease.status) {
    case "open":
      return "generating";
    case "proposed":
    case "applied":
    case "expired":
      return lease.status;
    default:
      if (lease.closed_reason === "invoice_changed") return "outdated";
      return lease.closed_reason && FAILURES[lease.closed_reason] === true ? "failed" : "rejected";
  }
}

/**
 * The invoice list's state of an invoice's latest attempt (its `?state=` filter): the display,
 * with every rejected one `stopped`; `none` when there is no attempt.
 */
const LIST_STATE_OF = {
  generating: "generating",
  proposed: "proposed",
  applied: "applied",
  expired: "expired",
  rejected: "stopped",
  outdated: "stopped",
  failed: "stopped",
} as const satisfies Record<LeaseDisplay, string>;
export type ListState = (typeof LIST_STATE_OF)[LeaseDisplay] | "none";

/** Every list state, in the order "needs attention first" sorts them. */
export const LIST_STATES = ["proposed", "generating", "expired", "stopped", "none", "applied"] as const satisfies readonly ListState[];
// A list state left out of LIST_STATES fails `tsc` here.
const _everyListState: [Exclude<ListState, (typeof LIST_STATES)[number]>] extends [never] ? true : false = true;

export function listStateOf(lease: { status: LeaseStatus; closed_reason: ClosedReason | null }): Exclude<ListState, "none"> {
  return LIST_STATE_OF[displayOf(lease)];
}

/** approval_policy.apply: how an organization's purpose is applied: by its owner (`self`) or after a second person approves. */
export const APPLY_POLICIES = ["self", "four_eyes"] as const;
export type ApplyPolicy = (typeof APPLY_POLICIES)[number];

/** approval_request.decision, once made (null while none is). */
export const APPROVAL_DECISIONS = ["approved", "declined"] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/**
 * Where an approval request stands, derived, never stored (lib/approvals/status.ts): its decision,
 * or `pending` while its lease is proposed in time, `expired` once the window passed, `withdrawn`
 * once the lease was closed otherwise (the lease's closed_reason says why).
 */
export const APPROVAL_STATUSES = ["pending", "approved", "declined", "expired", "withdrawn"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** The review window's bounds, in hours, and the window of an organization that set no policy. */
export const REVIEW_HOURS = { min: 1, max: 720, default: 24 } as const;

/** Why submit (POST /api/leases/:id/submit) was refused. */
export const SUBMIT_REFUSALS = [
  "lease_not_found",
  "lease_open",
  "lease_applied",
  "lease_rejected",
  "lease_expired",
  "invoice_changed",
  "proposal_unusable",
  "invalid_lines",
  // The purpose's policy is `self`: Apply, not Submit.
  "approval_not_required",
  "not_signed_in",
] as const;
export type SubmitRefusal = (typeof SUBMIT_REFUSALS)[number];

/** Why an approve or a decline was refused. Every end of a request answers its own 409. */
export const DECISION_REFUSALS = [
  "approval_not_found",
  // The requester may not decide their own request (admins included).
  "same_person",
  // The approver's role does not approve (a member, or demoted since seeing the request).
  "forbidden",
  "approval_approved",
  "approval_declined",
  "approval_expired",
  "approval_withdrawn",
  "invoice_changed",
  // The proposal's hash is not the one the approver was shown.
  "proposal_changed",
  "proposal_unusable",
  "not_signed_in",
] as const;
export type DecisionRefusal = (typeof DECISION_REFUSALS)[number];
