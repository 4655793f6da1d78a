import "server-only";
// Apply (check 3): the only write of an invoice's summary, by the lease's own actor, while it
// is proposed and unexpired and the invoice is as it was. The deadline is judged once the rows
// are locked, on the clock of that moment (docs/decisions/0045).
import type { Db } from "@/db/client";
import { inferenceLease, invoice } from "@/db/schema";
import { ownedInvoice } from "@/lib/access";
import { isUuid } from "@/lib/ids";
import { summaryOf, type ApplyRefusal, type ClosedReason } from "@/lib/lease-codes";
import { log } from "@/lib/log";
import { outcome, tracedLeaseOp } from "@/lib/tracing";
import { and, eq, sql } from "drizzle-orm";
import { clockNow, expireDue, holdLiveSession, judgedAt, recordEvent, sessionLiveNow } from "./shared";

export type ApplyResult =
  | { ok: true; invoiceVersion: number }
  | {
      ok: false;
      // not_signed_in only when a sessionId is given (the HTTP route checks the session here).
      code: ApplyRefusal | "not_signed_in";
      /** Why a lease_rejected lease was closed, so the page can say it without reading again. */
      closedReason?: ClosedReason | null;
    };

class FailClosed extends Error {
  constructor(
    message: string,
    readonly code: "invoice_changed" | "lease_expired" = "invoice_changed",
  ) {
    super(message);
  }
}

/**
 * With `sessionId`, the session must be live (checked first, in this transaction, and held
 * FOR SHARE as openLease does, and not run out by the time the rows are locked), else
 * `not_signed_in` and nothing is written: the route then needs no transaction of its own to
 * resolve the session. A server action passes none: its db holds the session (sessionHeld).
 */
export const applyLease = tracedLeaseOp("lease.apply", applyLeaseUntraced, {
  leases: ([, , leaseId], result) => (result?.ok === false && result.code === "lease_not_found" ? [] : [leaseId]),
  attributes: outcome,
});

async function applyLeaseUntraced(db: Db, actorId: string, leaseId: unknown, opts: { sessionId?: string } = {}): Promise<ApplyResult> {
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
        })
        .from(inferenceLease)
        .where(and(eq(inferenceLease.id, leaseId), eq(inferenceLease.actorId, actorId)))
        .for("update");
      if (!lease) return { ok: false, code: "lease_not_found" };

      const refuse = async (code: Exclude<ApplyResult, { ok: true }>["code"]) => {
        await recordEvent(tx, lease.id, "apply_refused", { code });
        return { ok: false as const, code, ...(code === "lease_rejected" ? { closedReason: lease.closedReason } : {}) };
      };
      // The row is ours from here, however long we waited for it: past its deadline by the
      // clock now, it is recorded `expired` in this same transaction, and refused.
      const expiredNow = async () => (await expireDue(tx, eq(inferenceLease.id, lease.id), "apply", clockNow)).length > 0;
      if (lease.status === "open") return refuse((await expiredNow()) ? "lease_expired" : "lease_open");
      // Withdrawn by an edit (withdrawOutdated): the answer says why, as it did when apply found it.
      if (lease.status === "rejected" && lease.closedReason === "invoice_changed") return refuse("invoice_changed");
      if (lease.status !== "proposed") return refuse(`lease_${lease.status}`);

      const [inv] = await tx
        .select({ version: invoice.version })
        .from(invoice)
        .where(and(eq(invoice.id, lease.invoiceId), ownedInvoice(actorId)))
        .for("update");
      if (!inv || inv.version !== lease.invoiceVersion) {
        if (await expiredNow()) return refuse("lease_expired");
        await tx
          .update(inferenceLease)
          .set({ status: "rejected", closedReason: "invoice_changed", updatedAt: clockNow })
          .where(eq(inferenceLease.id, lease.id));
        await recordEvent(tx, lease.id, "invoice_changed", {
          by: "apply",
          lease_version: lease.invoiceVersion,
          invoice_version: inv?.version ?? null,
        });
        return { ok: false, code: "invoice_changed" };
      }
      // Only a lease seeded by hand (or a model's blank answer) holds no summary to write: its own
      // reason, not invoice_changed, since the invoice is as it was.
      const summary = summaryOf(lease.proposal);
      if (summary === null || !summary.trim()) {
        if (await expiredNow()) return refuse("lease_expired");
        await tx
          .update(inferenceLease)
          .set({ status: "rejected", closedReason: "proposal_unusable", updatedAt: clockNow })
          .where(eq(inferenceLease.id, lease.id));
        await recordEvent(tx, lease.id, "proposal_unusable", { by: "apply" });
        return { ok: false, code: "proposal_unusable" };
      }

      // The first write, on rows this transaction already holds, so it waits for nothing and
      // its conditions are judged now. (A condition of a statement that waits for a row is not
      // judged again after the wait unless the holder changed the row.)
      const [applied] = await tx
        .update(inferenceLease)
        .set({ status: "applied", closedReason: null, updatedAt: clockNow })
        .where(
          and(
            eq(inferenceLease.id, lease.id),
            eq(inferenceLease.status, "proposed"),
            sql`${inferenceLease.deadlineAt} > ${clockNow}`,
            opts.sessionId === undefined ? undefined : sessionLiveNow(opts.sessionId),
          ),
        )
        // The instant it was judged in time, which dates the `applied` event (not the later insert).
        .returning({ id: inferenceLease.id, inTimeAt: judgedAt(inferenceLease.deadlineAt) });
      // The deadline passed in the microseconds between the condition and RETURNING: undone, refused.
      if (applied && !applied.inTimeAt) throw new FailClosed("the deadline passed as apply wrote", "lease_expired");
      if (!applied) {
        if (await expiredNow()) return refuse("lease_expired");
        if (opts.sessionId !== undefined) return { ok: false, code: "not_signed_in" };
        throw new FailClosed("the locked lease changed meanwhile");
      }

      const written = await tx
        .update(invoice)
        .set({ summary, version: sql`${invoice.version} + 1`, summaryVersion: sql`${invoice.version} + 1`, updatedAt: clockNow })
        .where(and(eq(invoice.id, lease.invoiceId), ownedInvoice(actorId), eq(invoice.version, inv.version)))
        .returning({ version: invoice.version });
      // Thrown, so the lease's update above rolls back with the transaction.
      if (written.length !== 1) throw new FailClosed(`invoice write changed ${written.length} rows`);

      await recordEvent(tx, lease.id, "applied", { invoice_version: written[0]!.version }, applied.inTimeAt!);
      return { ok: true, invoiceVersion: written[0]!.version };
    });
  } catch (error) {
    if (error instanceof FailClosed) {
      log.warn("apply failed closed", { lease_id: leaseId, reason: error.message });
      return { ok: false, code: error.code };
    }
    throw error;
  }
}
