import "server-only";
// Every lease state change lives in this file. Each transition is one conditional UPDATE
// (or a row lock) inside a short transaction that also writes its lease_event, and every
// deadline comparison is made by the database clock, `now()`.
import { and, asc, desc, eq, getTableColumns, gt, inArray, lte, sql, type SQL } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import {
  inferenceLease,
  invoice,
  leaseEvent,
  appSession,
  appUser,
  type InferenceLease,
  type LeaseStatus,
} from "@/db/schema";
import { isUuid } from "./ids";
import { log } from "./log";
import { outcome, tracedLeaseOp } from "./tracing";
import { PURPOSES, type InvoiceForModel, type Purpose } from "./model/types";

import type {
  ApplyRefusal,
  CancelRefusal,
  ClosedReason,
  EventKind,
  GenerationFailureCode,
  LeaseProposal,
  OpenRefusal,
} from "./lease-vocabulary";

export type { EventKind, GenerationFailureCode };

/** How the outside world learns of a lease: Inngest in the app, a recorder in tests. */
export type LeaseDispatch = {
  /**
   * Sent after the insert commits; a failure closes the lease. `runNonce` goes with it to the
   * generation, which must hand it back to propose (see proposeLease); never to a client.
   */
  leaseOpened(lease: { id: string; actorId: string; invoiceId: string; purpose: string; runNonce: string }): Promise<void>;
  /** Tells a running generation to stop. Best effort: the lease is already closed. */
  leaseClosed(leaseIds: string[], reason: ClosedReason): Promise<void>;
};

export type LeaseEventView = { id: number; at: Date; kind: EventKind; detail: unknown };
export type LeaseView = {
  id: string;
  actorId: string;
  invoiceId: string;
  purpose: string;
  status: LeaseStatus;
  deadlineAt: Date;
  createdAt: Date | null;
  proposal: LeaseProposal | null;
  closedReason: ClosedReason | null;
  /** The database clock when this view was read, so a client can count down honestly. */
  now: Date;
  events: LeaseEventView[];
};

// Written literally, not as bound parameters, so the planner can match the partial indexes'
// predicate (`WHERE status in ('open','proposed')`) in generic plans too.
const inFlight = sql`${inferenceLease.status} in ('open','proposed')`;
const isOverdue = sql<boolean>`${inferenceLease.deadlineAt} <= now()`;
const dbNow = sql`now()`;

export function isPurpose(value: unknown): value is Purpose {
  return typeof value === "string" && (PURPOSES as readonly string[]).includes(value);
}

async function recordEvent(tx: Tx | Db, leaseId: string, kind: EventKind, detail?: Record<string, unknown>) {
  await tx.insert(leaseEvent).values({ leaseId, kind, detail: detail ?? null });
}

async function recordEvents(tx: Tx, leaseIds: string[], kind: EventKind, detail: Record<string, unknown>) {
  if (leaseIds.length === 0) return;
  await tx.insert(leaseEvent).values(leaseIds.map((leaseId) => ({ leaseId, kind, detail })));
}

/**
 * Records `expired` for the in-flight leases matching `where` whose deadline has passed.
 * Must run inside a transaction so the transition and its event commit together.
 */
async function expireDue(tx: Tx, where: SQL | undefined, by: string): Promise<string[]> {
  const rows = await tx
    .update(inferenceLease)
    .set({ status: "expired", closedReason: "deadline_passed", updatedAt: dbNow })
    .where(and(where, inFlight, lte(inferenceLease.deadlineAt, dbNow)))
    .returning({ id: inferenceLease.id });
  const ids = rows.map((r) => r.id);
  await recordEvents(tx, ids, "expired", { by });
  return ids;
}

/** Whether the actor's session is live by the database clock; if so, held FOR SHARE until commit (sign-out waits). */
async function holdLiveSession(tx: Tx, actorId: string, sessionId: string): Promise<boolean> {
  if (!isUuid(sessionId)) return false;
  const [live] = await tx
    .select({ id: appSession.id })
    .from(appSession)
    .where(
      and(
        eq(appSession.id, sessionId),
        eq(appSession.userId, actorId),
        sql`${appSession.revokedAt} is null`,
        sql`${appSession.expiresAt} > now()`,
      ),
    )
    .for("share");
  return Boolean(live);
}

// ---------------------------------------------------------------------------------------
// Open (check 1)

export type OpenResult =
  | { ok: true; created: boolean; lease: InferenceLease }
  | {
      ok: false;
      code: OpenRefusal;
    };

