import "server-only";
// What every lease transition shares: the in-flight and overdue predicates, recording events,
// expiring what is due, and holding a live session. Internal to lib/leases.
// Written literally, not as bound parameters, so the planner can match the partial indexes'
// predicate (`WHERE status in ('open','proposed')`) in generic plans too.
import type { Db, Tx } from "@/db/client";
import { inferenceLease, leaseEvent, appSession } from "@/db/schema";
import { isUuid } from "@/lib/ids";
import type { EventKind } from "@/lib/lease-vocabulary";
import { PURPOSES, type Purpose } from "@/lib/model/types";
import { and, eq, getTableColumns, lte, sql, type SQL } from "drizzle-orm";

export const inFlight = sql`${inferenceLease.status} in ('open','proposed')`;
export const isOverdue = sql<boolean>`${inferenceLease.deadlineAt} <= now()`;
export const dbNow = sql`now()`;

export function isPurpose(value: unknown): value is Purpose {
  return typeof value === "string" && (PURPOSES as readonly string[]).includes(value);
}

export async function recordEvent(tx: Tx | Db, leaseId: string, kind: EventKind, detail?: Record<string, unknown>) {
  await tx.insert(leaseEvent).values({ leaseId, kind, detail: detail ?? null });
}

export async function recordEvents(tx: Tx, leaseIds: string[], kind: EventKind, detail: Record<string, unknown>) {
  if (leaseIds.length === 0) return;
  await tx.insert(leaseEvent).values(leaseIds.map((leaseId) => ({ leaseId, kind, detail })));
}

/**
 * Records `expired` for the in-flight leases matching `where` whose deadline has passed.
 * Must run inside a transaction so the transition and its event commit together.
 */
export async function expireDue(tx: Tx, where: SQL | undefined, by: string): Promise<string[]> {
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
export async function holdLiveSession(tx: Tx, actorId: string, sessionId: string): Promise<boolean> {
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

export const leaseWithNow = { ...getTableColumns(inferenceLease), now: sql<Date>`now()`.mapWith(toDate) };

export function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** In flight and past its deadline by the database clock: a read must record `expired` first. */
export const overdueInFlight = sql<boolean>`(${inFlight} and ${isOverdue})`;
