// POST /api/leases checks the budget before dispatch, in open's transaction, on the database
// clock: over a cap it answers 429 budget_exhausted with Retry-After until the period resets,
// inserts no lease and dispatches nothing. Every lease reserves the estimated cost of one call,
// which counts against the caps until the call's usage is recorded (held-reservation.test.ts).
import { count, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { inferenceLease, modelUsage, orgBudget } from "@/db/schema";
import { openLease } from "@/lib/leases";
import { reservationCents } from "@/lib/spend";
import { api, signInCookie, sink } from "../../support/api";
import { asMember, joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { withEnv } from "./support";

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

const open = (cookie: string, invoiceId: string) =>
  api("POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
const leasesOf = async (invoiceId: string) =>
  (await t.db.select({ n: count() }).from(inferenceLease).where(eq(inferenceLease.invoiceId, invoiceId)))[0]!.n;
const opensSent = () => sink().events.filter((e) => e.name === "lease/opened").length;

async function admin() {
  const user = await makeUser(t.db, "Ada");
  const member = await asMember(t.db, user);
  return { user, member, cookie: await signInCookie(user.email), inv: await makeInvoice(t.db, user.id) };
}

async function setCaps(orgId: string, caps: Partial<typeof orgBudget.$inferInsert>) {
  await t.db
    .insert(orgBudget)
    .values({ orgId, ...caps })
    .onConflictDoUpdate({ target: orgBudget.orgId, set: caps });
}

/** A recorded call of `cents` for the user (on a lease of theirs, closed). */
async function spent(user: { id: string }, cents: number) {
  const { orgId } = await asMember(t.db, user);
  const inv = await makeInvoice(t.db, user.id);
  const [lease] = await t.db
    .insert(inferenceLease)
    .values({ actorId: user.id, invoiceId: inv.id, purpose: "summarize_invoice", status: "rejected", deadlineAt: new Date() })
    .returning();
  await t.db.insert(modelUsage).values({
    orgId,
    actorId: user.id,
    leaseId: lease!.id,
    invoiceId: inv.id,
    purpose: "summarize_invoice",
    model: "m",
    inputTokens: 1,
    outputTokens: 1,
    costCents: cents,
    outcome: "proposed",
    callKey: `${lease!.id}:0`,
  });
}

/** Seconds until the next UTC midnight and the first of next month, by the test's clock. */
function resets() {
  const now = new Date();
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  const month = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return { day: (day - now.getTime()) / 1000, month: (month - now.getTime()) / 1000 };
}

it("no budget row, or every cap null: admitted, and the lease reserves one call's estimate all the same (0 unpriced: null)", async () => {
  const { member, cookie, inv } = await admin();
  const first = await open(cookie, inv.id);
  expect(first.status).toBe(201);
  // The local lane unpriced: a call costs nothing, and nothing is reserved.
  expect((await t.db.select().from(inferenceLease).where(eq(inferenceLease.id, first.body.lease_id)))[0]!.reservedCents).toBeNull();

  restore = withEnv({ MODEL_PROVIDER: "local", MODEL_PRICE_PER_MTOK: "1000,2000" });
  await setCaps(member.orgId, { organizationDailyCents: null, memberMonthlyCents: null });
  const other = await makeInvoice(t.db, member.id);
  const second = await open(cookie, other.id);
  expect(second.status).toBe(201);
  expect((await t.db.select().from(inferenceLease).where(eq(inferenceLease.id, second.body.lease_id)))[0]!.reservedCents).toBeCloseTo(
    reservationCents("summarize_invoice"),
    6,
  );
});

it("a cap of 0 admits nothing: 429 budget_exhausted, Retry-After until midnight UTC, no lease, nothing dispatched", async () => {
  const { member, cookie, inv } = await admin();
  await setCaps(member.orgId, { organizationDailyCents: 0 });
  const sentBefore = opensSent();

  const res = await open(cookie, inv.id);

  expect(res.status).toBe(429);
  expect(res.body).toEqual({ detail: "budget_exhausted" });
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(Math.abs(retryAfter - resets().day)).toBeLessThan(5);
  expect(await leasesOf(inv.id)).toBe(0);
  expect(opensSent()).toBe(sentBefore);
});

it("several caps exhausted: Retry-After is the later reset (the month's)", async () => {
  const { member, cookie, inv } = await admin();
  await setCaps(member.orgId, { organizationDailyCents: 0, memberMonthlyCents: 0 });
  const res = await open(cookie, inv.id);
  expect(res.status).toBe(429);
  expect(Math.abs(Number(res.headers.get("retry-after")) - resets().month)).toBeLessThan(5);
});

it("spent up to the cap refuses; below it admits and reserves one call's estimate, which the next open counts", async () => {
  restore = withEnv({ MODEL_PROVIDER: "local", MODEL_PRICE_PER_MTOK: "1000,2000" });
  const reserve = reservationCents("summarize_invoice");
  expect(reserve).toBeGreaterThan(1);
  const { user, member, cookie, inv } = await admin();
  await setCaps(member.orgId, { organizationDailyCents: 100 });
  await spent(user, 100);
  expect((await open(cookie, inv.id)).status).toBe(429);

  // The cap raised by half a cent more than was spent: below it, so admitted.
  await setCaps(member.orgId, { organizationDailyCents: 101 });
  const admitted = await open(cookie, inv.id);
  expect(admitted.status).toBe(201);
  const [lease] = await t.db.select().from(inferenceLease).where(eq(inferenceLease.id, admitted.body.lease_id));
  expect(lease!.reservedCents).toBeCloseTo(reserve, 6);

  // The lease in flight holds its reservation: 100 + reserve is over 101.
  const other = await makeInvoice(t.db, user.id);
  expect((await open(cookie, other.id)).status).toBe(429);
  // Once it is released (the call's usage recorded: here, by hand), the next open is judged on what was spent.
  await t.db.update(inferenceLease).set({ reservedCents: null }).where(eq(inferenceLease.id, lease!.id));
  expect((await open(cookie, other.id)).status).toBe(201);
});

it("a member cap counts the member's own spend; the organization's cap everyone's; another organization's none", async () => {
  const { user: ada, member, cookie: adaCookie } = await admin();
  const mo = await makeUser(t.db, "Mo");
  await joinOrgOf(t.db, mo, ada, "member");
  const moCookie = await signInCookie(mo.email);
  const outsider = await makeUser(t.db, "Bea");
  await spent(outsider, 10_000);
  await setCaps(member.orgId, { memberDailyCents: 50, organizationMonthlyCents: 100 });

  await spent(mo, 50);
  expect((await open(moCookie, (await makeInvoice(t.db, mo.id)).id)).status).toBe(429);
  // Ada has spent nothing herself, and the organization 50 of 100.
  expect((await open(adaCookie, (await makeInvoice(t.db, ada.id)).id)).status).toBe(201);

  await spent(ada, 49);
  await spent(mo, 1);
  // The organization has spent 100 of 100 this month: nobody is admitted.
  expect((await open(adaCookie, (await makeInvoice(t.db, ada.id)).id)).status).toBe(429);
});

it("the actor's own lease already in flight is answered 200 as without a cap, not refused", async () => {
  const { member, cookie, inv } = await admin();
  const first = await open(cookie, inv.id);
  expect(first.status).toBe(201);
  await setCaps(member.orgId, { organizationDailyCents: 0 });
  const again = await open(cookie, inv.id);
  expect(again).toMatchObject({ status: 200, body: { lease_id: first.body.lease_id, status: "open" } });
  // A new invoice is refused.
  expect((await open(cookie, (await makeInvoice(t.db, member.id)).id)).status).toBe(429);
});

it("the refusal names the cap that resets last, for the page's words (the organization's, of two that reset together)", async () => {
  const { member, inv } = await admin();
  const refusal = async () => {
    const result = await openLease(
      t.db,
      { actorId: member.id, sessionId: null, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 60 },
      { leaseOpened: async () => {}, leaseClosed: async () => {} },
    );
    return result.ok ? null : { code: result.code, cap: result.cap };
  };
  await setCaps(member.orgId, { memberDailyCents: 0 });
  expect(await refusal()).toEqual({ code: "budget_exhausted", cap: "member_daily_cents" });
  await setCaps(member.orgId, { organizationDailyCents: 0 });
  expect(await refusal()).toEqual({ code: "budget_exhausted", cap: "organization_daily_cents" });
  await setCaps(member.orgId, { memberMonthlyCents: 0 });
  // On a month's last UTC day the two reset together, and the organization's is named.
  const tomorrow = new Date(Date.now() + 86_400_000);
  const lastDay = tomorrow.getUTCDate() === 1;
  expect(await refusal()).toEqual({ code: "budget_exhausted", cap: lastDay ? "organization_daily_cents" : "member_monthly_cents" });
});