export const openLease = tracedLeaseOp("lease.open", async function openLease(
  db: Db,
  input: { actorId: string; sessionId: string | null; invoiceId: unknown; purpose: unknown; ttlSeconds: number },
  dispatch: LeaseDispatch,
): Promise<OpenResult> {
  const { actorId, sessionId, invoiceId, purpose, ttlSeconds } = input;
  if (!isPurpose(purpose)) return { ok: false, code: "purpose_not_allowed" };
  if (!isUuid(invoiceId)) return { ok: false, code: "invoice_not_found" };

  // The lease in flight can close between our insert (which it blocked) and our read of it;
  // then one more attempt opens afresh.
  let outcome: OpenResult | "closed_meanwhile" = "closed_meanwhile";
  for (let attempt = 0; attempt < 2 && outcome === "closed_meanwhile"; attempt++) {
    outcome = await db.transaction(async (tx): Promise<OpenResult | "closed_meanwhile"> => {
      // Holds sign-out back until this lease is committed (its UPDATE of the session row
      // waits on this share lock), so sign-out then sees the lease and closes it; and a
      // session signed out (or past its end) a moment ago opens nothing.
      if (sessionId && !(await holdLiveSession(tx, actorId, sessionId))) return { ok: false, code: "not_signed_in" };
      // Shared lock: an edit running beside us either commits first (we read its version) or
      // waits for our commit and then sees this lease, which it withdraws (withdrawOutdated).
      const [inv] = await tx
        .select({ id: invoice.id, version: invoice.version })
        .from(invoice)
        .where(and(eq(invoice.id, invoiceId), eq(invoice.ownerId, actorId)))
        .for("share");
      if (!inv) return { ok: false, code: "invoice_not_found" };

      // A lease past its deadline no longer holds the in-flight slot.
      const scope = and(eq(inferenceLease.invoiceId, invoiceId), eq(inferenceLease.purpose, purpose));
      await expireDue(tx, scope, "open");

      // The partial unique index decides who wins a race of opens: the losers' inserts wait
      // for the winner to commit, then do nothing, and read the winner's row below.
      const [created] = await tx
        .insert(inferenceLease)
        .values({
          actorId,
          invoiceId,
          purpose,
          status: "open",
          deadlineAt: sql`now() + make_interval(secs => ${ttlSeconds})`,
          sessionId,
          invoiceVersion: inv.version,
        })
        .onConflictDoNothing()
        .returning();
      if (created) {
        await recordEvent(tx, created.id, "opened", { ttl_seconds: ttlSeconds, invoice_version: inv.version });
        return { ok: true, created: true, lease: created };
      }
      const [existing] = await tx.select().from(inferenceLease).where(and(scope, inFlight));
      if (!existing) return "closed_meanwhile";
      if (existing.actorId !== actorId) return { ok: false, code: "lease_in_flight" };
      return { ok: true, created: false, lease: existing };
    });
  }

  if (outcome === "closed_meanwhile") return { ok: false, code: "lease_in_flight" };
  if (!outcome.ok || !outcome.created) return outcome;
  try {
    await dispatch.leaseOpened(outcome.lease);
  } catch (error) {
    // The full error (it can name hosts and keys' ids) goes to the log; the event, which the
    // actor reads, gets a code and plain words.
    const message = error instanceof Error ? error.message : String(error);
    log.warn("lease dispatch failed", { lease_id: outcome.lease.id, error: message });
    await db.transaction(async (tx) => {
      const closed = await tx
        .update(inferenceLease)
        .set({ status: "rejected", closedReason: "dispatch_failed", updatedAt: dbNow })
        .where(and(eq(inferenceLease.id, outcome.lease.id), inFlight))
        .returning({ id: inferenceLease.id });
      if (closed.length) {
        await recordEvent(tx, outcome.lease.id, "dispatch_failed", {
          code: "service_unavailable",
          message: "The generation service could not be reached.",
        });
      }
    });
    return { ok: false, code: "dispatch_failed" };
  }
  return outcome;
}, (_args, result) => (result?.ok ? [result.lease.id] : []), (result) => ({ ...outcome(result), "claimcheck.created": result.ok && result.created }));

// ---------------------------------------------------------------------------------------
// Read

async function loadEvents(tx: Tx | Db, leaseId: string): Promise<LeaseEventView[]> {
  return tx
    .select({ id: leaseEvent.id, at: leaseEvent.at, kind: leaseEvent.kind, detail: leaseEvent.detail })
    .from(leaseEvent)
    .where(eq(leaseEvent.leaseId, leaseId))
    .orderBy(asc(leaseEvent.id));
}

