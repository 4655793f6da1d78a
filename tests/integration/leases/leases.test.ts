// The lease domain on a real database (PostgreSQL or PGlite, per run): each transition, each refusal.
import type { LeaseProposal } from "@/lib/lease-codes";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease, invoice } from "@/db/schema";
import {
  applyLease,
  cancelLease,
  expireOverdue,
  failGeneration,
  loadForGeneration,
  openLease,
  proposeLease,
  readLease,
  type LeaseDispatch,
} from "@/lib/leases";
import * as rows from "../../support/db";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

function recorder(): LeaseDispatch & { opened: string[]; closed: string[] } {
  const opened: string[] = [];
  const closed: string[] = [];
  return {
    opened,
    closed,
    async leaseOpened(lease) {
      opened.push(lease.id);
    },
    async leaseClosed(ids) {
      closed.push(...ids);
    },
  };
}

async function setup() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  return { alice, inv };
}

/**
 * The database's own refusal of a write: its SQLSTATE and the constraint it names, from the
 * driver's error (postgres.js says constraint_name, PGlite constraint) under drizzle's wrapper.
 */
async function refusalOf(write: Promise<unknown>): Promise<{ code: unknown; constraint: unknown }> {
  try {
    await write;
  } catch (error) {
    let e = error as { code?: unknown; constraint?: unknown; constraint_name?: unknown; cause?: unknown } | undefined;
    while (e && e.code === undefined && e.cause) e = e.cause as typeof e;
    return { code: e?.code, constraint: e?.constraint_name ?? e?.constraint };
  }
  throw new Error("the database accepted the write");
}

const leaseRow = (id: string) => rows.leaseRow(t.db, id);
const invoiceRow = (id: string) => rows.invoiceRow(t.db, id);
const eventKinds = (leaseId: string) => rows.eventKinds(t.db, leaseId);

/** A lease inserted by hand with only the contract's seed columns, as an outside check would. */
async function seedLease(actorId: string, invoiceId: string, status: string, deadline: string, proposal: LeaseProposal | null = null) {
  const [row] = await t.db
    .insert(inferenceLease)
    .values({
      actorId,
      invoiceId,
      purpose: "summarize_invoice",
      status: status as never,
      deadlineAt: sql`now() + ${deadline}::interval`,
      proposal,
    })
    .returning();
  return row!;
}

describe("the two tests from the design", () => {
  it("apply on a proposed lease whose deadline passed: 409 lease_expired, recorded expired, summary untouched", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "proposed", "-1 second", { summary: "Late summary" });

    const result = await applyLease(t.db, alice.id, lease.id);

    expect(result).toEqual({ ok: false, code: "lease_expired" });
    expect((await leaseRow(lease.id)).status).toBe("expired");
    expect((await invoiceRow(inv.id)).summary).toBeNull();
    expect(await eventKinds(lease.id)).toEqual(["expired", "apply_refused"]);
  });

  it("apply on another actor's lease: lease_not_found (never a hint), invoice untouched", async () => {
    const { alice, inv } = await setup();
    const bob = await makeUser(t.db, "Bob");
    const lease = await seedLease(alice.id, inv.id, "proposed", "60 seconds", { summary: "Alice's summary" });

    const result = await applyLease(t.db, bob.id, lease.id);

    expect(result).toEqual({ ok: false, code: "lease_not_found" });
    expect((await leaseRow(lease.id)).status).toBe("proposed");
    const after = await invoiceRow(inv.id);
    expect(after.summary).toBeNull();
    expect(after.version).toBe(inv.version);
    expect(await eventKinds(lease.id)).toEqual([]);
  });
});

