import "server-only";
// Closing leases: cancel, sign-out, an edit that outdates them, and the expiry sweep.
import type { Db, Tx } from "@/db/client";
import { inferenceLease, appSession, invoice } from "@/db/schema";
import { isUuid } from "@/lib/ids";
import type { CancelRefusal, ClosedReason } from "@/lib/lease-codes";
import { log } from "@/lib/log";
import { liveSession } from "@/lib/sessions";
import { outcome, tracedLeaseOp } from "@/lib/tracing";
import { and, asc, eq, gt, inArray, lte, sql, type SQL } from "drizzle-orm";
import { dbNow, expireDue, inFlight, recordEvent, recordEvents } from "./shared";
import { LeaseDispatch } from "./types";

export type CancelResult = { ok: true } | { ok: false; code: CancelRefusal };

export const cancelLease = tracedLeaseOp("lease.cancel", cancelLeaseUntraced, {
  leases: ([, , leaseId], result) => (result?.ok === false && result.code === "lease_not_found" ? [] : [leaseId]),
  attributes: outcome,
});

async function cancelLeaseUntraced(db: Db, actorId: string, leaseId: unknown, dispatch: LeaseDispatch): Promise<CancelResult> {
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
}

/**
 * Sign-out: ends the server-side session and closes, as `rejected`, the leases that
 * session opened. Both in one transaction; the running generations are told after. The
 * session need not be live: the leases of one that ran out or was ended are closed all the
 * same (`live` says whether it still was, for the answer).
 */
export const revokeSession = tracedLeaseOp("lease.revoke", revokeSessionUntraced, {
  leases: (_args, result) => result?.revoked ?? [],
});

async function revokeSessionUntraced(
  db: Db,
  input: { actorId: string; sessionId: string },
  dispatch: LeaseDispatch,
): Promise<{ live: boolean; revoked: string[] }> {
  const { actorId, sessionId } = input;
  const result = await db.transaction(async (tx) => {
    const [ended] = await tx
      .update(appSession)
      .set({ revokedAt: dbNow })
      .where(and(eq(appSession.id, sessionId), eq(appSession.userId, actorId), sql`${appSession.revokedAt} is null`))
      .returning({ live: sql<boolean>`${appSession.expiresAt} > now()` });
    const revoked = await closeInFlight(
      tx,
      and(eq(inferenceLease.sessionId, sessionId), eq(inferenceLease.actorId, actorId), notSubmitted),
    );
    return { live: ended?.live === true, revoked };
  });
  await tellClosed(dispatch, result.revoked, "signed_out");
  return result;
}

/**
 * Sign out everywhere: from a live session, ends every session of its user and closes, as
 * `rejected` (signed_out), all their leases in flight, whichever session opened them. Ending
 * the sessions first makes an open in any of them, which holds its session row FOR SHARE,
 * either commit before (and be closed here) or find its session revoked. From a session that
 * is not live it is refused, and only that session's leases are closed (revokeSession).
 */
export const revokeAllSessions = tracedLeaseOp("lease.revoke", revokeAllSessionsUntraced, {
  leases: (_args, result) => result?.revoked ?? [],
});

async function revokeAllSessionsUntraced(
  db: Db,
  input: { actorId: string; sessionId: string },
  dispatch: LeaseDispatch,
): Promise<{ ok: true; revoked: string[] } | { ok: false; code: "not_signed_in"; revoked: string[] }> {
  const { actorId, sessionId } = input;
  const revoked = await db.transaction(async (tx) => {
    const [asking] = await tx
      .update(appSession)
      .set({ revokedAt: dbNow })
      .where(liveSession(actorId, sessionId))
      .returning({ id: appSession.id });
    if (!asking) return null;
    await tx
      .update(appSession)
      .set({ revokedAt: dbNow })
      .where(and(eq(appSession.userId, actorId), sql`${appSession.revokedAt} is null`));
    return closeInFlight(tx, and(eq(inferenceLease.actorId, actorId), notSubmitted));
  });
  if (revoked === null) return { ok: false, code: "not_signed_in", revoked: (await revokeSession(db, input, dispatch)).revoked };
  await tellClosed(dispatch, revoked, "signed_out");
  return { ok: true, revoked };
}

