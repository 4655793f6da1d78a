import "server-only";
// One LISTEN per server process on channel `lease_event` (the trigger of
// db/migrations/0004_lease_event_frame.sql NOTIFYs on every lease_event insert), fanned out by
// lease id to the open event streams (app/api/leases/[id]/events/route.ts) and to the model
// calls running for a lease (inngest/lease-close-signal.ts): in lib/, since both use it. A
// subscriber learns the event's kind and, when the notice carries it, the event and the lease's
// state as its transaction left it (lib/leases/notice.ts), from which a stream builds its next
// frame; without it, the stream reads the lease through the domain. Session revocations come on
// the same channel (db/migrations/0004_lease_event_frame.sql), so a signed-out session's streams
// end at once. An invoice's new version comes on it too (db/migrations/0007_invoice_notify.sql),
// for the invoice's own stream (app/api/invoices/[id]/events/route.ts), and an organization's
// request for approval submitted or decided (db/migrations/0014_approvals_notify.sql), for the
// approval pages' stream (app/api/approvals/events/route.ts).
import { getDbHandle } from "@/db/client";
import { parseLeaseNotice, type LeaseNotice } from "@/lib/leases";
import { canonicalKey } from "@/lib/ids";
import { log } from "@/lib/log";

/**
 * Called with the kind of the event just recorded and its notice (null when the payload did
 * not carry one); the kind is undefined on a re-listen: anything may have changed.
 */
type Listener = (kind: string | undefined, notice: LeaseNotice | null) => void;

type Feed = {
  subscribers: Map<string, Set<Listener>>;
  sessions: Map<string, Set<() => void>>;
  invoices: Map<string, Set<(version: number | undefined) => void>>;
  orgs: Map<string, Set<() => void>>;
  ready: Promise<void> | null;
};

const cache = globalThis as unknown as { __claimcheckLeaseFeed?: Feed };
const feed: Feed = (cache.__claimcheckLeaseFeed ??= {
  subscribers: new Map(),
  sessions: new Map(),
  invoices: new Map(),
  orgs: new Map(),
  ready: null,
});
feed.sessions ??= new Map(); // a feed cached by a build before sessions were watched
feed.invoices ??= new Map(); // ... or before invoices were
feed.orgs ??= new Map(); // ... or before approvals were

function notify<A extends unknown[]>(listeners: Iterable<(...args: A) => void> | undefined, args: A, about: Record<string, unknown>) {
  for (const listener of listeners ?? []) {
    try {
      listener(...args);
    } catch (error) {
      log.warn("lease feed listener failed", { ...about, error: String(error) });
    }
  }
}

function dispatch(payload: string) {
  let message: {
    lease_id?: unknown;
    kind?: unknown;
    session_revoked?: unknown;
    invoice_changed?: unknown;
    version?: unknown;
    approvals_changed?: unknown;
  };
  try {
    message = JSON.parse(payload) as typeof message;
  } catch {
    return;
  }
  if (typeof message.session_revoked === "string") {
    const sessionId = message.session_revoked;
    notify(feed.sessions.get(sessionId), [], { session_id: sessionId });
    return;
  }
  if (typeof message.invoice_changed === "string") {
    const invoiceId = message.invoice_changed;
    const version = typeof message.version === "number" ? message.version : undefined;
    notify(feed.invoices.get(invoiceId), [version], { invoice_id: invoiceId });
    return;
  }
  if (typeof message.approvals_changed === "string") {
    const orgId = message.approvals_changed;
    notify(feed.orgs.get(canonicalKey(orgId)), [], { org_id: orgId });
    return;
  }
  const leaseId = message.lease_id;
  if (typeof leaseId !== "string") return;
  // Every lease's events reach every process; most have no listener here, and need no parse.
  const listeners = feed.subscribers.get(leaseId);
  if (!listeners) return;
  const kind = typeof message.kind === "string" ? message.kind : undefined;
  const notice = kind === undefined ? null : parseLeaseNotice(message);
  notify(listeners, [kind, notice], { lease_id: leaseId });
}

/**
 * LISTEN came back after its connection was lost: notifications sent meanwhile were never
 * delivered, so every open stream re-reads its lease.
 */
function relistened() {
  log.warn("lease feed listening again; open streams re-read", { leases: feed.subscribers.size });
  for (const [leaseId] of feed.subscribers) dispatch(JSON.stringify({ lease_id: leaseId }));
  for (const [invoiceId] of feed.invoices) dispatch(JSON.stringify({ invoice_changed: invoiceId }));
  for (const [orgId] of feed.orgs) dispatch(JSON.stringify({ approvals_changed: orgId }));
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

/** Adds `listener` under `key`; the function returned removes it (and the key with its last one). */
function addListener<L>(listeners: Map<string, Set<L>>, key: string, listener: L): () => void {
  let set = listeners.get(key);
  if (!set) listeners.set(key, (set = new Set()));
  set.add(listener);
  return () => {
    const current = listeners.get(key);
    if (!current) return;
    current.delete(listener);
    if (current.size === 0) listeners.delete(key);
  };
}

/**
 * Calls `onChange` whenever an event is recorded for `leaseId`. Resolves once the process is
 * listening (so nothing committed after that is missed); rejects if LISTEN cannot start.
 */
export async function subscribeLease(leaseId: string, onChange: Listener): Promise<() => void> {
  await ensureListening();
  return addListener(feed.subscribers, leaseId, onChange);
}

/**
 * Calls `onRevoked` when the session `sessionId` is signed out. Resolves once the process is
 * listening; rejects if LISTEN cannot start.
 */
export async function watchSessionRevoked(sessionId: string, onRevoked: () => void): Promise<() => void> {
  await ensureListening();
  return addListener(feed.sessions, canonicalKey(sessionId), onRevoked);
}

/**
 * Calls `onChange` with the invoice's new version (undefined on a re-listen: read it) whenever
 * `invoiceId` changes. Resolves once the process is listening; rejects if LISTEN cannot start.
 */
export async function subscribeInvoice(invoiceId: string, onChange: (version: number | undefined) => void): Promise<() => void> {
  await ensureListening();
  return addListener(feed.invoices, canonicalKey(invoiceId), onChange);
}

/**
 * Calls `onChange` whenever a request for approval of organization `orgId` is submitted or decided
 * (withdrawals come as their lease's events: subscribeLease). Resolves once the process is
 * listening; rejects if LISTEN cannot start.
 */
export async function subscribeApprovals(orgId: string, onChange: () => void): Promise<() => void> {
  await ensureListening();
  return addListener(feed.orgs, canonicalKey(orgId), onChange);
}