describe("open", () => {
  it("opens with a deadline on the database clock and sends lease/opened after the commit", async () => {
    const { alice, inv } = await setup();
    const dispatch = recorder();
    const result = await openLease(
      t.db,
      { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 90 },
      dispatch,
    );
    if (!result.ok) throw new Error(result.code);
    expect(result.created).toBe(true);
    expect(dispatch.opened).toEqual([result.lease.id]);
    const [{ seconds }] = (await t.db
      .select({ seconds: sql<number>`extract(epoch from (${inferenceLease.deadlineAt} - ${inferenceLease.createdAt}))`.mapWith(Number) })
      .from(inferenceLease)
      .where(eq(inferenceLease.id, result.lease.id))) as [{ seconds: number }];
    expect(seconds).toBeCloseTo(90, 0);
    expect((await leaseRow(result.lease.id)).invoiceVersion).toBe(inv.version);

    const again = await openLease(
      t.db,
      { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 90 },
      dispatch,
    );
    expect(again).toMatchObject({ ok: true, created: false, lease: { id: result.lease.id } });
    expect(dispatch.opened).toHaveLength(1);
  });

  it("refuses a purpose off the allow-list and a foreign invoice, writing nothing", async () => {
    const { alice, inv } = await setup();
    const bob = await makeUser(t.db, "Bob");
    const dispatch = recorder();
    const base = { sessionId: null, ttlSeconds: 90 };
    expect(await openLease(t.db, { ...base, actorId: alice.id, invoiceId: inv.id, purpose: "delete_invoice" }, dispatch)).toEqual({
      ok: false,
      code: "purpose_not_allowed",
    });
    expect(await openLease(t.db, { ...base, actorId: bob.id, invoiceId: inv.id, purpose: "summarize_invoice" }, dispatch)).toEqual({
      ok: false,
      code: "invoice_not_found",
    });
    expect(await openLease(t.db, { ...base, actorId: alice.id, invoiceId: "not-a-uuid", purpose: "summarize_invoice" }, dispatch)).toEqual({
      ok: false,
      code: "invoice_not_found",
    });
    const rows = await t.db.select().from(inferenceLease).where(eq(inferenceLease.invoiceId, inv.id));
    expect(rows).toHaveLength(0);
    expect(dispatch.opened).toHaveLength(0);
  });

  it("a lease whose dispatch fails is closed as rejected with a dispatch_failed event", async () => {
    const { alice, inv } = await setup();
    const failing: LeaseDispatch = {
      leaseOpened: async () => {
        throw new Error("fetch failed: connect ECONNREFUSED 10.0.0.7:8288 (POST /e/evt_secret_key)");
      },
      leaseClosed: async () => {},
    };
    const result = await openLease(
      t.db,
      { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 90 },
      failing,
    );
    expect(result).toEqual({ ok: false, code: "dispatch_failed" });
    const [row] = await t.db.select().from(inferenceLease).where(eq(inferenceLease.invoiceId, inv.id));
    expect(row).toMatchObject({ status: "rejected", closedReason: "dispatch_failed" });
    expect(await eventKinds(row!.id)).toEqual(["opened", "dispatch_failed"]);
    // The actor reads this event: a code and plain words, not the error (hosts, keys).
    const [, failed] = await rows.leaseEvents(t.db, row!.id);
    expect(failed!.detail).toEqual({ code: "service_unavailable", message: "The generation service could not be reached." });
  });

  it("an expired-but-unrecorded lease does not block a new one; it is recorded expired first", async () => {
    const { alice, inv } = await setup();
    const stale = await seedLease(alice.id, inv.id, "open", "-5 seconds");
    const result = await openLease(
      t.db,
      { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 90 },
      recorder(),
    );
    expect(result).toMatchObject({ ok: true, created: true });
    expect((await leaseRow(stale.id)).status).toBe("expired");
  });
});