/**
 * A member removed from their organization (lib/members.ts removeMember), inside its transaction:
 * every session of the user in that organization ends and their leases in flight there close
 * exactly as at sign-out everywhere (rejected, signed_out; overdue ones expired). The caller tells
 * the running generations (tellClosed, "signed_out") after its commit.
 */
export async function revokeMemberSessions(tx: Tx, member: { userId: string; orgId: string }): Promise<string[]> {
  await tx
    .update(appSession)
    .set({ revokedAt: dbNow })
    .where(and(eq(appSession.userId, member.userId), eq(appSession.orgId, member.orgId), sql`${appSession.revokedAt} is null`));
  const inOrg = sql`${inferenceLease.invoiceId} in (select ${invoice.id} from ${invoice} where ${invoice.orgId} = ${member.orgId})`;
  return closeInFlight(tx, and(eq(inferenceLease.actorId, member.userId), inOrg));
}

/**
 * A lease not submitted for approval. Sign-out, everywhere too, leaves a submitted request pending
 * (docs/decisions/0078): the submit was the requester's finished act, bound by hash, and the write
 * runs in the approver's session; a review outlasts a 12 h session. Removal closes it all the same.
 */
// Qualified by hand: drizzle writes an UPDATE's columns unqualified, and `id` in the subquery would be the request's.
const notSubmitted = sql`not exists (select 1 from approval_request r where r.lease_id = "inference_lease"."id")`;

/** Sign-out's closing of leases in flight (`mine` names them): overdue ones expired, the rest rejected. */
async function closeInFlight(tx: Tx, mine: SQL | undefined): Promise<string[]> {
  await expireDue(tx, mine, "sign_out");
  const rows = await tx
    .update(inferenceLease)
    .set({ status: "rejected", closedReason: "signed_out", updatedAt: dbNow })
    .where(and(mine, inFlight))
    .returning({ id: inferenceLease.id });
  const ids = rows.map((r) => r.id);
  await recordEvents(tx, ids, "revoked", { reason: "signed_out" });
  return ids;
}

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
export const withdrawOutdated = tracedLeaseOp("lease.withdraw", withdrawOutdatedUntraced, {
  leases: (_args, result) => result ?? [],
});

/** What outdated the lease: an edit of its fields, or the invoice given to another owner. */
export type WithdrawnBy = "edit" | "owner_change";

async function withdrawOutdatedUntraced(
  tx: Tx,
  invoiceId: string,
  version: number,
  fields: string[],
  by: WithdrawnBy = "edit",
): Promise<string[]> {
  const onInvoice = eq(inferenceLease.invoiceId, invoiceId);
  await expireDue(tx, onInvoice, by);
  const rows = await tx
    .update(inferenceLease)
    .set({ status: "rejected", closedReason: "invoice_changed", updatedAt: dbNow })
    .where(and(onInvoice, inFlight, sql`${inferenceLease.invoiceVersion} is distinct from ${version}`))
    .returning({ id: inferenceLease.id, fence: inferenceLease.invoiceVersion });
  for (const row of rows) {
    await recordEvent(tx, row.id, "invoice_changed", { by, lease_version: row.fence, invoice_version: version, fields });
  }
  return rows.map((r) => r.id);
}

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
export const expireOverdue = tracedLeaseOp("lease.expire", expireOverdueUntraced, {
  leases: (_args, result) => result?.expired ?? [],
});

async function expireOverdueUntraced(db: Db, batchSize: number = 200): Promise<{ expired: string[] }> {
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
    const expired = await expireDue(
      tx,
      inArray(
        inferenceLease.id,
        due.map((d) => d.id),
      ),
      "sweep",
    );
    return { expired };
  });
}
