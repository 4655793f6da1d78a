// GET /api/leases/:id/events — the lease as server-sent events. Actor-checked like
// GET /api/leases/:id (a foreign, missing or malformed id is the same 404). Each change
// recorded for the lease (LISTEN lease_event, see lib/lease-feed.ts) is sent as
// `event: lease` with the JSON of GET /api/leases/:id: built from the last frame and the
// change's notice (lib/leases/notice.ts) while the session was checked less than
// SESSION_RECHECK_MS ago, else read through the domain, which checks the session again in
// the same statement. A sign-out ends the session's streams at once. The stream also reads at
// the deadline, so an expiry reaches the page without anyone asking
// (docs/decisions/0041-one-read-per-generation-and-frames-from-notify.md).
//
// Streams are bounded (app/_lib/sse.ts: a cap per session, heartbeat, back-pressure,
// lifetime); this one also ends once it has sent a terminal state (applied, rejected, expired).
import { param, problem, sessionCheckedRoute } from "@/app/_lib/http";
import { eventStream, listenBeforeRead, oneReadAtATime, takeStreamSlot, type EventChannel, type StreamFeed } from "@/app/_lib/sse";
import { canonicalId } from "@/lib/ids";
import { subscribeLease } from "@/lib/lease-feed";
import { isInFlight, isTerminal } from "@/lib/lease-codes";
import { applyLeaseNotice, readLeaseForSession, type LeaseNotice, type LeaseView } from "@/lib/leases";
import { log } from "@/lib/log";
import { leaseJson } from "@/app/_lib/serialize";

export const dynamic = "force-dynamic";

/** A little after the deadline, so the database clock has certainly passed it. */
const DEADLINE_SLACK_MS = 250;
/**
 * A frame is built from a notice only within this long of the last check of the session (a
 * read); after it, the next change is read, which checks the session again. A sign-out ends
 * the stream at once whatever the time; this bounds how long a session that ran out by time
 * (expires_at) can still be sent changes.
 */
const SESSION_RECHECK_MS = 10_000;

export const GET = sessionCheckedRoute(async ({ req, db, actor, params }) => {
  const leaseId = canonicalId(param(params, "id"));
  if (!leaseId) return "lease_not_found";
  // Listening before the first read, so that read is the only one needed to start: anything
  // recorded after it is notified. A notification that comes before the stream has started
  // is remembered and read once the first state is sent.
  let feed: StreamFeed<LeaseNotice>;
  try {
    feed = await listenBeforeRead<LeaseNotice>((onChange) => subscribeLease(leaseId, (_kind, notice) => onChange(notice)), actor.sessionId);
  } catch (error) {
    log.warn("lease stream unavailable", { lease_id: leaseId, error: String(error) });
    // The page falls back to polling GET /api/leases/:id.
    return problem("events_unavailable");
  }
  const unsubscribe = feed.unsubscribe;
  // The session is checked in the read's own statement, as each later read does.
  const claim = { actorId: actor.id, sessionId: actor.sessionId };
  let checkedAt = performance.now();
  const first = await readLeaseForSession(db, claim, leaseId).catch((error: unknown) => {
    unsubscribe();
    throw error;
  });
  if (first === "signed_out" || !first) {
    unsubscribe();
    return first ? "not_signed_in" : "lease_not_found";
  }
  const releaseSlot = takeStreamSlot(actor.sessionId);
  if (!releaseSlot) {
    unsubscribe();
    return problem("too_many_streams");
  }

  let channel!: EventChannel;
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  let lastSent = "";
  let lastView: LeaseView = first;

  const send = (lease: LeaseView) => {
    lastView = lease;
    const body = leaseJson(lease);
    // server_now changes on every read; only a change of the lease itself is news.
    const { server_now: _now, ...identity } = body;
    const key = JSON.stringify(identity);
    if (key !== lastSent) {
      lastSent = key;
      channel.send("lease", body);
    }
    // Nothing leaves a terminal state: once it is sent, the stream has said everything.
    if (isTerminal(lease.status)) return channel.close();
    clearTimeout(deadlineTimer);
    if (!channel.closed && isInFlight(lease.status)) {
      // Both times are the database's, so the app server's clock plays no part.
      const remaining = lease.deadlineAt.getTime() - lease.now.getTime();
      deadlineTimer = setTimeout(refresh, remaining > 0 ? remaining + DEADLINE_SLACK_MS : 1_000);
    }
  };

  /** A change: sent from its notice when that settles it, else read. */
  function changed(notice: LeaseNotice | null) {
    if (channel.closed) return;
    if (notice && !refresh.busy() && performance.now() - checkedAt < SESSION_RECHECK_MS) {
      const next = applyLeaseNotice(lastView, notice);
      if (next) return send(next);
    }
    refresh();
  }

  // Bursts of notifications make one read at a time.
  const refresh = oneReadAtATime(
    () => channel,
    async () => {
      // The session may have ended since the stream opened: checked in the same statement as the read.
      const startedAt = performance.now();
      const lease = await readLeaseForSession(db, claim, leaseId);
      if (!lease || lease === "signed_out") {
        channel.close();
        return "stop";
      }
      checkedAt = startedAt;
      send(lease);
    },
    (error) => log.warn("lease stream read failed", { lease_id: leaseId, error: String(error) }),
  );

  return eventStream(req.signal, {
    start(opened) {
      channel = opened;
      const before = feed.start({ changed, revoked: () => channel.close() });
      if (before.revoked) return channel.close();
      send(first);
      if (channel.closed) return; // it was already terminal
      // Something recorded after the first read, before this start: read it.
      if (before.notified) refresh();
    },
    onClose() {
      releaseSlot();
      unsubscribe();
      clearTimeout(deadlineTimer);
    },
  });
});
