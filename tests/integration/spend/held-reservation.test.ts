// A lease's reservation counts against the budget until its call's final usage is recorded, whatever
// the lease's status meanwhile, and no longer than its deadline plus the grace
// (docs/decisions/0075): a call that ends after a cancel (aborted, late) is counted all along; a
// retried attempt draws its cost from the reservation, which stays for the retry; a lease opened
// before a cap was set counts against it. The opens here are the domain's (openLease), with caps
// far below one call's reservation, so whether a reservation counts decides each answer.
import { eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { inferenceLease, orgBudget } from "@/db/schema";
import { cancelLease, failGeneration, openLease, proposeLease, recordUsage } from "@/lib/leases";
import { callKey, reservationCents, reservationGraceSeconds, type CallUsage } from "@/lib/spend";
import { asMember, leaseRow, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { openedLease, usageRows, withEnv } from "./support";

let t: TestDb;
let restore: () => void = () => {};
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());
afterEach(() => {
  restore();
  restore = () => {};
});

const nothing = { async leaseOpened() {}, async leaseClosed() {} };

/** A user with two invoices, the local lane priced so that one call's reservation is several dollars. */
async function setUp() {
  restore = withEnv({ MODEL_PROVIDER: "local", MODEL_PRICE_PER_MTOK: "1000,2000", MODEL_LATENCY_MS: undefined });
  const reserve = reservationCents("summarize_invoice");
  const alice = await makeUser(t.db, "Alice");
  const { orgId } = await asMember(t.db, alice);
  const [a, b] = [await makeInvoice(t.db, alice.id), await makeInvoice(t.db, alice.id)];
  const setCap = (cents: number | null) =>
    t.db
      .insert(orgBudget)
      .values({ orgId, organizationDailyCents: cents })
      .onConflictDoUpdate({ target: orgBudget.orgId, set: { organizationDailyCents: cents } });
  /** The domain's answer to an open of `invoiceId`: created, or the refusal's code. */
  const tryOpen = async (invoiceId: string) => {
    const r = await openLease(
      t.db,
      { actorId: alice.id, sessionId: null, invoiceId, purpose: "summarize_invoice", ttlSeconds: 60 },
      nothing,
    );
    if (r.ok) await t.db.update(inferenceLease).set({ status: "rejected", reservedCents: null }).where(eq(inferenceLease.id, r.lease.id));
    return r.ok ? "created" : r.code;
  };
  return { reserve, alice, a, b, setCap, tryOpen };
}

/** A call of `cents`, as the generate step hands it over, keyed by the lease's attempt. */
const call = (leaseId: string, attempt: number, cents: number): CallUsage => ({
  callKey: callKey(leaseId, attempt),
  model: "m",
  inputTokens: 10,
  outputTokens: 0,
  estimated: true,
  costCents: cents,
});

it("cancel, then the call's late usage: the reservation counts until the call is recorded, then its cost does", async () => {
  const { reserve, alice, a, b, setCap, tryOpen } = await setUp();
  const cap = Math.floor(reserve / 2);
  await setCap(cap);
  const { lease, data } = await openedLease(t.db, alice.id, a.id);
  expect(lease.reservedCents).toBeCloseTo(reserve, 6);
  expect(await tryOpen(b.id)).toBe("budget_exhausted");

  // Cancelled while its call runs: the lease is closed, its call is not, and still counts.
  expect((await cancelLease(t.db, alice.id, lease.id, nothing)).ok).toBe(true);
  expect(await leaseRow(t.db, lease.id)).toMatchObject({ status: "rejected" });
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeCloseTo(reserve, 6);
  expect(await tryOpen(b.id)).toBe("budget_exhausted");

  // The model answers late (it ignored the abort): the late completion records the call, at what it
  // cost (over the cap), and releases the reservation in the same statement.
  const late = await proposeLease(t.db, {
    leaseId: lease.id,
    actorId: alice.id,
    runNonce: data.runNonce,
    proposal: { summary: "late", model: "m" },
    usage: call(lease.id, 0, cap + 1),
  });
  expect(late).toMatchObject({ ok: false, code: "late_completion" });
  expect((await usageRows(t.db, lease.id)).map((r) => r.outcome)).toEqual(["late"]);
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeNull();
  expect(await tryOpen(b.id)).toBe("budget_exhausted");
  // Its cost is what counts now: a cap above it admits.
  await setCap(cap + 2);
  expect(await tryOpen(b.id)).toBe("created");
});

it("cancel, then the aborted call recorded on its own statement: counted the same way, once", async () => {
  const { reserve, alice, a, b, setCap, tryOpen } = await setUp();
  const cap = Math.floor(reserve / 2);
  await setCap(cap);
  const { lease } = await openedLease(t.db, alice.id, a.id);
  expect((await cancelLease(t.db, alice.id, lease.id, nothing)).ok).toBe(true);
  expect(await tryOpen(b.id)).toBe("budget_exhausted");
  expect(await recordUsage(t.db, lease.id, call(lease.id, 0, cap - 1), "aborted")).toBe(true);
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeNull();
  expect(await tryOpen(b.id)).toBe("created");
  // Recorded again (a retried step): nothing more, not counted twice.
  expect(await recordUsage(t.db, lease.id, call(lease.id, 0, cap - 1), "aborted")).toBe(false);
  expect(await usageRows(t.db, lease.id)).toHaveLength(1);
  expect(await tryOpen(b.id)).toBe("created");
});

it("a retried attempt is counted and drawn from the reservation, which stays for the retry until the final outcome", async () => {
  const { reserve, alice, a, b, setCap, tryOpen } = await setUp();
  const first = Math.floor(reserve / 4);
  // Above what the retried attempt cost, below the reservation.
  const cap = 2 * first;
  await setCap(cap);
  const { lease, data } = await openedLease(t.db, alice.id, a.id);

  expect(await recordUsage(t.db, lease.id, call(lease.id, 0, first), "failed", false)).toBe(true);
  // Spent `first`, and `reserve - first` still held for the retry: together still the reservation.
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeCloseTo(reserve - first, 6);
  expect(await tryOpen(b.id)).toBe("budget_exhausted");
  // The same attempt recorded again (its step retried) draws nothing more.
  expect(await recordUsage(t.db, lease.id, call(lease.id, 0, first), "failed", false)).toBe(false);
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeCloseTo(reserve - first, 6);

  // A second retried attempt costing more than is left: held at 0, never below.
  expect(await recordUsage(t.db, lease.id, call(lease.id, 1, reserve), "failed", false)).toBe(true);
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBe(0);

  // The retry's proposal is the final outcome: its usage recorded, nothing held.
  const proposed = await proposeLease(t.db, {
    leaseId: lease.id,
    actorId: alice.id,
    runNonce: data.runNonce,
    proposal: { summary: "third time", model: "m" },
    usage: call(lease.id, 2, 1),
  });
  expect(proposed).toEqual({ ok: true });
  expect((await usageRows(t.db, lease.id)).map((r) => [r.callKey.slice(37), r.outcome])).toEqual([
    ["0", "failed"],
    ["1", "failed"],
    ["2", "proposed"],
  ]);
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeNull();
  // Spent first + reserve + 1, over the cap: refused on what was spent.
  expect(await tryOpen(b.id)).toBe("budget_exhausted");
});

it("a lease opened before its cap was set reserves all the same, and the cap counts it", async () => {
  const { reserve, alice, a, b, setCap, tryOpen } = await setUp();
  const { lease } = await openedLease(t.db, alice.id, a.id);
  expect(lease.reservedCents).toBeCloseTo(reserve, 6);
  await setCap(Math.floor(reserve / 2));
  expect(await tryOpen(b.id)).toBe("budget_exhausted");
});

it("a reservation no call released stops counting at its deadline plus the grace", async () => {
  const { reserve, alice, a, b, setCap, tryOpen } = await setUp();
  await setCap(Math.floor(reserve / 2));
  const { lease } = await openedLease(t.db, alice.id, a.id);
  const grace = reservationGraceSeconds();
  // Its call lost (the worker gone): the lease expires, the reservation is still held.
  await t.db
    .update(inferenceLease)
    .set({ status: "expired", deadlineAt: sql`now() - make_interval(secs => ${grace - 5})` })
    .where(eq(inferenceLease.id, lease.id));
  expect(await tryOpen(b.id)).toBe("budget_exhausted");
  await t.db
    .update(inferenceLease)
    .set({ deadlineAt: sql`now() - make_interval(secs => ${grace + 5})` })
    .where(eq(inferenceLease.id, lease.id));
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeCloseTo(reserve, 6);
  expect(await tryOpen(b.id)).toBe("created");
});

it("a generation that ends with no call left to record releases what is held (the failure handler, with or without usage)", async () => {
  const { alice, a, b } = await setUp();
  for (const inv of [a, b]) {
    const { lease, data } = await openedLease(t.db, alice.id, inv.id);
    const usage = inv === a ? { usage: call(lease.id, 0, 1) } : {};
    expect(await failGeneration(t.db, { leaseId: lease.id, runNonce: data.runNonce, code: "model_unavailable", ...usage })).toEqual({
      closed: true,
    });
    expect((await leaseRow(t.db, lease.id)).reservedCents).toBeNull();
    expect(await usageRows(t.db, lease.id)).toHaveLength(inv === a ? 1 : 0);
  }
});
