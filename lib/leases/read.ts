import "server-only";
// Reading leases: one statement for the lease, its timeline and the database clock; a write only
// for a lease in flight past its deadline, which is recorded expired first.
import type { Db, Tx } from "@/db/client";
import { inferenceLease, invoice, leaseEvent, appUser, type InferenceLease } from "@/db/schema";
import { ownedInvoice, visibleInvoice, type Member } from "@/lib/access";
import { isUuid } from "@/lib/ids";
import { type ClosedReason, type EventKind, type LeaseStatus } from "@/lib/lease-codes";
import { and, asc, desc, eq, inArray, ne, not, sql } from "drizzle-orm";
import { expireDue, inFlight, isOverdue, leaseWithNow, overdueInFlight } from "./shared";
import { LeaseEventView, LeaseView } from "./types";
import { isPurpose, type Purpose } from "@/lib/purposes";

/**
 * The events a lease read returns at most: the latest ones, oldest first; `eventsBefore` says
 * where the earlier ones start (docs/decisions/0043-a-lease-read-pages-its-events.md). Every
 * lease the app makes in the normal way has a handful; only refusals pile up.
 */
export const LEASE_EVENTS_PAGE = 50;

/**
 * Which page of a lease's timeline to read: the latest (no cursor), or the one before the event
 * id `before` (a client's cursor opened by openEventsCursor, ./cursor.ts).
 */
export type EventsPage = { before?: number | null };

/**
 * One page from up to LEASE_EVENTS_PAGE + 1 events read newest first: the extra one only tells
 * that earlier events exist, and is dropped.
 */
function pageOf(newestFirst: LeaseEventView[]): { events: LeaseEventView[]; eventsBefore: number | null } {
  const events = newestFirst.slice(0, LEASE_EVENTS_PAGE).reverse();
  return { events, eventsBefore: newestFirst.length > LEASE_EVENTS_PAGE ? events[0]!.id : null };
}

/** The lease as its readers see it, with one page of its timeline read alongside. */
function toView(lease: InferenceLease & { now: Date }, timeline: { events: LeaseEventView[]; eventsBefore: number | null }): LeaseView {
  return {
    id: lease.id,
    actorId: lease.actorId,
    invoiceId: lease.invoiceId,
    purpose: lease.purpose,
    status: lease.status,
    deadlineAt: lease.deadlineAt,
    createdAt: lease.createdAt,
    proposal: lease.proposal,
    closedReason: lease.closedReason,
    now: lease.now,
    events: timeline.events,
    eventsBefore: timeline.eventsBefore,
  };
}

/** Past every event id (bigserial): the cursor of the latest page. */
const AFTER_ALL = sql.raw("9223372036854775807::bigint");

/**
 * One page of the lease's timeline as a JSON array, newest first, read in the same statement as
 * the lease: the events from where the page starts (lease_event_page_start, migration 0005:
 * a backward scan of lease_event_lease_idx (lease_id, id) that stops after LEASE_EVENTS_PAGE + 1
 * entries) up to the cursor, an index range that holds at most LEASE_EVENTS_PAGE + 1 events
 * whichever scan the planner picks, however long the timeline. (A plain `order by id desc limit
 * 51` let the planner read every event of the lease and sort them, since it expects a handful a
 * lease: the test "the read is bounded" in tests/integration/http/api.test.ts.) The extra event only
 * says that there is more. Table names are written out: drizzle renders a column of the outer
 * table unqualified here, and the subquery's own `id` would capture it.
 */
function eventsJson(page: EventsPage) {
  const before = page.before ? sql`${page.before}::bigint` : AFTER_ALL;
  return sql<{ id: number; at: string; kind: EventKind; detail: unknown }[]>`coalesce((
    select json_agg(json_build_object('id', e.id, 'at', e.at, 'kind', e.kind, 'detail', e.detail) order by e.id desc)
    from lease_event e
    where e.lease_id = inference_lease.id and e.id < ${before}
      and e.id >= coalesce(lease_event_page_start(inference_lease.id, ${before}, ${sql.raw(String(LEASE_EVENTS_PAGE))}), 0)), '[]'::json)`;
}

const leaseWithTimeline = (page: EventsPage) => ({ ...leaseWithNow, overdueInFlight, events: eventsJson(page) });

/** The lease as its readers see it, with one page of its timeline read after it (in the same transaction). */
async function view(tx: Tx, lease: InferenceLease & { now: Date }, page: EventsPage): Promise<LeaseView> {
  const [row] = await tx
    .select({ events: eventsJson(page) })
    .from(inferenceLease)
    .where(eq(inferenceLease.id, lease.id));
  return toView(lease, pageOf(eventsOf(row?.events ?? [])));
}

