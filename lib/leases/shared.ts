import "server-only";
// What every lease transition shares: the in-flight and overdue predicates, recording events,
// expiring what is due, and the session checks. Internal to lib/leases.
// Written literally, not as bound parameters, so the planner can match the partial indexes'
// predicate (`WHERE status in ('open','proposed')`) in generic plans too.
import type { Db, Tx } from "@/db/client";
import { inferenceLease, leaseEvent, sqlCodes } from "@/db/schema";
import { IN_FLIGHT_STATUSES, type EventKind } from "@/lib/lease-codes";
import { and, getTableColumns, lte, sql, type AnyColumn, type SQL } from "drizzle-orm";

export const inFlight = sql`${inferenceLease.status} in (${sqlCodes(IN_FLIGHT_STATUSES)})`;
export const isOverdue = sql<boolean>`${inferenceLease.deadlineAt} <= now()`;
export const dbNow = sql`now()`;
/**
 * The clock as this statement runs, not as the transaction began: what apply and propose judge
 * the deadline by once the lease row is theirs, and what events are dated by (decision 0045).
 */
export const clockNow = sql`clock_timestamp()`;

/**
 * The database clock read once, as text (microseconds kept), by the statement that makes a
 * transition: `judgedAt(deadline)` is that instant while it is before `deadline`, else null.
 * The transition's event is dated by it (`recordEvent`'s `at`), not by a later statement, so
 * an event never says later than the moment the transition was judged in time.
 */
export const judgedAt = (deadline: SQL | AnyColumn) =>
  sql<string | null>`(select case when ${deadline} > c.t then c.t::text end from (select clock_timestamp() as t) c)`;

/** Records an event dated `at` (a judgedAt instant) or by the clock as this statement runs. */
export async function recordEvent(tx: Tx | Db, leaseId: string, kind: EventKind, detail?: Record<string, unknown>, at?: string) {
  await tx.insert(leaseEvent).values({ leaseId, kind, detail: detail ?? null, at: at === undefined ? clockNow : sql`${at}::timestamptz` });
}

export async function recordEvents(tx: Tx, leaseIds: string[], kind: EventKind, detail: Record<string, unknown>) {
  if (leaseIds.length === 0) return;
  await tx.insert(leaseEvent).values(leaseIds.map((leaseId) => ({ leaseId, kind, detail, at: clockNow })));
}

/**
 * Records `expired` for the in-flight leases matching `where` whose deadline has passed by
 * `at` (`now()`; `clockNow` where the rows were waited for). Must run inside a transaction so
 * the transition and its event commit together.
 */
export async function expireDue(tx: Tx, where: SQL | undefined, by: string, at: SQL = dbNow): Promise<string[]> {
  const rows = await tx
    .update(inferenceLease)
    .set({ status: "expired", closedReason: "deadline_passed", updatedAt: at })
    .where(and(where, inFlight, lte(inferenceLease.deadlineAt, at)))
    .returning({ id: inferenceLease.id });
  const ids = rows.map((r) => r.id);
  await recordEvents(tx, ids, "expired", { by });
  return ids;
}

// Open and apply hold the session in their own transaction, and judge its end once their rows
// are held; the action wrapper and the write routes do it for every transaction (sessionHeld).
export { holdLiveSession, sessionLiveNow } from "@/lib/sessions";
export { isPurpose } from "@/lib/purposes";

export const leaseWithNow = { ...getTableColumns(inferenceLease), now: sql<Date>`now()`.mapWith(toDate) };

export function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** In flight and past its deadline by the database clock: a read must record `expired` first. */
export const overdueInFlight = sql<boolean>`(${inFlight} and ${isOverdue})`;
