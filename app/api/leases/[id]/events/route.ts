// GET /api/leases/:id/events — the lease as server-sent events. Actor-checked like
// GET /api/leases/:id (a foreign, missing or malformed id is the same 404). Each change
// recorded for the lease (LISTEN lease_event, see app/_lib/lease-feed.ts) is sent as
// `event: lease` with the JSON of GET /api/leases/:id: built from the last frame and the
// change's notice (lib/leases/notice.ts) while the session was checked less than
// SESSION_RECHECK_MS ago, else read through the domain, which checks the session again in
// the same statement. A sign-out ends the session's streams at once. The stream also reads at
// the deadline, so an expiry reaches the page without anyone asking
// (docs/decisions/0041-one-read-per-generation-and-frames-from-notify.md).
//
// Streams are bounded: at most MAX_STREAMS_PER_SESSION open per session (429 beyond); a
// stream ends once it has sent a terminal state (applied, rejected, expired), when its client
// goes away (abort, cancel, a failed write), when the client stops reading (heartbeats pile
// up unread: a half-open connection), and after MAX_STREAM_MS in any case (EventSource
// reconnects by itself).
import { param, problem, RETRY_AFTER_S, sessionCheckedRoute } from "@/app/_lib/http";
import { isUuid } from "@/lib/ids";
import { applyLeaseNotice, readLeaseForSession, type LeaseNotice, type LeaseView } from "@/lib/leases";
import { log } from "@/lib/log";
import { leaseJson } from "@/app/_lib/serialize";
import { subscribeLease, takeStreamSlot, watchSessionRevoked } from "@/app/_lib/lease-feed";

export const dynamic = "force-dynamic";

const HEARTBEAT_MS = 15_000;
/** The longest one stream lives; the client reconnects (after `retry`) and re-reads. */
const MAX_STREAM_MS = 5 * 60_000;
/** Chunks queued unread beyond this mean the client is not reading: the stream ends. */
const MAX_UNREAD_CHUNKS = 8;
/** Retry-After, in seconds, on 429 too_many_streams. */
const STREAMS_RETRY_AFTER_S = 10;
const TERMINAL = new Set(["applied", "rejected", "expired"]);
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
  const leaseId = param(params, "id");
  if (!isUuid(leaseId)) return "lease_not_found";
  // Listening before the first read, so that read is the only one needed to start: anything
  // recorded after it is notified. A notification that comes before the stream has started
  // is remembered and read once the first state is sent.
  let notified = false;
  let onChange: (notice: LeaseNotice | null) => void = () => {
    notified = true;
  };
  let onRevoked: () => void = () => {
    revokedEarly = true;
  };
  let revokedEarly = false;
  let unsubscribe: (() => void) | null;
  try {
    const unsubscribeLease = await subscribeLease(leaseId.toLowerCase(), (_kind, notice) => onChange(notice));
    const unwatchSession = await watchSessionRevoked(actor.sessionId, () => onRevoked()).catch((error: unknown) => {
      unsubscribeLease();
      throw error;
    });
    unsubscribe = () => {
      unsubscribeLease();
      unwatchSession();
    };
  } catch (error) {
    log.warn("lease stream unavailable", { lease_id: leaseId, error: String(error) });
    // The page falls back to polling GET /api/leases/:id.
    return problem("events_unavailable", new Headers({ "retry-after": String(RETRY_AFTER_S) }));
  }
  // The session is checked in the read's own statement, as each later read does.
  const claim = { actorId: actor.id, sessionId: actor.sessionId };
  let checkedAt = performance.now();
  const first = await readLeaseForSession(db, claim, leaseId).catch((error: unknown) => {
    unsubscribe?.();
    throw error;
  });
  if (first === "signed_out" || !first) {
    unsubscribe();
    return first ? "not_signed_in" : "lease_not_found";
  }
  const releaseSlot = takeStreamSlot(actor.sessionId);
  if (!releaseSlot) {
    unsubscribe();
    return problem("too_many_streams", new Headers({ "retry-after": String(STREAMS_RETRY_AFTER_S) }));
  }

  const encoder = new TextEncoder();
  let closed = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  let lifetimeTimer: ReturnType<typeof setTimeout> | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let lastSent = "";
  let lastView: LeaseView = first;
  let reading: Promise<void> | null = null;
  let again = false;

  const close = () => {
    if (closed) return;
    closed = true;
    releaseSlot();
    unsubscribe?.();
    clearInterval(heartbeat);
    clearTimeout(deadlineTimer);
    clearTimeout(lifetimeTimer);
    try {
      controller.close();
    } catch {
      // already closed by the client
    }
  };
  const write = (text: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      return close();
    }
    // desiredSize goes below zero by one for each chunk the response has not taken.
    if ((controller.desiredSize ?? 0) < -MAX_UNREAD_CHUNKS) close();
  };

  const send = (lease: LeaseView) => {
    lastView = lease;
    const body = leaseJson(lease);
    // server_now changes on every read; only a change of the lease itself is news.
    const { server_now: _now, ...identity } = body;
    const key = JSON.stringify(identity);
    if (key !== lastSent) {
      lastSent = key;
      write(`event: lease\ndata: ${JSON.stringify(body)}\n\n`);
    }
    // Nothing leaves a terminal state: once it is sent, the stream has said everything.
    if (TERMINAL.has(lease.status)) return close();
    clearTimeout(deadlineTimer);
    if (!closed && (lease.status === "open" || lease.status === "proposed")) {
      // Both times are the database's, so the app server's clock plays no part.
      const remaining = lease.deadlineAt.getTime() - lease.now.getTime();
      deadlineTimer = setTimeout(refresh, remaining > 0 ? remaining + DEADLINE_SLACK_MS : 1_000);
    }
  };

  /** A change: sent from its notice when that settles it, else read. */
  function changed(notice: LeaseNotice | null) {
    if (closed) return;
    if (notice && !reading && performance.now() - checkedAt < SESSION_RECHECK_MS) {
      const next = applyLeaseNotice(lastView, notice);
      if (next) return send(next);
    }
    refresh();
  }

  // Coalesces bursts of notifications into one read at a time.
  function refresh() {
    if (closed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = (async () => {
      do {
        again = false;
        // The session may have ended since the stream opened: checked in the same statement
        // as the read.
        const startedAt = performance.now();
        const lease = await readLeaseForSession(db, claim, leaseId);
        if (lease && lease !== "signed_out") checkedAt = startedAt;
        if (!lease || lease === "signed_out") return close();
        send(lease);
      } while (again && !closed);
    })()
      .catch((error: unknown) => {
        log.warn("lease stream read failed", { lease_id: leaseId, error: String(error) });
        close();
      })
      .finally(() => {
        reading = null;
      });
  }

  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      write("retry: 2000\n\n");
      if (revokedEarly) return close();
      send(first);
      if (closed) return; // it was already terminal
      onChange = changed;
      onRevoked = close;
      // Something recorded after the first read, before this start: read it.
      if (notified) refresh();
      heartbeat = setInterval(() => write(": heartbeat\n\n"), HEARTBEAT_MS);
      lifetimeTimer = setTimeout(close, MAX_STREAM_MS);
    },
    cancel() {
      close();
    },
  });
  if (req.signal.aborted) close();
  else req.signal.addEventListener("abort", close, { once: true });

  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      // no-transform keeps the server's compression from buffering the stream.
      "cache-control": "no-cache, no-store, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
});