type LeaseWithTimeline = InferenceLease & {
  now: Date;
  overdueInFlight: boolean;
  events: { id: number; at: string; kind: EventKind; detail: unknown }[];
};

const eventsOf = (rows: LeaseWithTimeline["events"]): LeaseEventView[] =>
  rows.map((e) => ({ id: Number(e.id), at: new Date(e.at), kind: e.kind, detail: e.detail }));

function viewOf(row: LeaseWithTimeline): LeaseView {
  const { overdueInFlight: _due, events, ...lease } = row;
  return toView(lease, pageOf(eventsOf(events)));
}

/**
 * readLease's statement, unexecuted: also what the bench and the tests EXPLAIN, so the plan
 * they show is the one the app runs.
 */
export function leaseReadStatement(db: Db, actorId: string, leaseId: string, page: EventsPage = {}) {
  return db
    .select(leaseWithTimeline(page))
    .from(inferenceLease)
    .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId)));
}

/**
 * The actor's lease, with one page of its timeline (the latest, unless `page.before` names
 * an earlier one); recorded `expired` first if its deadline passed. One read statement
 * (lease, timeline and the database clock in one snapshot) unless the lease is in flight past
 * its deadline: only then a transaction records `expired` and reads again.
 */
export async function readLease(db: Db, actorId: string, leaseId: unknown, page: EventsPage = {}): Promise<LeaseView | null> {
  if (!isUuid(leaseId)) return null;
  const [row] = await leaseReadStatement(db, actorId, leaseId, page);
  if (!row) return null;
  return row.overdueInFlight ? readLeaseRecordingExpiry(db, actorId, leaseId, page) : viewOf(row);
}

async function readLeaseRecordingExpiry(db: Db, actorId: string, leaseId: string, page: EventsPage): Promise<LeaseView | null> {
  return db.transaction(async (tx) => {
    const mine = and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId));
    await expireDue(tx, mine, "read");
    const [lease] = await tx.select(leaseWithNow).from(inferenceLease).where(mine);
    return lease ? view(tx, lease, page) : null;
  });
}

/**
 * readLease for an event stream's push: the session that opened the stream must still be live
 * (not revoked, not past its end by the database clock), checked in the same statement as
 * the read, so a push costs one statement. `signed_out` when it is not; the lease (or null) else.
 */
export async function readLeaseForSession(
  db: Db,
  session: { actorId: string; sessionId: string },
  leaseId: unknown,
  page: EventsPage = {},
): Promise<LeaseView | null | "signed_out"> {
  const { actorId, sessionId } = session;
  if (!isUuid(leaseId) || !isUuid(sessionId)) return null;
  // Live: not revoked, not run out, and its user still a member of the session's organization.
  const live = sql<boolean>`exists (select 1 from app_session s join membership m on m.org_id = s.org_id and m.user_id = s.user_id
    where s.id = ${sessionId} and s.user_id = ${actorId} and s.revoked_at is null and s.expires_at > now())`;
  // A lease on an invoice of another organization than the session's reads as missing.
  const inSessionOrg = sql`exists (select 1 from app_session s join invoice i on i.org_id = s.org_id
    where s.id = ${sessionId} and i.id = inference_lease.invoice_id)`;
  const [row] = await db
    .select({ ...leaseWithTimeline(page), sessionLive: live })
    .from(inferenceLease)
    .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId), inSessionOrg));
  if (!row) return null;
  const { sessionLive, ...lease } = row;
  if (!sessionLive) return "signed_out";
  return lease.overdueInFlight ? readLeaseRecordingExpiry(db, actorId, leaseId, page) : viewOf(lease);
}

/** The actor's most recent lease on an invoice (in flight or not), for the invoice page. */
export async function latestLeaseForInvoice(db: Db, actorId: string, invoiceId: string): Promise<LeaseView | null> {
  return db.transaction(async (tx) => {
    const mine = and(eq(inferenceLease.invoiceId, invoiceId), eq(inferenceLease.actorId, actorId));
    await expireDue(tx, mine, "read");
    const [lease] = await tx
      .select(leaseWithNow)
      .from(inferenceLease)
      .where(mine)
      .orderBy(desc(inferenceLease.createdAt), desc(inferenceLease.id))
      .limit(1);
    return lease ? view(tx, lease, {}) : null;
  });
}

/**
 * The actor's most recent lease of each purpose on an invoice (in flight or not), for the
 * invoice page's one panel per purpose: one statement, DISTINCT ON (purpose), each with its
 * latest page of events. A purpose the actor never asked for on it is absent.
 */
