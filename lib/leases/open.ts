import "server-only";
// Open (check 1): the claim check. One transaction: the session held, the invoice the actor's, at
// most one lease in flight per invoice and purpose, the deadline on the database clock, and the
// session's end judged once the rows are held.
import type { Db, Tx } from "@/db/client";
import { inferenceLease, invoice, orgBudget, type InferenceLease } from "@/db/schema";
import { isUuid } from "@/lib/ids";
import type { OpenRefusal } from "@/lib/lease-codes";
import { log } from "@/lib/log";
import { outcome, tracedLeaseOp } from "@/lib/tracing";
import { and, eq, getTableColumns, sql } from "drizzle-orm";
import { memberOf, ownedInvoice } from "@/lib/access";
import { purposeOf } from "@/lib/purposes";
import { admitCall, capApplies, reservedAtOpen, type CapField } from "@/lib/spend";
import { leaseHolderName } from "./read";
import { dbNow, expireDue, holdLiveSession, inFlight, isPurpose, recordEvent, sessionLiveNow } from "./shared";
import { LeaseDispatch } from "./types";

export type OpenResult =
  | { ok: true; created: boolean; lease: InferenceLease }
  | {
      ok: false;
      code: OpenRefusal;
      /** lease_in_flight: the name of whoever holds it (the invoice changed hands), when known. */
      heldBy?: string | null;
      /** budget_exhausted: seconds until the exhausted period resets (the later one when several). */
      retryAfterSeconds?: number;
      /** budget_exhausted: the cap reached that resets last. */
      cap?: CapField;
    };

/** Whether the invoice is one of the actor's organization (a teammate's): asked only once open found it not theirs. */
async function visibleToActor(tx: Tx, actorId: string, invoiceId: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: invoice.id })
    .from(invoice)
    .where(and(eq(invoice.id, invoiceId), memberOf(invoice.orgId, actorId)));
  return Boolean(row);
}

/** Thrown in open's transaction when the session ran out while it waited for a row: it rolls back. */
class SessionRanOut extends Error {}

export const openLease = tracedLeaseOp("lease.open", openLeaseUntraced, {
  leases: (_args, result) => (result?.ok ? [result.lease.id] : []),
  attributes: (result) => ({ ...outcome(result), "claimcheck.created": result.ok && result.created }),
});