const leaseWithNow = { ...getTableColumns(inferenceLease), now: sql<Date>`now()`.mapWith(toDate) };

async function view(tx: Tx, lease: InferenceLease & { now: Date }): Promise<LeaseView> {
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
    events: await loadEvents(tx, lease.id),
  };
}

function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** In flight and past its deadline by the database clock: a read must record `expired` first. */
const overdueInFlight = sql<boolean>`(${inferenceLease.status} in ('open','proposed') and ${inferenceLease.deadlineAt} <= now())`;

/**
 * The lease's timeline as one JSON array, read in the same statement as the lease. Table names
 * are written out: drizzle renders a column of the outer table unqualified here, and the
 * subquery's own `id` would capture it.
 */
const eventsJson = sql<{ id: number; at: string; kind: EventKind; detail: unknown }[]>`coalesce((
  select json_agg(json_build_object('id', e.id, 'at', e.at, 'kind', e.kind, 'detail', e.detail) order by e.id)
  from lease_event e where e.lease_id = inference_lease.id), '[]'::json)`;

const leaseWithTimeline = { ...leaseWithNow, overdueInFlight, events: eventsJson };

type LeaseWithTimeline = InferenceLease & { now: Date; overdueInFlight: boolean; events: { id: number; at: string; kind: EventKind; detail: unknown }[] };

function viewOf(row: LeaseWithTimeline): LeaseView {
  const { overdueInFlight: _due, events, ...lease } = row;
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
    events: events.map((e) => ({ id: Number(e.id), at: new Date(e.at), kind: e.kind, detail: e.detail })),
  };
}

/**
 * The actor's lease, with its timeline; recorded `expired` first if its deadline passed.
 * One read statement (lease, timeline and the database clock in one snapshot) unless the lease
 * is in flight past its deadline: only then a transaction records `expired` and reads again.
 */
export async function readLease(db: Db, actorId: string, leaseId: unknown): Promise<LeaseView | null> {
  if (!isUuid(leaseId)) return null;
  const [row] = await db
    .select(leaseWithTimeline)
    .from(inferenceLease)
    .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId)));
  if (!row) return null;
  return row.overdueInFlight ? readLeaseRecordingExpiry(db, actorId, leaseId) : viewOf(row);
}

async function readLeaseRecordingExpiry(db: Db, actorId: string, leaseId: string): Promise<LeaseView | null> {
  return db.transaction(async (tx) => {
    const mine = and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId));
    await expireDue(tx, mine, "read");
    const [lease] = await tx.select(leaseWithNow).from(inferenceLease).where(mine);
    return lease ? view(tx, lease) : null;
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
): Promise<LeaseView | null | "signed_out"> {
  const { actorId, sessionId } = session;
  if (!isUuid(leaseId) || !isUuid(sessionId)) return null;
  const live = sql<boolean>`exists (select 1 from app_session s where s.id = ${sessionId} and s.user_id = ${actorId}
    and s.revoked_at is null and s.expires_at > now())`;
  const [row] = await db
    .select({ ...leaseWithTimeline, sessionLive: live })
    .from(inferenceLease)
    .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId)));
  if (!row) return null;
  const { sessionLive, ...lease } = row;
  if (!sessionLive) return "signed_out";
  return lease.overdueInFlight ? readLeaseRecordingExpiry(db, actorId, leaseId) : viewOf(lease);
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
    return lease ? view(tx, lease) : null;
  });
}

export type AttemptView = {
  id: string;
  actorName: string;
  status: LeaseStatus;
  closedReason: ClosedReason | null;
  createdAt: Date | null;
  events: LeaseEventView[];
};

const newestFirst = [desc(inferenceLease.createdAt), desc(inferenceLease.id)] as const;

/**
 * Every attempt (lease) on an invoice the actor owns, newest first, one page of them, each
 * with its timeline and the name of whoever asked: the invoice's own record, so it includes
 * attempts by a former owner. Overdue ones are recorded expired first, as every read does.
 */
