import "server-only";
// An AbortSignal that fires when a lease closes while its model call runs, so the call (and
// its HTTP request to the model server) is dropped instead of running to its end for nothing
// (docs/decisions/0025-a-close-aborts-the-model-call.md). Two sources:
//   - the lease's events, through the process's one LISTEN connection (lib/lease-feed.ts,
//     the same one the event streams use): cancel, sign-out, an edit that withdraws the lease…
//     each commits an event, and its NOTIFY names the lease and the kind;
//   - a timer on the lease's deadline, as the database measured it (`remainingMs` comes from
//     `deadline_at - now()` in SQL), since nothing commits an event at the moment time runs out.
// The signal only says "stop working"; what the lease became is still read from the database.
import { isEventKind, LEAVES_OPEN } from "@/lib/lease-codes";
import { subscribeLease } from "@/lib/lease-feed";
import { log } from "@/lib/log";

/**
 * The deadline timer fires this long after `remainingMs`, so that when the step then asks the
 * database, `deadline_at <= now()` already holds (remainingMs is floored to the millisecond)
 * and the run ends as `expired` instead of retrying a call the lease no longer has time for.
 */
export const DEADLINE_SLACK_MS = 20;

export type LeaseCloseWatch = {
  signal: AbortSignal;
  /** Stops listening and clears the timer; call it once the model call has ended. */
  release(): void;
};

/** Why the signal fired: its `reason`, an Error named `LeaseClosed` naming the cause. */
function closedReason(cause: string): Error {
  const error = new Error(`lease closed: ${cause}`);
  error.name = "LeaseClosed";
  return error;
}

/**
 * Watches `leaseId` from now until `release()`: the signal aborts when an event that takes
 * the lease out of `open` is committed, or once `remainingMs` (the database's measure of the
 * time left) has passed. If LISTEN cannot start, only the deadline timer is armed: the call
 * then runs as it did before this watch existed, and a late answer is recorded as such.
 */
export async function watchLeaseClose(leaseId: string, remainingMs: number): Promise<LeaseCloseWatch> {
  const controller = new AbortController();
  const close = (cause: string) => {
    if (!controller.signal.aborted) controller.abort(closedReason(cause));
  };
  const timer = setTimeout(() => close("deadline"), Math.max(0, remainingMs) + DEADLINE_SLACK_MS);
  let unsubscribe: (() => void) | null = null;
  try {
    unsubscribe = await subscribeLease(leaseId, (kind) => {
      if (isEventKind(kind) && LEAVES_OPEN[kind]) close(kind);
    });
  } catch (error) {
    log.warn("lease close watch has no LISTEN; only the deadline aborts the model call", { lease_id: leaseId, error: String(error) });
  }
  return {
    signal: controller.signal,
    release() {
      clearTimeout(timer);
      unsubscribe?.();
      unsubscribe = null;
    },
  };
}