async function openLeaseUntraced(
  db: Db,
  input: { actorId: string; sessionId: string | null; invoiceId: unknown; purpose: unknown; ttlSeconds: number },
  dispatch: LeaseDispatch,
): Promise<OpenResult> {
  const { actorId, sessionId, invoiceId, purpose } = input;
  if (!isPurpose(purpose)) return { ok: false, code: "purpose_not_allowed" };
  if (!isUuid(invoiceId)) return { ok: false, code: "invoice_not_found" };
  const definition = purposeOf(purpose);
  const ttlSeconds = definition.ttlSeconds ?? input.ttlSeconds;

  // Whether the session has not run out by the clock of the statement that reads it: a column of
  // the insert's RETURNING (computed after any wait on the in-flight slot) and of the read of the
  // lease already in flight, the last statements of their paths, so judging it costs no statement.
  const sessionLive = sessionId ? sessionLiveNow(sessionId) : sql<boolean>`true`;
  const leaseAndSession = { ...getTableColumns(inferenceLease), sessionLive };

  // The lease in flight can close between our insert (which it blocked) and our read of it;
  // then one more attempt opens afresh.
  let outcome: OpenResult | "closed_meanwhile" = "closed_meanwhile";
  for (let attempt = 0; attempt < 2 && outcome === "closed_meanwhile"; attempt++) {
    outcome = await db
      .transaction(async (tx): Promise<OpenResult | "closed_meanwhile"> => {
        // Holds sign-out back until this lease is committed (its UPDATE of the session row
        // waits on this share lock), so sign-out then sees the lease and closes it; and a
        // session signed out (or past its end) a moment ago opens nothing.
        if (sessionId && !(await holdLiveSession(tx, actorId, sessionId))) return { ok: false, code: "not_signed_in" };
        // Shared lock: an edit running beside us either commits first (we read its version) or
        // waits for our commit and then sees this lease, which it withdraws (withdrawOutdated).
        // The organization's caps come with it (a left join): no statement more unless one applies.
        const [inv] = await tx
          .select({ id: invoice.id, version: invoice.version, orgId: invoice.orgId, capped: capApplies })
          .from(invoice)
          .leftJoin(orgBudget, eq(orgBudget.orgId, invoice.orgId))
          // The purpose's roles, stated in the statement: a role it does not admit reads as a teammate's invoice (403).
          .where(and(eq(invoice.id, invoiceId), ownedInvoice(actorId), memberOf(invoice.orgId, actorId, definition.roles)))
          .for("share", { of: invoice });
        if (!inv) return { ok: false, code: (await visibleToActor(tx, actorId, invoiceId)) ? "forbidden" : "invoice_not_found" };

        // A lease past its deadline no longer holds the in-flight slot.
        const scope = and(eq(inferenceLease.invoiceId, invoiceId), eq(inferenceLease.purpose, purpose));
        await expireDue(tx, scope, "open");

        // The budget, before anything is inserted or dispatched: over a cap, nothing happens
        // (docs/decisions/0075-spend-reserved-at-open.md).
        if (inv.capped) {
          const admitted = await admitCall(tx, { orgId: inv.orgId, actorId });
          if (!admitted.ok) {
            // The actor's own lease already in flight is answered as without a cap: it costs nothing more.
            const [own] = await tx
              .select(leaseAndSession)
              .from(inferenceLease)
              .where(and(scope, inFlight, eq(inferenceLease.actorId, actorId)));
            if (!own) return { ok: false, code: admitted.code, retryAfterSeconds: admitted.retryAfterSeconds, cap: admitted.cap };
            const { sessionLive: live, ...existing } = own;
            if (!live) throw new SessionRanOut();
            return { ok: true, created: false, lease: existing };
          }
        }

        // The partial unique index decides who wins a race of opens: the losers' inserts wait
        // for the winner to commit, then do nothing, and read the winner's row below.
        const [inserted] = await tx
          .insert(inferenceLease)
          .values({
            actorId,
            invoiceId,
            purpose,
            status: "open",
            deadlineAt: sql`now() + make_interval(secs => ${ttlSeconds})`,
            sessionId,
            invoiceVersion: inv.version,
            // Reserved whether or not a cap applies now (a value of the insert: no statement more),
            // so a cap set while this lease's call runs counts it (docs/decisions/0075).
            reservedCents: reservedAtOpen(purpose),
          })
          .onConflictDoNothing()
          .returning(leaseAndSession);
        if (inserted) {
          const { sessionLive: live, ...created } = inserted;
          if (!live) throw new SessionRanOut();
          await recordEvent(tx, created.id, "opened", { ttl_seconds: ttlSeconds, invoice_version: inv.version });
          return { ok: true, created: true, lease: created };
        }
        const [found] = await tx.select(leaseAndSession).from(inferenceLease).where(and(scope, inFlight));
        if (!found) return "closed_meanwhile";
        const { sessionLive: live, ...existing } = found;
        // Another user's lease: the route asks whether the session lives before it answers 409.
        if (existing.actorId !== actorId)
          return { ok: false, code: "lease_in_flight", heldBy: await leaseHolderName(tx, actorId, invoiceId) };
        if (!live) throw new SessionRanOut();
        return { ok: true, created: false, lease: existing };
      })
      .catch((error: unknown) => {
        if (error instanceof SessionRanOut) return { ok: false as const, code: "not_signed_in" as const };
        throw error;
      });
  }

  // Twice a lease in flight closed under us: someone else's, since ours would have been returned.
  if (outcome === "closed_meanwhile") return { ok: false, code: "lease_in_flight", heldBy: await leaseHolderName(db, actorId, invoiceId) };
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
}