export async function latestLeasesByPurpose(db: Db, actorId: string, invoiceId: string): Promise<Partial<Record<Purpose, LeaseView>>> {
  return db.transaction(async (tx) => {
    const mine = and(eq(inferenceLease.invoiceId, invoiceId), eq(inferenceLease.actorId, actorId));
    await expireDue(tx, mine, "read");
    const rows = await tx
      .selectDistinctOn([inferenceLease.purpose], leaseWithTimeline({}))
      .from(inferenceLease)
      .where(mine)
      .orderBy(inferenceLease.purpose, desc(inferenceLease.createdAt), desc(inferenceLease.id));
    const byPurpose: Partial<Record<Purpose, LeaseView>> = {};
    for (const row of rows) if (isPurpose(row.purpose)) byPurpose[row.purpose] = viewOf(row);
    return byPurpose;
  });
}

/**
 * Who holds the lease in flight on an invoice the actor owns, when it is someone else (the
 * invoice changed hands while that lease was in flight): their name only, so the new owner
 * can be told in words why Summarize waits; nothing of the lease itself. Null otherwise.
 */
export async function leaseHolderName(db: Db | Tx, actorId: string, invoiceId: string): Promise<string | null> {
  const [row] = await db
    .select({ name: appUser.name })
    .from(inferenceLease)
    .innerJoin(invoice, and(eq(invoice.id, inferenceLease.invoiceId), ownedInvoice(actorId)))
    .innerJoin(appUser, eq(appUser.id, inferenceLease.actorId))
    .where(and(eq(inferenceLease.invoiceId, invoiceId), inFlight, not(isOverdue), ne(inferenceLease.actorId, actorId)))
    .limit(1);
  return row?.name ?? null;
}

export type AttemptView = {
  id: string;
  /** What the attempt was for: the history names it ("Review attempt 2"). */
  purpose: Purpose;
  /** The member's own attempt: only then may its id be shown to them. */
  mine: boolean;
  actorName: string;
  status: LeaseStatus;
  closedReason: ClosedReason | null;
  createdAt: Date | null;
  events: LeaseEventView[];
};

const newestFirst = [desc(inferenceLease.createdAt), desc(inferenceLease.id)] as const;

/**
 * Every attempt (lease) on an invoice of the member's organization, newest first, one page of them, each
 * with its timeline and the name of whoever asked: the invoice's own record, so it includes
 * attempts by a former owner. Overdue ones are recorded expired first, as every read does.
 */
export async function invoiceAttempts(
  db: Db,
  member: Member,
  invoiceId: string,
  page: { offset: number; limit: number },
): Promise<{ total: number; attempts: AttemptView[] }> {
  return db.transaction(async (tx) => {
    const [visible] = await tx
      .select({ id: invoice.id })
      .from(invoice)
      .where(and(eq(invoice.id, invoiceId), visibleInvoice(member)));
    if (!visible) return { total: 0, attempts: [] };
    const onInvoice = eq(inferenceLease.invoiceId, invoiceId);
    await expireDue(tx, onInvoice, "read");
    const [{ total } = { total: 0 }] = await tx
      .select({ total: sql<number>`count(*)`.mapWith(Number) })
      .from(inferenceLease)
      .where(onInvoice);
    const leases = await tx
      .select({
        id: inferenceLease.id,
        mine: sql<boolean>`${inferenceLease.actorId} = ${member.id}`,
        purpose: inferenceLease.purpose,
        actorName: appUser.name,
        status: inferenceLease.status,
        closedReason: inferenceLease.closedReason,
        createdAt: inferenceLease.createdAt,
      })
      .from(inferenceLease)
      .innerJoin(appUser, eq(appUser.id, inferenceLease.actorId))
      .where(onInvoice)
      .orderBy(...newestFirst)
      .limit(page.limit)
      .offset(page.offset);
    const events = leases.length
      ? await tx
          .select({ leaseId: leaseEvent.leaseId, id: leaseEvent.id, at: leaseEvent.at, kind: leaseEvent.kind, detail: leaseEvent.detail })
          .from(leaseEvent)
          .where(
            inArray(
              leaseEvent.leaseId,
              leases.map((l) => l.id),
            ),
          )
          .orderBy(asc(leaseEvent.id))
      : [];
    return {
      total,
      attempts: leases.map((l) => ({
        ...l,
        purpose: purposeOrSummary(l.purpose),
        events: events.filter((e) => e.leaseId === l.id).map(({ leaseId: _lease, ...e }) => e),
      })),
    };
  });
}

/**
 * A lease's purpose as the registry knows it. The column is text; a lease of a purpose the
 * registry no longer lists reads as a summary, as every lease did before there were purposes.
 */
export const purposeOrSummary = (purpose: string): Purpose => (isPurpose(purpose) ? purpose : "summarize_invoice");

/**
 * An attempt's number among the invoice's attempts of its purpose, the first being 1: "Summary
 * attempt 2" is the second summary asked for on the invoice, whatever reviews came between. The
 * history and the link from the applied summary to its attempt both number with this.
 */