describe("propose", () => {
  const proposal = { summary: "Northwind Traders, EUR 12,345.50", model: "test" };

  it("proposes an open lease in time, for its actor", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "60 seconds");
    expect(await proposeLease(t.db, { leaseId: lease.id, actorId: alice.id, runNonce: lease.runNonce, proposal })).toEqual({ ok: true });
    expect(await leaseRow(lease.id)).toMatchObject({ status: "proposed", proposal });
    expect(await eventKinds(lease.id)).toEqual(["proposed"]);
  });

  it("after the deadline: writes nothing but its events (expired, late_completion)", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "-1 second");
    const result = await proposeLease(t.db, { leaseId: lease.id, actorId: alice.id, runNonce: lease.runNonce, proposal });
    expect(result).toEqual({ ok: false, code: "late_completion", status: "expired" });
    const row = await leaseRow(lease.id);
    expect(row.status).toBe("expired");
    expect(row.proposal).toBeNull();
    expect(await eventKinds(lease.id)).toEqual(["expired", "late_completion"]);
    expect((await invoiceRow(inv.id)).summary).toBeNull();
  });

  it("after a cancel: writes nothing but late_completion", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "60 seconds");
    expect(await cancelLease(t.db, alice.id, lease.id, recorder())).toEqual({ ok: true });
    const result = await proposeLease(t.db, { leaseId: lease.id, actorId: alice.id, runNonce: lease.runNonce, proposal });
    expect(result).toEqual({ ok: false, code: "late_completion", status: "rejected" });
    expect((await leaseRow(lease.id)).proposal).toBeNull();
    expect(await eventKinds(lease.id)).toEqual(["cancelled", "late_completion"]);
  });

  it("naming another actor: fails closed, the lease closed, nothing proposed", async () => {
    const { alice, inv } = await setup();
    const mallory = await makeUser(t.db, "Mallory");
    const lease = await seedLease(alice.id, inv.id, "open", "60 seconds");
    const result = await proposeLease(t.db, { leaseId: lease.id, actorId: mallory.id, runNonce: lease.runNonce, proposal });
    expect(result).toEqual({ ok: false, code: "actor_mismatch", status: "rejected" });
    const row = await leaseRow(lease.id);
    expect(row.proposal).toBeNull();
    expect(row.status).toBe("rejected");
    expect(await eventKinds(lease.id)).toEqual(["actor_mismatch"]);
    // Not even a non-uuid "actor" slips through.
    const other = await seedLease(alice.id, (await makeInvoice(t.db, alice.id)).id, "open", "60 seconds");
    expect(await proposeLease(t.db, { leaseId: other.id, actorId: "alice", runNonce: other.runNonce, proposal })).toMatchObject({
      code: "actor_mismatch",
    });
  });

  it("from a run the lease did not dispatch (wrong or missing nonce): writes nothing but run_mismatch", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "60 seconds");
    const forged = { summary: "FORGED: pay IBAN XX00 0000", model: "forged" };
    for (const runNonce of ["0".repeat(64), `${lease.runNonce.slice(1)}x`, "", undefined as unknown as string]) {
      const result = await proposeLease(t.db, { leaseId: lease.id, actorId: alice.id, runNonce, proposal: forged });
      expect(result).toEqual({ ok: false, code: "run_mismatch", status: "open" });
    }
    // The lease as it was, to the column; only the audit events.
    expect(await leaseRow(lease.id)).toEqual(lease);
    expect(await rows.leaseEvents(t.db, lease.id)).toEqual(
      Array.from({ length: 4 }, () => ({ kind: "run_mismatch", detail: { step: "propose", status: "open" } })),
    );
    // Not even an overdue lease or a wrong actor moves it: a forger cannot close leases either.
    const mallory = await makeUser(t.db, "Mallory");
    const late = await seedLease(alice.id, (await makeInvoice(t.db, alice.id)).id, "open", "-1 second");
    expect(await proposeLease(t.db, { leaseId: late.id, actorId: mallory.id, runNonce: "f".repeat(64), proposal: forged })).toEqual({
      ok: false,
      code: "run_mismatch",
      status: "open",
    });
    expect(await leaseRow(late.id)).toEqual(late);
    expect(await eventKinds(late.id)).toEqual(["run_mismatch"]);
    // (Recorded expired by the ordinary path, so no overdue lease is left for the sweep test.)
    expect(await loadForGeneration(t.db, late.id)).toMatchObject({ ok: false, reason: "expired" });
    // The dispatched run's nonce still proposes.
    expect(await proposeLease(t.db, { leaseId: lease.id, actorId: alice.id, runNonce: lease.runNonce, proposal })).toEqual({ ok: true });
    expect((await leaseRow(lease.id)).proposal).toEqual(proposal);
  });

  it("a cancel while a slow generation sits between its read and its propose returns at once", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "60 seconds");
    const loaded = await loadForGeneration(t.db, lease.id);
    expect(loaded.ok).toBe(true);
    // The "model call" is in progress: nothing may hold the lease row meanwhile.
    let generationDone = false;
    const generation = new Promise<void>((resolve) => setTimeout(() => ((generationDone = true), resolve()), 1500));
    const cancelled = await cancelLease(t.db, alice.id, lease.id, recorder());
    expect(cancelled).toEqual({ ok: true });
    expect(generationDone).toBe(false); // the cancel did not wait for the generation
    await generation;
    expect(await proposeLease(t.db, { leaseId: lease.id, actorId: alice.id, runNonce: lease.runNonce, proposal })).toMatchObject({
      code: "late_completion",
    });
    expect((await leaseRow(lease.id)).status).toBe("rejected");
  });
});

