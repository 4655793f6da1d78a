import "server-only";
// What a lease event's NOTIFY carries (db/migrations/0004_lease_event_frame.sql), and how an
// event stream turns its last frame and one notice into the next frame without reading the
// lease (docs/decisions/0041-one-read-per-generation-and-frames-from-notify.md).
//
// Notices arrive in commit order. A transaction that changed the lease holds its row lock
// until commit, so the state its notice carries is the lease as that commit left it; one that
// only recorded a refusal left the lease as the last writer did, which the stream already has.
// Anything a notice cannot settle (no payload, a payload that does not parse) is a read.
import { z } from "zod";
import { canonicalKey } from "@/lib/ids";
import { CLOSED_REASONS, EVENT_KINDS, LEASE_STATUSES } from "@/lib/lease-codes";
import { LEASE_EVENTS_PAGE } from "./read";
import type { LeaseView } from "./types";

const Notice = z.object({
  lease_id: z.string(),
  kind: z.enum(EVENT_KINDS),
  event: z.object({
    id: z.number().int(),
    at: z.string().transform((s, ctx) => {
      const d = new Date(s);
      if (Number.isNaN(d.getTime())) ctx.addIssue({ code: "custom", message: "not a time" });
      return d;
    }),
    kind: z.enum(EVENT_KINDS),
    detail: z.unknown(),
  }),
  lease: z.object({
    status: z.enum(LEASE_STATUSES),
    closed_reason: z.enum(CLOSED_REASONS).nullable(),
    // As stored: whatever else a proposal holds is sent on, as a read would.
    proposal: z.looseObject({ summary: z.string(), model: z.string().optional() }).nullable(),
    changed_here: z.boolean(),
  }),
});

/** A lease event's notice with what a frame needs; null for a bare one (a re-listen, a payload too long for NOTIFY). */
export type LeaseNotice = z.infer<typeof Notice>;

export function parseLeaseNotice(payload: unknown): LeaseNotice | null {
  const parsed = Notice.safeParse(payload);
  return parsed.success ? parsed.data : null;
}

/**
 * The lease after `notice`, from the view the stream last sent (the latest page of its
 * timeline): the event joins the timeline (in id order, once), which keeps the latest
 * LEASE_EVENTS_PAGE events and points `eventsBefore` at what it let go, as a read would; the
 * lease's state is the notice's if its transaction changed it. The view's clock moves to the
 * event's time if that is later. Null if the notice is about another lease.
 */
export function applyLeaseNotice(view: LeaseView, notice: LeaseNotice): LeaseView | null {
  if (canonicalKey(notice.lease_id) !== canonicalKey(view.id)) return null;
  const { event, lease } = notice;
  if (view.events.some((e) => e.id === event.id)) return view;
  const joined = [...view.events, { id: event.id, at: event.at, kind: event.kind, detail: event.detail ?? null }].sort(
    (a, b) => a.id - b.id,
  );
  const events = joined.slice(-LEASE_EVENTS_PAGE);
  const eventsBefore = joined.length > LEASE_EVENTS_PAGE || view.eventsBefore !== null ? events[0]!.id : null;
  const now = event.at > view.now ? event.at : view.now;
  if (!lease.changed_here) return { ...view, events, eventsBefore, now };
  return { ...view, status: lease.status, closedReason: lease.closed_reason, proposal: lease.proposal, events, eventsBefore, now };
}
