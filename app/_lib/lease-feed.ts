import "server-only";
// One LISTEN per server process on channel `lease_event` (the trigger in
// db/migrations/0001_lease_triggers.sql NOTIFYs on every lease_event insert), fanned out to
// the open event streams (and the model calls running for a lease: inngest/lease-close-signal.ts)
// by lease id. A subscriber only learns "this lease changed" and the event's kind; a stream
// re-reads the lease through the domain, so what it sends is always what the database says.
import { getDbHandle } from "@/db/client";
import { log } from "@/lib/log";

/** Called with the kind of the event just recorded (undefined on a re-listen: anything may have changed). */
type Listener = (kind: string | undefined) => void;

type Feed = {
  subscribers: Map<string, Set<Listener>>;
  ready: Promise<void> | null;
};

const cache = globalThis as unknown as { __claimcheckLeaseFeed?: Feed };
const feed: Feed = (cache.__claimcheckLeaseFeed ??= { subscribers: new Map(), ready: null });

function dispatch(payload: string) {
  let leaseId: unknown;
  let kind: unknown;
  try {
    ({ lease_id: leaseId, kind } = JSON.parse(payload) as { lease_id?: unknown; kind?: unknown });
  } catch {
    return;
  }
  if (typeof leaseId !== "string") return;
  for (const listener of feed.subscribers.get(leaseId) ?? []) {
    try {
      listener(typeof kind === "string" ? kind : undefined);
    } catch (error) {
      log.warn("lease feed listener failed", { lease_id: leaseId, error: String(error) });
    }
  }
}

/**
 * LISTEN came back after its connection was lost: notifications sent meanwhile were never
 * delivered, so every open stream re-reads its lease.
 */
function relistened() {
  log.warn("lease feed listening again; open streams re-read", { leases: feed.subscribers.size });
  for (const [leaseId] of feed.subscribers) dispatch(JSON.stringify({ lease_id: leaseId }));
}

function ensureListening(): Promise<void> {
  feed.ready ??= getDbHandle()
    .then((handle) => handle.listen("lease_event", dispatch, relistened))
    .then(() => undefined)
    .catch((error: unknown) => {
      feed.ready = null; // the next subscriber tries again
      throw error;
    });
  return feed.ready;
}

/**
 * Calls `onChange` whenever an event is recorded for `leaseId`. Resolves once the process is
 * listening (so nothing committed after that is missed); rejects if LISTEN cannot start.
 */
export async function subscribeLease(leaseId: string, onChange: Listener): Promise<() => void> {
  await ensureListening();
  let set = feed.subscribers.get(leaseId);
  if (!set) feed.subscribers.set(leaseId, (set = new Set()));
  set.add(onChange);
  return () => {
    const current = feed.subscribers.get(leaseId);
    if (!current) return;
    current.delete(onChange);
    if (current.size === 0) feed.subscribers.delete(leaseId);
  };
}

// ---------------------------------------------------------------------------------------
// Open event streams per session

/** Event streams one session may hold open at once; the next one is 429 too_many_streams. */
export const MAX_STREAMS_PER_SESSION = 20;

// In this process's memory: the cap holds per app instance, which is what it is for (each
// stream holds a socket and a listener here). With several instances behind a balancer, a
// session could hold 20 on each; a shared counter would need the database per stream.
const streams = ((globalThis as unknown as { __claimcheckStreams?: Map<string, number> }).__claimcheckStreams ??= new Map());

/**
 * Takes one of the session's stream slots: a release function (idempotent), or null when the
 * session already holds MAX_STREAMS_PER_SESSION.
 */
export function takeStreamSlot(sessionId: string): (() => void) | null {
  const held = streams.get(sessionId) ?? 0;
  if (held >= MAX_STREAMS_PER_SESSION) return null;
  streams.set(sessionId, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const now = (streams.get(sessionId) ?? 1) - 1;
    if (now <= 0) streams.delete(sessionId);
    else streams.set(sessionId, now);
  };
}
