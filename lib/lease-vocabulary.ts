// The lease lifecycle's words, defined once: why a lease closed, what its audit trail records,
// and the proposal it holds. db/schema.ts types its columns with these ($type), lib/leases/
// writes them, and app/_lib/lease-words.ts keys every user-facing sentence by them, so a new
// reason or kind fails `tsc` until someone has said what it means to the user.
// Client-safe: no server imports (the lease panel's words import the types).

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
export type LeaseProposal = { summary: string; model?: string };

/**
 * Why a generation failed, as the actor sees it: a stable code and plain words. The error
 * itself (SQL text, hosts, ids) goes to the server log only.
 */
export const GENERATION_FAILURE_CODES = [
  "model_unavailable",
  "model_output_invalid",
  "model_not_configured",
  "invoice_not_found",
  "internal_error",
] as const;
export type GenerationFailureCode = (typeof GENERATION_FAILURE_CODES)[number];

/** Why apply was refused (lib/leases/apply.ts applyLease), as the API and the page receive it. */
export type ApplyRefusal =
  | "lease_not_found"
  | "lease_open"
  | "lease_applied"
  | "lease_rejected"
  | "lease_expired"
  | "invoice_changed"
  | "proposal_unusable";

/** Why cancel (Discard, Cancel) was refused. */
export type CancelRefusal = "lease_not_found" | "lease_not_cancelable";

/** Why opening a lease (Summarize) was refused. */
export type OpenRefusal = "invoice_not_found" | "purpose_not_allowed" | "lease_in_flight" | "dispatch_failed" | "not_signed_in";