export async function invoiceAttempts(
  db: Db,
  actorId: string,
  invoiceId: string,
  page: { offset: number; limit: number },
): Promise<{ total: number; attempts: AttemptView[] }> {
  return db.transaction(async (tx) => {
    const [owned] = await tx
      .select({ id: invoice.id })
      .from(invoice)
      .where(and(eq(invoice.id, invoiceId), eq(invoice.ownerId, actorId)));
    if (!owned) return { total: 0, attempts: [] };
    const onInvoice = eq(inferenceLease.invoiceId, invoiceId);
    await expireDue(tx, onInvoice, "read");
    const [{ total } = { total: 0 }] = await tx
      .select({ total: sql<number>`count(*)`.mapWith(Number) })
      .from(inferenceLease)
      .where(onInvoice);
    const leases = await tx
      .select({
        id: inferenceLease.id,
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
          .where(inArray(leaseEvent.leaseId, leases.map((l) => l.id)))
          .orderBy(asc(leaseEvent.id))
      : [];
    return {
      total,
      attempts: leases.map((l) => ({
        ...l,
        events: events.filter((e) => e.leaseId === l.id).map(({ leaseId: _lease, ...e }) => e),
      })),
    };
  });
}

/**
 * The attempt whose summary is on the invoice: the latest applied one (only an apply writes
 * the summary), who applied it and when, and its place in the newest-first history.
 */
export async function appliedAttempt(
  db: Db,
  actorId: string,
  invoiceId: string,
): Promise<{ id: string; actorName: string; appliedAt: Date; position: number } | null> {
  const [row] = await db
    .select({
      id: inferenceLease.id,
      actorName: appUser.name,
      appliedAt: leaseEvent.at,
      position: sql<number>`(select count(*) from ${inferenceLease} newer
        where newer.invoice_id = ${inferenceLease.invoiceId}
          and (newer.created_at, newer.id) > (${inferenceLease.createdAt}, ${inferenceLease.id}))`.mapWith(Number),
    })
    .from(inferenceLease)
    .innerJoin(invoice, and(eq(invoice.id, inferenceLease.invoiceId), eq(invoice.ownerId, actorId)))
    .innerJoin(appUser, eq(appUser.id, inferenceLease.actorId))
    .innerJoin(leaseEvent, and(eq(leaseEvent.leaseId, inferenceLease.id), eq(leaseEvent.kind, "applied")))
    .where(and(eq(inferenceLease.invoiceId, invoiceId), eq(inferenceLease.status, "applied")))
    .orderBy(desc(leaseEvent.at), desc(leaseEvent.id))
    .limit(1);
  return row ?? null;
}

// ---------------------------------------------------------------------------------------
// Generate (check 2): load, then propose. Nothing here is held across the model call.

export type GenerationInput =
  | { ok: true; lease: { id: string; actorId: string; purpose: Purpose; deadlineAt: Date; remainingMs: number }; invoice: InvoiceForModel }
  | { ok: false; reason: "lease_not_found" | "not_open" | "expired" | "invoice_not_found"; status?: LeaseStatus };

/** The invoice's lines as one JSON array, in the order the page shows them. */
const linesJson = sql<{ description: string; quantity: number; unitPriceCents: number }[]>`coalesce((
  select json_agg(json_build_object('description', l.description, 'quantity', l.quantity, 'unitPriceCents', l.unit_price_cents)
    order by l.position, l.id)
  from invoice_line l where l.invoice_id = invoice.id), '[]'::json)`;

/**
 * Reads what a generation needs: the lease if it is open and in time, and its invoice read as
 * the lease's actor. One read statement, remaining time on the database clock; a write
 * transaction only for a lease in flight past its deadline, which is recorded `expired`.
 */
export async function loadForGeneration(db: Db, leaseId: string): Promise<GenerationInput> {
  if (!isUuid(leaseId)) return { ok: false, reason: "lease_not_found" };
  return readForGeneration(db, leaseId, false);
}

async function readForGeneration(db: Db, leaseId: string, recorded: boolean): Promise<GenerationInput> {
  const [row] = await db
    .select({
      id: inferenceLease.id,
      actorId: inferenceLease.actorId,
      purpose: inferenceLease.purpose,
      status: inferenceLease.status,
      deadlineAt: inferenceLease.deadlineAt,
      remainingMs: sql<number>`greatest(0, floor(extract(epoch from (${inferenceLease.deadlineAt} - now())) * 1000))`.mapWith(Number),
      overdueInFlight,
      // Scoped to the lease's actor (the join): a lease can never read someone else's invoice.
      invoice: getTableColumns(invoice),
      lines: linesJson,
    })
    .from(inferenceLease)
    .leftJoin(invoice, and(eq(invoice.id, inferenceLease.invoiceId), eq(invoice.ownerId, inferenceLease.actorId)))
    .where(eq(inferenceLease.id, leaseId));
  if (!row) return { ok: false, reason: "lease_not_found" };
  if (row.overdueInFlight) {
    // Still in flight after our expiry found nothing to do: a writer we cannot see yet.
    if (recorded) return { ok: false, reason: "not_open", status: row.status };
    const expired = await db.transaction((tx) => expireDue(tx, eq(inferenceLease.id, leaseId), "generate"));
    if (expired.length) return { ok: false, reason: "expired", status: "expired" };
    // Closed meanwhile by someone else (the sweep, a cancel): read what it is now.
    return readForGeneration(db, leaseId, true);
  }
  if (row.status !== "open" || !isPurpose(row.purpose)) return { ok: false, reason: "not_open", status: row.status };
  const inv = row.invoice;
  if (!inv) return { ok: false, reason: "invoice_not_found" };
  return {
    ok: true,
    lease: { id: row.id, actorId: row.actorId, purpose: row.purpose, deadlineAt: row.deadlineAt, remainingMs: row.remainingMs },
    invoice: {
      id: inv.id,
      number: inv.number,
      counterparty: inv.counterparty,
      currency: inv.currency,
      totalCents: inv.totalCents,
      issuedOn: inv.issuedOn,
      dueOn: inv.dueOn,
      lines: row.lines,
    },
  };
}

export type ProposeResult =
  | { ok: true }
  | { ok: false; code: "lease_not_found" | "run_mismatch" | "actor_mismatch" | "late_completion"; status?: LeaseStatus };

/** The lease's run nonce equals `runNonce`, compared in the database: the nonce is never read out. */
const runMatches = (runNonce: unknown) =>
  typeof runNonce === "string" ? sql<boolean>`(${inferenceLease.runNonce} = ${runNonce})` : sql<boolean>`false`;

/**
 * Check 2's write: one conditional UPDATE. If it changes no row the completion comes from a
 * run this lease did not dispatch, is late, or names the wrong actor; we re-read only to say
 * which, and write nothing but the event.
 *
 * `runNonce` is what the lease/opened event carried (never re-read here): a call that did not
 * come from the run the lease dispatched cannot know it. Such a proposal changes nothing at
 * all, not even an overdue or mismatched lease's status, so a forger cannot close leases either.
 */
export const proposeLease = tracedLeaseOp("lease.propose", async function proposeLease(
  db: Db,
  input: { leaseId: string; actorId: string; runNonce: string; proposal: LeaseProposal },
): Promise<ProposeResult> {
  const { leaseId, actorId, runNonce, proposal } = input;
  if (!isUuid(leaseId)) return { ok: false, code: "lease_not_found" };
  const result = await db.transaction(async (tx): Promise<ProposeResult> => {
    if (isUuid(actorId) && typeof runNonce === "string") {
      const [row] = await tx
        .update(inferenceLease)
        .set({ status: "proposed", proposal, updatedAt: dbNow })
        .where(
          and(
            eq(inferenceLease.id, leaseId),
            eq(inferenceLease.status, "open"),
            eq(inferenceLease.actorId, actorId),
            eq(inferenceLease.runNonce, runNonce),
            gt(inferenceLease.deadlineAt, dbNow),
          ),
        )
        .returning({ id: inferenceLease.id });
      if (row) {
        await recordEvent(tx, leaseId, "proposed", { model: proposal.model, summary_chars: proposal.summary.length });
        return { ok: true };
      }
    }
    const [current] = await tx
      .select({
        status: inferenceLease.status,
        actorId: inferenceLease.actorId,
        overdue: isOverdue,
        runMatches: runMatches(runNonce),
      })
      .from(inferenceLease)
      .where(eq(inferenceLease.id, leaseId));
    if (!current) return { ok: false, code: "lease_not_found" };
    if (!current.runMatches) {
      await recordEvent(tx, leaseId, "run_mismatch", { step: "propose", status: current.status });
      return { ok: false, code: "run_mismatch", status: current.status };
    }
    if (current.actorId !== actorId) {
      // A completion made for someone else fails closed, and the lease with it.
      const closed = await tx
        .update(inferenceLease)
        .set({ status: "rejected", closedReason: "actor_mismatch", updatedAt: dbNow })
        .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.status, "open")))
        .returning({ id: inferenceLease.id });
      await recordEvent(tx, leaseId, "actor_mismatch", {
        claimed_actor: isUuid(actorId) ? actorId : "invalid",
        status: closed.length ? "rejected" : current.status,
        // Whether this completion closed the lease, so the timeline tells a transition from a refusal.
        closed: closed.length > 0,
      });
      return { ok: false, code: "actor_mismatch", status: closed.length ? "rejected" : current.status };
    }
    let status = current.status;
    if (status === "open" && current.overdue) {
      await expireDue(tx, eq(inferenceLease.id, leaseId), "propose");
      status = "expired";
    }
    await recordEvent(tx, leaseId, "late_completion", { status, model: proposal.model });
    return { ok: false, code: "late_completion", status };
  });
  if (!result.ok) log.warn("completion not proposed", { lease_id: leaseId, code: result.code, status: result.status });
  return result;
}, ([, input]) => [input.leaseId], (result) => outcome(result));

