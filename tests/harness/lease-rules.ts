// The lease lifecycle's rules as the checkers read them (tests/model/invariants.ts against a
// model, bench/load-invariants.ts on a whole database): one definition for both.

export { isInFlight } from "@/lib/lease-codes";

/** The one event that closes a lease, by status and closed reason. */
export const CLOSING_EVENT: Record<string, string> = {
  "applied:": "applied",
  "expired:deadline_passed": "expired",
  "rejected:cancelled": "cancelled",
  "rejected:signed_out": "revoked",
  "rejected:invoice_changed": "invoice_changed",
  "rejected:actor_mismatch": "actor_mismatch",
  "rejected:generation_failed": "generation_failed",
  "rejected:dispatch_failed": "dispatch_failed",
  // An approver declined its request (docs/decisions/0078).
  "rejected:declined": "declined",
};

export type Detail = Record<string, unknown> | null;

/** Events that record a transition (as opposed to a refusal that changed nothing). */
export function isTransition(kind: string, detail: Detail): boolean {
  switch (kind) {
    case "opened":
    case "proposed":
    case "applied":
    case "expired":
    case "cancelled":
    case "revoked":
    case "invoice_changed":
    case "dispatch_failed":
    case "declined":
      return true;
    case "actor_mismatch":
    case "generation_failed":
      return detail?.closed === true;
    default:
      return false;
  }
}