export const attemptNumber = sql<number>`(select count(*) from ${inferenceLease} older
  where older.invoice_id = ${inferenceLease.invoiceId} and older.purpose = ${inferenceLease.purpose}
    and (older.created_at, older.id) <= (${inferenceLease.createdAt}, ${inferenceLease.id}))`.mapWith(Number);

/**
 * The attempt whose summary is on the invoice: the latest applied summarize_invoice lease (only
 * its apply writes the summary; an applied review or categorization wrote other columns), who
 * applied it and when, and its place in the newest-first timeline.
 */
export async function appliedAttempt(
  db: Db,
  member: Member,
  invoiceId: string,
): Promise<{
  id: string;
  mine: boolean;
  actorName: string;
  approverName: string | null;
  appliedAt: Date;
  position: number;
  number: number;
  purpose: string;
} | null> {
  const [row] = await db
    .select({
      id: inferenceLease.id,
      mine: sql<boolean>`${inferenceLease.actorId} = ${member.id}`,
      actorName: appUser.name,
      // Under four eyes, who approved the write (docs/decisions/0078); null for a self apply.
      approverName: sql<string | null>`(select u.name from approval_request r join app_user u on u.id = r.approver_id
        where r.lease_id = ${inferenceLease.id} and r.decision = 'approved')`,
      appliedAt: leaseEvent.at,
      // Its place in the invoice's timeline (./timeline.ts): the newer attempts and the changes
      // recorded since it was requested (a change at the same moment sorts before it).
      position: sql<number>`(select count(*) from ${inferenceLease} newer
        where newer.invoice_id = ${inferenceLease.invoiceId}
          and (newer.created_at, newer.id) > (${inferenceLease.createdAt}, ${inferenceLease.id}))
        + (select count(*) from invoice_change c
        where c.invoice_id = ${inferenceLease.invoiceId} and c.at >= ${inferenceLease.createdAt})`.mapWith(Number),
      number: attemptNumber,
      purpose: inferenceLease.purpose,
    })
    .from(inferenceLease)
    .innerJoin(invoice, and(eq(invoice.id, inferenceLease.invoiceId), visibleInvoice(member)))
    .innerJoin(appUser, eq(appUser.id, inferenceLease.actorId))
    .innerJoin(leaseEvent, and(eq(leaseEvent.leaseId, inferenceLease.id), eq(leaseEvent.kind, "applied")))
    .where(
      and(
        eq(inferenceLease.invoiceId, invoiceId),
        eq(inferenceLease.purpose, "summarize_invoice" satisfies Purpose),
        eq(inferenceLease.status, "applied"),
      ),
    )
    .orderBy(desc(leaseEvent.at), desc(leaseEvent.id))
    .limit(1);
  return row ?? null;
}

/** A teammate's lease in flight: who asked, for what, where it stands and until when. */
export type TeammateLeaseInFlight = { actorName: string; status: LeaseStatus; purpose: Purpose; deadlineAt: Date; now: Date };

/**
 * The leases in flight on an invoice of the member's organization that are someone else's, one
 * per purpose (the database holds at most one in flight per invoice and purpose), newest first:
 * who asked, for what, whether it is being written or waits for review, and until when (with
 * the database's now, for a countdown). Nothing of the proposal: that is its actor's alone.
 */
export async function teammateLeasesInFlight(db: Db | Tx, member: Member, invoiceId: string): Promise<TeammateLeaseInFlight[]> {
  if (!isUuid(invoiceId)) return [];
  const rows = await db
    .select({
      actorName: appUser.name,
      status: inferenceLease.status,
      purpose: inferenceLease.purpose,
      deadlineAt: inferenceLease.deadlineAt,
      now: sql<Date>`now()`.mapWith((v: string | Date) => new Date(v)),
    })
    .from(inferenceLease)
    .innerJoin(invoice, and(eq(invoice.id, inferenceLease.invoiceId), visibleInvoice(member)))
    .innerJoin(appUser, eq(appUser.id, inferenceLease.actorId))
    .where(and(eq(inferenceLease.invoiceId, invoiceId), inFlight, not(isOverdue), ne(inferenceLease.actorId, member.id)))
    .orderBy(...newestFirst);
  return rows.map((row) => ({ ...row, purpose: purposeOrSummary(row.purpose) }));
}

/**
 * The newest of teammateLeasesInFlight, or null: GET /api/invoices/:id's `teammate_lease`,
 * which names one lease (now with its purpose).
 */
export async function teammateLeaseInFlight(db: Db | Tx, member: Member, invoiceId: string): Promise<TeammateLeaseInFlight | null> {
  return (await teammateLeasesInFlight(db, member, invoiceId))[0] ?? null;
}