/**
 * Why a generation failed, as the actor sees it: a stable code and plain words. The error
 * itself (SQL text, hosts, ids) goes to the server log only.
 */
export const GENERATION_FAILURES = {
  model_unavailable: "The model could not be reached.",
  model_output_invalid: "The model's answer could not be used.",
  model_not_configured: "The model is not configured.",
  invoice_not_found: "The invoice could not be read.",
  internal_error: "Something went wrong on our side.",
} as const satisfies Record<GenerationFailureCode, string>;

/**
 * A generation that cannot finish closes its lease at once, so the user learns now, not at the
 * deadline. Like propose, it needs the run's nonce: any other caller writes only `run_mismatch`.
 */
export const failGeneration = tracedLeaseOp("lease.fail_generation", async function failGeneration(
  db: Db,
  input: { leaseId: string; runNonce: string; code: GenerationFailureCode },
): Promise<{ closed: boolean; refused?: "run_mismatch" }> {
  const { leaseId, runNonce, code } = input;
  if (!isUuid(leaseId)) return { closed: false };
  return db.transaction(async (tx) => {
    const [lease] = await tx
      .select({ status: inferenceLease.status, runMatches: runMatches(runNonce) })
      .from(inferenceLease)
      .where(eq(inferenceLease.id, leaseId));
    if (!lease) return { closed: false };
    if (!lease.runMatches) {
      await recordEvent(tx, leaseId, "run_mismatch", { step: "fail", status: lease.status });
      return { closed: false, refused: "run_mismatch" as const };
    }
    // Past its deadline the lease is expired, not failed: record that first.
    await expireDue(tx, eq(inferenceLease.id, leaseId), "generation_failed");
    const closed = await tx
      .update(inferenceLease)
      .set({ status: "rejected", closedReason: "generation_failed", updatedAt: dbNow })
      .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.status, "open"), eq(inferenceLease.runNonce, runNonce)))
      .returning({ id: inferenceLease.id });
    await recordEvent(tx, leaseId, "generation_failed", {
      code,
      message: GENERATION_FAILURES[code] ?? GENERATION_FAILURES.internal_error,
      closed: closed.length > 0,
    });
    return { closed: closed.length > 0 };
  });
}, ([, input]) => [input.leaseId], (result) => ({ "claimcheck.closed": result.closed }));

