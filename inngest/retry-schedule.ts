// When the Inngest server calls a failed step again. Its executor's schedule (inngest/inngest,
// pkg/backoff TableBackoff, the default): after attempt n fails (0-based, per step) it waits
// this table's entry n, the last one past its end, plus 0 to 30 s of jitter (or what a
// Retry-After said, which the app never sends). packages/inngest-local/backoff.ts imitates the
// same table; tests/unit/retry-schedule.test.ts keeps the two equal.
export const NEXT_RETRY_MIN_MS = [
  15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_200_000, 2_400_000, 3_600_000, 7_200_000,
] as const;
/** The most jitter the server adds to a wait (rand.Int31n(30_000) ms). */
export const RETRY_JITTER_MAX_MS = 30_000;

/** The soonest the server calls again after `attempt` (0-based) failed. */
export function nextRetryMinMs(attempt: number): number {
  return NEXT_RETRY_MIN_MS[Math.min(Math.max(0, Math.floor(attempt)), NEXT_RETRY_MIN_MS.length - 1)]!;
}

/**
 * Whether a retry after `attempt` failed could still do its work before the deadline, with
 * `remainingMs` of the lease left now: it starts before the deadline whatever the jitter, and,
 * coming as soon as the schedule allows, leaves a whole model call (`modelTimeLimitMs`) of time.
 * docs/decisions/0050-no-retry-that-cannot-finish-in-time.md.
 */
export function retryCouldFinish(attempt: number, remainingMs: number, modelTimeLimitMs: number): boolean {
  return remainingMs > nextRetryMinMs(attempt) + Math.max(RETRY_JITTER_MAX_MS, modelTimeLimitMs);
}
