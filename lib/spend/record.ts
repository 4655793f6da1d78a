// A model call's usage as it is recorded: one model_usage row per call. The statement that
// records it (and releases the lease's reservation) is lib/leases recordUsage, since only
// lib/leases writes leases.

/** How a call ended, as model_usage.outcome says it. */
export const USAGE_OUTCOMES = ["proposed", "late", "aborted", "failed"] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** A call's usage as the generation measured it, priced (lib/spend/price.ts). */
export type CallUsage = {
  /** The lease and the generation's attempt: a retried step that records again records nothing. */
  callKey: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  estimated: boolean;
  costCents: number;
};

/** The call key of a lease's generation attempt (Inngest's attempt number, from 0). */
export const callKey = (leaseId: string, attempt: number) => `${leaseId}:${attempt}`;