// ---------------------------------------------------------------------------------------
// Apply (check 3)

export type ApplyResult =
  | { ok: true; invoiceVersion: number }
  | {
      ok: false;
      // not_signed_in only when a sessionId is given (the HTTP route checks the session here).
      code: ApplyRefusal | "not_signed_in";
      /** Why a lease_rejected lease was closed, so the page can say it without reading again. */
      closedReason?: ClosedReason | null;
    };

class FailClosed extends Error {}

/**
 * With `sessionId`, the session must be live (checked first, in this transaction, and held
 * FOR SHARE as openLease does), else `not_signed_in` and nothing is written: the route then
 * needs no transaction of its own to resolve the session.
 */
export const applyLease = tracedLeaseOp("lease.apply", async function applyLease(db: Db, actorId: string, leaseId: unknown, opts: { sessionId?: string } = {}): Promise<ApplyResult> {
  if (!isUuid(leaseId)) return { ok: false, code: "lease_not_found" };
  try {
    return await db.transaction(async (tx): Promise<ApplyResult> => {
      if (opts.sessionId !== undefined && !(await holdLiveSession(tx, actorId, opts.sessionId))) {
        return { ok: false, code: "not_signed_in" };
      }
      const [lease] = await tx
        .select({
          id: inferenceLease.id,
          status: inferenceLease.status,
          invoiceId: inferenceLease.invoiceId,
          invoiceVersion: inferenceLease.invoiceVersion,
          closedReason: inferenceLease.closedReason,
          proposal: inferenceLease.proposal,
          overdue: isOverdue,
        })
        .from(inferenceLease)
        .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId)))
        .for("update");
      if (!lease) return { ok: false, code: "lease_not_found" };

      const refuse = async (code: Exclude<ApplyResult, { ok: true }>["code"]) => {
        await recordEvent(tx, lease.id, "apply_refused", { code });
        return { ok: false as const, code, ...(code === "lease_rejected" ? { closedReason: lease.closedReason } : {}) };
      };
      if ((lease.status === "open" || lease.status === "proposed") && lease.overdue) {
        // Late: record `expired` in this same transaction, then refuse.
        await expireDue(tx, eq(inferenceLease.id, lease.id), "apply");
        return refuse("lease_expired");
      }
      // Withdrawn by an edit (withdrawOutdated): the answer says why, as it did when apply found it.
      if (lease.status === "rejected" && lease.closedReason === "invoice_changed") return refuse("invoice_changed");
      if (lease.status !== "proposed") return refuse(`lease_${lease.status}`);

      const [inv] = await tx
        .select({ version: invoice.version })
        .from(invoice)
        .where(and(eq(invoice.id, lease.invoiceId), eq(invoice.ownerId, actorId)))
        .for("update");
      const summary = readSummary(lease.proposal);
      if (!inv || inv.version !== lease.invoiceVersion || summary === null) {
        await tx
          .update(inferenceLease)
          .set({ status: "rejected", closedReason: "invoice_changed", updatedAt: dbNow })
          .where(eq(inferenceLease.id, lease.id));
        await recordEvent(tx, lease.id, "invoice_changed", {
          by: "apply",
          lease_version: lease.invoiceVersion,
          invoice_version: inv?.version ?? null,
        });
        return { ok: false, code: "invoice_changed" };
      }

      const written = await tx
        .update(invoice)
        .set({ summary, version: sql`${invoice.version} + 1`, updatedAt: dbNow })
        .where(
          and(eq(invoice.id, lease.invoiceId), eq(invoice.ownerId, actorId), eq(invoice.version, inv.version)),
        )
        .returning({ version: invoice.version });
      if (written.length !== 1) throw new FailClosed(`invoice write changed ${written.length} rows`);

      await tx
        .update(inferenceLease)
        .set({ status: "applied", closedReason: null, updatedAt: dbNow })
        .where(and(eq(inferenceLease.id, lease.id), eq(inferenceLease.status, "proposed")));
      await recordEvent(tx, lease.id, "applied", { invoice_version: written[0]!.version });
      return { ok: true, invoiceVersion: written[0]!.version };
    });
  } catch (error) {
    if (error instanceof FailClosed) {
      log.warn("apply failed closed", { lease_id: leaseId, reason: error.message });
      return { ok: false, code: "invoice_changed" };
    }
    throw error;
  }
}, ([, , leaseId], result) => (result?.ok === false && result.code === "lease_not_found" ? [] : [leaseId]), (result) => outcome(result));

