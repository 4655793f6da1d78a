// GET /api/invoices/:id/events — the invoice's version as server-sent events, so every open page
// of it refreshes when it changes (an edit, an owner change, a status change, a summary
// applied). Scoped to the member's organization like GET /api/invoices/:id: another
// organization's, a missing or a malformed id is the same 404. The first frame is the version
// now; each later one follows a NOTIFY of a new version (db/migrations/0007_invoice_notify.sql,
// through lib/lease-feed.ts), read again with the session checked in the same step, so a
// session that ran out gets nothing more; a sign-out ends the session's streams at once. A stream
// ended for good (signed out, the invoice gone from the member's view) says `event: end` first,
// so the page does not reconnect into a refusal.
// Bounded as the lease stream is (app/_lib/sse.ts: one slot of the session's 20, heartbeat,
// back-pressure, five minutes then the client reconnects). The frames say only the version:
// the page reads the rest as any render does.
import { authedRoute, param, problem } from "@/app/_lib/http";
import { eventStream, listenBeforeRead, oneReadAtATime, takeStreamSlot, type EventChannel, type StreamFeed } from "@/app/_lib/sse";
import { canonicalId } from "@/lib/ids";
import { invoiceVersion } from "@/lib/invoices";
import { subscribeInvoice } from "@/lib/lease-feed";
import { log } from "@/lib/log";
import { resolveActor } from "@/lib/sessions";

export const dynamic = "force-dynamic";

export const GET = authedRoute(async ({ req, db, actor, params, session }) => {
  const invoiceId = canonicalId(param(params, "id"));
  if (!invoiceId) return "invoice_not_found";
  // Listening before the first read, so nothing committed after it is missed.
  let feed: StreamFeed<null>;
  try {
    feed = await listenBeforeRead((onChange) => subscribeInvoice(invoiceId, () => onChange(null)), actor.sessionId);
  } catch (error) {
    log.warn("invoice stream unavailable", { invoice_id: invoiceId, error: String(error) });
    return problem("events_unavailable");
  }
  const unsubscribe = feed.unsubscribe;
  const first = await invoiceVersion(db, actor, invoiceId).catch((error: unknown) => {
    unsubscribe();
    throw error;
  });
  if (first === null) {
    unsubscribe();
    return "invoice_not_found";
  }
  const releaseSlot = takeStreamSlot(actor.sessionId);
  if (!releaseSlot) {
    unsubscribe();
    return problem("too_many_streams");
  }

  let channel!: EventChannel;
  let lastSent = -1;
  const send = (version: number) => {
    if (version === lastSent) return;
    lastSent = version;
    channel.send("invoice", { invoice_id: invoiceId, version });
  };
  // An end the client must not reconnect after (EventSource would, and be refused): said first.
  const end = (reason: "not_signed_in" | "invoice_not_found") => {
    channel.send("end", { reason });
    channel.close();
  };
  // Each read checks the session first.
  const refresh = oneReadAtATime(
    () => channel,
    async () => {
      const member = await resolveActor(db, session);
      const version = member ? await invoiceVersion(db, member, invoiceId) : null;
      if (version === null) {
        end(member ? "invoice_not_found" : "not_signed_in");
        return "stop";
      }
      send(version);
    },
    (error) => log.warn("invoice stream read failed", { invoice_id: invoiceId, error: String(error) }),
  );

  return eventStream(req.signal, {
    start(opened) {
      channel = opened;
      const before = feed.start({ changed: refresh, revoked: () => end("not_signed_in") });
      if (before.revoked) return end("not_signed_in");
      send(first);
      if (before.notified) refresh();
    },
    onClose() {
      releaseSlot();
      unsubscribe();
    },
  });
});
