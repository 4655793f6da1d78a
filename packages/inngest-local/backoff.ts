// The retry schedule of the real Inngest server (inngest/inngest, pkg/backoff/backoff.go,
// TableBackoff, its DefaultBackoff): the attempt that failed (0-based, per step) picks a wait
// from the table, the last entry for any later one, plus up to 30 s of random jitter. The
// stand-in uses it as it is, so a run's retries take as long here as in production; tests
// shrink the whole schedule, jitter included, with one documented factor (retryScale).

export const RETRY_TABLE_MS = [
  15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_200_000, 2_400_000, 3_600_000, 7_200_000,
] as const;
/** The real server adds rand.Int31n(30_000) ms: 0 to 29,999. */
export const RETRY_JITTER_MS = 30_000;

/** The wait before retrying after `attempt` failed, scaled by `scale` (1 = the real server). */
export function retryDelayMs(attempt: number, scale = 1, random: () => number = Math.random): number {
  const base = RETRY_TABLE_MS[Math.min(Math.max(0, Math.floor(attempt)), RETRY_TABLE_MS.length - 1)]!;
  const jitter = Math.floor(random() * RETRY_JITTER_MS);
  return Math.round((base + jitter) * scale);
}

/**
 * INNGEST_LOCAL_RETRY_SCALE, read once at start: a factor > 0 on the whole schedule (e.g.
 * 0.01: 150 ms, 300 ms, 600 ms… plus up to 300 ms). Unset or empty: 1, the real schedule.
 */
export function retryScaleFrom(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return 1;
  const scale = Number(value);
  if (!Number.isFinite(scale) || scale <= 0) {
    throw new Error(`INNGEST_LOCAL_RETRY_SCALE must be a number > 0 (1 = the real server's schedule), got "${value}"`);
  }
  return scale;
}