function readSummary(proposal: unknown): string | null {
  if (proposal && typeof proposal === "object" && "summary" in proposal) {
    const summary = (proposal as { summary: unknown }).summary;
    if (typeof summary === "string" && summary.trim()) return summary;
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// Cancel, sign-out, sweep

export type CancelResult = { ok: true } | { ok: false; code: CancelRefusal };

export const cancelLease = tracedLeaseOp("lease.cancel", async function cancelLease(db: Db, actorId: string, leaseId: unknown, dispatch: LeaseDispatch): Promise<CancelResult> {
  if (!isUuid(leaseId)) return { ok: false, code: "lease_not_found" };
  const result = await db.transaction(async (tx): Promise<CancelResult> => {
    const mine = and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId));
    const [row] = await tx
      .update(inferenceLease)
      .set({ status: "rejected", closedReason: "cancelled", updatedAt: dbNow })
      .where(and(mine, inFlight, gt(inferenceLease.deadlineAt, dbNow)))
      .returning({ id: inferenceLease.id });
    if (row) {
      await recordEvent(tx, leaseId, "cancelled");
      return { ok: true };
    }
    const [current] = await tx.select({ status: inferenceLease.status }).from(inferenceLease).where(mine);
    if (!current) return { ok: false, code: "lease_not_found" };
    const expired = await expireDue(tx, mine, "cancel");
    await recordEvent(tx, leaseId, "cancel_refused", { status: expired.length ? "expired" : current.status });
    return { ok: false, code: "lease_not_cancelable" };
  });
  if (result.ok) await tellClosed(dispatch, [leaseId], "cancelled");
  return result;
}, ([, , leaseId], result) => (result?.ok === false && result.code === "lease_not_found" ? [] : [leaseId]), (result) => outcome(result));

/**
 * Sign-out: ends the server-side session and closes, as `rejected`, the leases that
 * session opened. Both in one transaction; the running generations are told after.
 */
