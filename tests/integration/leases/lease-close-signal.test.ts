// inngest/lease-close-signal.ts on a real database (PostgreSQL or PGlite, per run): the signal
// a generation hands its model call aborts when the lease's events say it closed (heard over
// the process's one LISTEN, lib/lease-feed.ts), or at its deadline; not for events that
// leave the lease open, and never after release().
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease } from "@/db/schema";
import { watchLeaseClose } from "@/inngest/lease-close-signal";
import { applyLease, cancelLease, openLease, type LeaseDispatch } from "@/lib/leases";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

const quiet: LeaseDispatch = { async leaseOpened() {}, async leaseClosed() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function openOne() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  const opened = await openLease(t.db, { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 60 }, quiet);
  if (!opened.ok) throw new Error(`open failed: ${opened.code}`);
  return { alice, leaseId: opened.lease.id };
}

/** Resolves with the signal's reason once it aborts. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}

describe("watchLeaseClose", () => {
  it("aborts when the lease is cancelled, naming the event", async () => {
    const { alice, leaseId } = await openOne();
    const watch = await watchLeaseClose(leaseId, 60_000);
    expect(watch.signal.aborted).toBe(false);

    expect(await cancelLease(t.db, alice.id, leaseId, quiet)).toEqual({ ok: true });
    const reason = await aborted(watch.signal);
    expect(reason).toMatchObject({ name: "LeaseClosed", message: "lease closed: cancelled" });
    watch.release();
  });

  it("aborts at the deadline the database measured, when no event comes", async () => {
    const { leaseId } = await openOne();
    const watch = await watchLeaseClose(leaseId, 50);
    const reason = await aborted(watch.signal);
    expect(reason).toMatchObject({ name: "LeaseClosed", message: "lease closed: deadline" });
    watch.release();
  });

  it("does not abort for an event that leaves the lease open (an apply refused while it generates)", async () => {
    const { alice, leaseId } = await openOne();
    const watch = await watchLeaseClose(leaseId, 60_000);
    expect(await applyLease(t.db, alice.id, leaseId)).toMatchObject({ ok: false, code: "lease_open" });
    // A close on another lease is not this one's either. Notifications come in commit order,
    // so once the other lease's watch has heard its close, this one has heard the refusal.
    const other = await openOne();
    const probe = await watchLeaseClose(other.leaseId, 60_000);
    expect(await cancelLease(t.db, other.alice.id, other.leaseId, quiet)).toEqual({ ok: true });
    expect(await aborted(probe.signal)).toMatchObject({ message: "lease closed: cancelled" });
    probe.release();
    expect(watch.signal.aborted).toBe(false);
    watch.release();
  });

  it("after release(), neither a close nor the deadline aborts", async () => {
    const { alice, leaseId } = await openOne();
    const watch = await watchLeaseClose(leaseId, 30);
    watch.release();
    expect(await cancelLease(t.db, alice.id, leaseId, quiet)).toEqual({ ok: true });
    await sleep(200);
    expect(watch.signal.aborted).toBe(false);
    expect((await t.db.select().from(inferenceLease).where(sql`id = ${leaseId}`))[0]?.status).toBe("rejected");
  });
});