describe("apply", () => {
  it("writes the summary where the actor owns the invoice, bumps the version, marks applied", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "proposed", "60 seconds", { summary: "Approved summary" });
    expect(await applyLease(t.db, alice.id, lease.id)).toEqual({ ok: true, invoiceVersion: inv.version + 1, written: ["summary"] });
    expect(await invoiceRow(inv.id)).toMatchObject({ summary: "Approved summary", version: inv.version + 1 });
    expect((await leaseRow(lease.id)).status).toBe("applied");
    expect(await applyLease(t.db, alice.id, lease.id)).toEqual({ ok: false, code: "lease_applied" });
  });

  it("refuses invoice_changed when the invoice moved since the lease opened, and closes the lease", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "proposed", "60 seconds", { summary: "Stale summary" });
    await t.db
      .update(invoice)
      .set({ counterparty: "Renamed Ltd", version: sql`${invoice.version} + 1` })
      .where(eq(invoice.id, inv.id));
    expect(await applyLease(t.db, alice.id, lease.id)).toEqual({ ok: false, code: "invoice_changed" });
    expect((await invoiceRow(inv.id)).summary).toBeNull();
    expect(await leaseRow(lease.id)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
  });

  it("refuses an open lease (lease_open) and a rejected one (lease_rejected)", async () => {
    const { alice, inv } = await setup();
    const open = await seedLease(alice.id, inv.id, "open", "60 seconds");
    expect(await applyLease(t.db, alice.id, open.id)).toEqual({ ok: false, code: "lease_open" });
    await cancelLease(t.db, alice.id, open.id, recorder());
    expect(await applyLease(t.db, alice.id, open.id)).toEqual({ ok: false, code: "lease_rejected", closedReason: "cancelled" });
    expect((await invoiceRow(inv.id)).summary).toBeNull();
  });

  it("fails closed if the invoice changed owner: never writes someone else's invoice", async () => {
    const { alice, inv } = await setup();
    const bob = await makeUser(t.db, "Bob");
    const lease = await seedLease(alice.id, inv.id, "proposed", "60 seconds", { summary: "x" });
    await t.db.update(invoice).set({ ownerId: bob.id }).where(eq(invoice.id, inv.id));
    expect(await applyLease(t.db, alice.id, lease.id)).toEqual({ ok: false, code: "invoice_changed" });
    expect((await invoiceRow(inv.id)).summary).toBeNull();
    // Closed as it would be by an edit, with the reason on record: no longer alice's to apply.
    expect(await leaseRow(lease.id)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
    expect(await rows.leaseEvents(t.db, lease.id)).toEqual([
      { kind: "invoice_changed", detail: { by: "apply", lease_version: inv.version, invoice_version: null } },
    ]);
  });
});