export const revokeSession = tracedLeaseOp("lease.revoke", async function revokeSession(
  db: Db,
  input: { actorId: string; sessionId: string },
  dispatch: LeaseDispatch,
): Promise<{ revoked: string[] }> {
  const { actorId, sessionId } = input;
  const revoked = await db.transaction(async (tx) => {
    await tx
      .update(appSession)
      .set({ revokedAt: dbNow })
      .where(and(eq(appSession.id, sessionId), eq(appSession.userId, actorId), sql`${appSession.revokedAt} is null`));
    const mine = and(eq(inferenceLease.sessionId, sessionId), eq(inferenceLease.actorId, actorId));
    await expireDue(tx, mine, "sign_out");
    const rows = await tx
      .update(inferenceLease)
      .set({ status: "rejected", closedReason: "signed_out", updatedAt: dbNow })
      .where(and(mine, inFlight))
      .returning({ id: inferenceLease.id });
    const ids = rows.map((r) => r.id);
    await recordEvents(tx, ids, "revoked", { reason: "signed_out" });
    return ids;
  });
  await tellClosed(dispatch, revoked, "signed_out");
  return { revoked };
}, (_args, result) => result?.revoked ?? []);

/**
 * An edit's first step, in its transaction before the invoice row is written: locks the
 * invoice's leases in flight. Apply locks its lease and then the invoice; taking the locks in
 * that same order keeps an edit and an apply from deadlocking.
 */
export async function lockLeasesInFlight(tx: Tx, invoiceId: string): Promise<void> {
  await tx
    .select({ id: inferenceLease.id })
    .from(inferenceLease)
    .where(and(eq(inferenceLease.invoiceId, invoiceId), inFlight))
    .for("update");
}

/**
 * An edit's last step, in its transaction after it wrote `version`: a lease in flight fenced
 * at an older version can never be applied, so it is closed now (rejected, invoice_changed)
 * rather than at the next Apply, and the page hears of it at once. Overdue ones are recorded
 * expired instead. `fields` names what the edit changed, so the page can say what is out of
 * date; values are not recorded (the event may outlive the actor's access to the invoice).
 * The caller tells running generations to stop (tellClosed) after its commit.
 */
export const withdrawOutdated = tracedLeaseOp("lease.withdraw", async function withdrawOutdated(tx: Tx, invoiceId: string, version: number, fields: string[]): Promise<string[]> {
  const onInvoice = eq(inferenceLease.invoiceId, invoiceId);
  await expireDue(tx, onInvoice, "edit");
  const rows = await tx
    .update(inferenceLease)
    .set({ status: "rejected", closedReason: "invoice_changed", updatedAt: dbNow })
    .where(and(onInvoice, inFlight, sql`${inferenceLease.invoiceVersion} is distinct from ${version}`))
    .returning({ id: inferenceLease.id, fence: inferenceLease.invoiceVersion });
  for (const row of rows) {
    await recordEvent(tx, row.id, "invoice_changed", { by: "edit", lease_version: row.fence, invoice_version: version, fields });
  }
  return rows.map((r) => r.id);
}, (_args, result) => result ?? []);

export async function tellClosed(dispatch: LeaseDispatch, leaseIds: string[], reason: ClosedReason) {
  if (leaseIds.length === 0) return;
  try {
    await dispatch.leaseClosed(leaseIds, reason);
  } catch (error) {
    // The lease is closed either way: a generation that was not told to stop will find it
    // closed when it proposes, and leave a late_completion event.
    log.warn("lease/closed not delivered", { lease_ids: leaseIds, error: error instanceof Error ? error.message : String(error) });
  }
}

/** The sweep: records `expired` for overdue in-flight leases, oldest deadline first, in one bounded batch. */
export const expireOverdue = tracedLeaseOp("lease.expire", async function expireOverdue(db: Db, batchSize: number = 200): Promise<{ expired: string[] }> {
  return db.transaction(async (tx) => {
    // Two statements on purpose: an `IN (subquery LIMIT n FOR UPDATE SKIP LOCKED)` may be
    // rescanned by the planner and touch more than n rows.
    const due = await tx
      .select({ id: inferenceLease.id })
      .from(inferenceLease)
      .where(and(inFlight, lte(inferenceLease.deadlineAt, dbNow)))
      .orderBy(asc(inferenceLease.deadlineAt))
      .limit(batchSize)
      .for("update", { skipLocked: true });
    if (due.length === 0) return { expired: [] };
    const expired = await expireDue(tx, inArray(inferenceLease.id, due.map((d) => d.id)), "sweep");
    return { expired };
  });
}, (_args, result) => result?.expired ?? []);
