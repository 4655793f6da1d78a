// GET /api/approvals/events — the approval pages' server-sent events: a fingerprint of the pending
// requests the member sees (the queue of others' requests, if they may approve, and their own),
// sent first as it is now and again whenever it changes, so an open queue or request page
// refreshes at once when a request is submitted, decided, withdrawn (its lease closed by an edit,
// an owner change, a cancel, a removal) or runs out. Submissions and decisions come as the
// organization's NOTIFY (db/migrations/0014_approvals_notify.sql); withdrawals as the events of the
// leases the stream follows, which are the leases of the requests it shows; running out by a timer
// set from the database clock. Each read checks the session first, so a session that ran out or a
// member who lost the role gets nothing more than what they may see now; a sign-out ends the stream
// at once with `event: end`. Bounded as the other streams are (app/_lib/sse.ts). The frames say
// only the fingerprint and a count: the page reads the rest as any render does (docs/decisions/0087).
import { authedRoute, problem } from "@/app/_lib/http";
import { eventStream, listenBeforeRead, oneReadAtATime, takeStreamSlot, type EventChannel, type StreamFeed } from "@/app/_lib/sse";
import { pendingSnapshot, type PendingSnapshot } from "@/lib/approvals/queue";
import { subscribeApprovals, subscribeLease } from "@/lib/lease-feed";
import { log } from "@/lib/log";
import { resolveActor } from "@/lib/sessions";

export const dynamic = "force-dynamic";

/** A request runs out on the database clock; the re-read waits this much past it. */
const EXPIRY_SLACK_MS = 250;
/** setTimeout's longest wait; a longer one is set again by the read it causes. */
const MAX_WAIT_MS = 2_147_483_647;

export const GET = authedRoute(async ({ req, db, actor, session }) => {
  // Listening before the first read, so nothing committed after it is missed.
  let feed: StreamFeed<null>;
  try {
    feed = await listenBeforeRead((onChange) => subscribeApprovals(actor.orgId, () => onChange(null)), actor.sessionId);
  } catch (error) {
    log.warn("approvals stream unavailable", { error: String(error) });
    return problem("events_unavailable");
  }

  // The leases of the requests shown, each followed while its request is pending.
  const followed = new Map<string, () => void>();
  let refresh: () => void = () => {};
  let expiry: ReturnType<typeof setTimeout> | undefined;
  const unfollowAll = () => {
    for (const stop of followed.values()) stop();
    followed.clear();
    clearTimeout(expiry);
  };
  /** Follows `leaseIds` and no others; true if one was added (a read before it may have missed its close). */
  const follow = async (leaseIds: string[]) => {
    const wanted = new Set(leaseIds);
    for (const [id, stop] of followed) {
      if (wanted.has(id)) continue;
      stop();
      followed.delete(id);
    }
    let added = false;
    for (const id of wanted) {
      if (followed.has(id)) continue;
      followed.set(id, await subscribeLease(id, () => refresh()));
      added = true;
    }
    return added;
  };
  /** The snapshot once every lease it names is followed. */
  const settled = async (read: () => Promise<PendingSnapshot | null>) => {
    for (;;) {
      const snapshot = await read();
      if (!snapshot || !(await follow(snapshot.leaseIds))) return snapshot;
    }
  };

  let first: PendingSnapshot;
  try {
    first = (await settled(() => pendingSnapshot(db, actor)))!;
  } catch (error) {
    unfollowAll();
    feed.unsubscribe();
    throw error;
  }
  const releaseSlot = takeStreamSlot(actor.sessionId);
  if (!releaseSlot) {
    unfollowAll();
    feed.unsubscribe();
    return problem("too_many_streams");
  }

  let channel!: EventChannel;
  let lastSent = "";
  const send = (snapshot: PendingSnapshot) => {
    clearTimeout(expiry);
    if (snapshot.nextExpiryMs !== null)
      expiry = setTimeout(() => refresh(), Math.min(snapshot.nextExpiryMs + EXPIRY_SLACK_MS, MAX_WAIT_MS));
    const frame = { fingerprint: snapshot.fingerprint, waiting: snapshot.waiting };
    if (JSON.stringify(frame) === lastSent) return;
    lastSent = JSON.stringify(frame);
    channel.send("approvals", frame);
  };
  const end = () => {
    channel.send("end", { reason: "not_signed_in" });
    channel.close();
  };
  refresh = oneReadAtATime(
    () => channel,
    async () => {
      const snapshot = await settled(async () => {
        const member = await resolveActor(db, session);
        return member ? pendingSnapshot(db, member) : null;
      });
      if (!snapshot) {
        end();
        return "stop";
      }
      send(snapshot);
    },
    (error) => log.warn("approvals stream read failed", { error: String(error) }),
  );

  return eventStream(req.signal, {
    start(opened) {
      channel = opened;
      const before = feed.start({ changed: () => refresh(), revoked: end });
      if (before.revoked) return end();
      send(first);
      if (before.notified) refresh();
    },
    onClose() {
      releaseSlot();
      unfollowAll();
      feed.unsubscribe();
    },
  });
});