describe("read, generation load, failure, sweep", () => {
  it("reports a lease past its deadline as expired, and records it so", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "-1 second");
    const view = await readLease(t.db, alice.id, lease.id);
    expect(view?.status).toBe("expired");
    expect((await leaseRow(lease.id)).status).toBe("expired");
    expect(await readLease(t.db, (await makeUser(t.db, "Bob")).id, lease.id)).toBeNull();
    expect(await readLease(t.db, alice.id, "nope")).toBeNull();
  });

  it("loadForGeneration stops on a lease that is not open or is overdue, and reads the invoice as the lease's actor", async () => {
    const { alice, inv } = await setup();
    const open = await seedLease(alice.id, inv.id, "open", "60 seconds");
    const loaded = await loadForGeneration(t.db, open.id);
    if (!loaded.ok) throw new Error(loaded.reason);
    expect(loaded.invoice).toMatchObject({ id: inv.id, counterparty: "Northwind Traders", totalCents: 1234550 });
    expect(loaded.invoice.lines).toHaveLength(2);
    expect(loaded.lease.remainingMs).toBeGreaterThan(50_000);
    await cancelLease(t.db, alice.id, open.id, recorder());
    expect(await loadForGeneration(t.db, open.id)).toMatchObject({ ok: false, reason: "not_open" });
    const late = await seedLease(alice.id, inv.id, "open", "-1 second");
    expect(await loadForGeneration(t.db, late.id)).toMatchObject({ ok: false, reason: "expired" });
    expect((await leaseRow(late.id)).status).toBe("expired");
  });

  it("failGeneration closes an open lease with generation_failed", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "60 seconds");
    expect(await failGeneration(t.db, { leaseId: lease.id, runNonce: lease.runNonce, code: "model_output_invalid" })).toEqual({
      closed: true,
    });
    expect(await leaseRow(lease.id)).toMatchObject({ status: "rejected", closedReason: "generation_failed" });
    expect(await rows.leaseEvents(t.db, lease.id)).toEqual([
      {
        kind: "generation_failed",
        detail: { code: "model_output_invalid", message: "The model's answer could not be used.", closed: true },
      },
    ]);
  });

  it("failGeneration from a run the lease did not dispatch writes only run_mismatch", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "60 seconds");
    expect(await failGeneration(t.db, { leaseId: lease.id, runNonce: "0".repeat(64), code: "internal_error" })).toEqual({
      closed: false,
      refused: "run_mismatch",
    });
    expect(await leaseRow(lease.id)).toEqual(lease);
    expect(await rows.leaseEvents(t.db, lease.id)).toEqual([{ kind: "run_mismatch", detail: { step: "fail", status: "open" } }]);
  });

  it("failGeneration on an overdue lease records it expired, not failed", async () => {
    const { alice, inv } = await setup();
    const lease = await seedLease(alice.id, inv.id, "open", "-1 second");
    expect(await failGeneration(t.db, { leaseId: lease.id, runNonce: lease.runNonce, code: "model_unavailable" })).toEqual({
      closed: false,
    });
    expect((await leaseRow(lease.id)).status).toBe("expired");
    expect(await eventKinds(lease.id)).toEqual(["expired", "generation_failed"]);
  });

  it("the sweep records expired for overdue in-flight leases, in bounded batches, and leaves the rest", async () => {
    const { alice } = await setup();
    const overdue = [];
    for (let i = 0; i < 5; i++)
      overdue.push(await seedLease(alice.id, (await makeInvoice(t.db, alice.id)).id, i % 2 ? "open" : "proposed", "-1 second"));
    const live = await seedLease(alice.id, (await makeInvoice(t.db, alice.id)).id, "open", "60 seconds");
    const first = await expireOverdue(t.db, 3);
    expect(first.expired).toHaveLength(3);
    const second = await expireOverdue(t.db, 100);
    expect(new Set([...first.expired, ...second.expired])).toEqual(new Set(overdue.map((l) => l.id)));
    for (const l of overdue) {
      expect((await leaseRow(l.id)).status).toBe("expired");
      expect(await eventKinds(l.id)).toEqual(["expired"]);
    }
    expect((await leaseRow(live.id)).status).toBe("open");
  });

  it("the database refuses a second lease in flight for one invoice and purpose", async () => {
    const { alice, inv } = await setup();
    await seedLease(alice.id, inv.id, "open", "60 seconds");
    expect(await refusalOf(seedLease(alice.id, inv.id, "proposed", "60 seconds"))).toEqual({
      code: "23505", // unique_violation
      constraint: "inference_lease_one_in_flight",
    });
    expect(await refusalOf(seedLease(alice.id, inv.id, "bogus", "60 seconds"))).toEqual({
      code: "23514", // check_violation
      constraint: "inference_lease_status_check",
    });
  });
});
