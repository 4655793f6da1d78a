// PUT/GET /api/org/budget and GET /api/usage through the real route handlers: an admin sets the
// caps (a non-admin is refused in the statement, 403), every member reads them, bad bodies are
// 422, and another organization's caps or spend never show.
import { afterAll, beforeAll, expect, it } from "vitest";
import { modelUsage, orgBudget } from "@/db/schema";
import { eq } from "drizzle-orm";
import { signInCookie } from "../../support/api";
import { asMember, joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { NO_CAPS, openedLease, spendApi } from "./support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

const CAPS = { organization_daily_cents: 500, organization_monthly_cents: 10_000, member_daily_cents: 100, member_monthly_cents: null };

/** An admin (Ada) and a member (Mo) of one organization, and an admin (Bea) of another. */
async function team() {
  const ada = await makeUser(t.db, "Ada");
  const mo = await makeUser(t.db, "Mo");
  await joinOrgOf(t.db, mo, ada, "member");
  const bea = await makeUser(t.db, "Bea");
  return {
    ada,
    mo,
    bea,
    adaCookie: await signInCookie(ada.email),
    moCookie: await signInCookie(mo.email),
    beaCookie: await signInCookie(bea.email),
  };
}

/** A recorded call of `cents`, `hoursAgo` before now, for the user on an invoice of theirs. */
async function spent(user: { id: string }, cents: number, purpose = "summarize_invoice", at?: Date) {
  const { orgId } = await asMember(t.db, user);
  const inv = await makeInvoice(t.db, user.id);
  const { lease } = await openedLease(t.db, user.id, inv.id, purpose);
  await t.db.insert(modelUsage).values({
    orgId,
    actorId: user.id,
    leaseId: lease.id,
    invoiceId: inv.id,
    purpose,
    model: "m",
    inputTokens: 10,
    outputTokens: 5,
    costCents: cents,
    outcome: "proposed",
    callKey: `${lease.id}:0`,
    ...(at ? { at } : {}),
  });
}

it("an admin sets all four caps; any member reads them; a non-admin's PUT is 403 and changes nothing", async () => {
  const { ada, adaCookie, moCookie } = await team();
  expect((await spendApi("GET", "/api/org/budget", { cookie: moCookie })).body).toEqual(NO_CAPS);

  const put = await spendApi("PUT", "/api/org/budget", { cookie: adaCookie, json: CAPS });
  expect(put.status).toBe(200);
  expect(put.body).toEqual(CAPS);
  const read = await spendApi("GET", "/api/org/budget", { cookie: moCookie });
  expect(read).toMatchObject({ status: 200, body: CAPS });

  const refused = await spendApi("PUT", "/api/org/budget", { cookie: moCookie, json: NO_CAPS });
  expect(refused).toMatchObject({ status: 403, body: { detail: "forbidden" } });
  expect((await spendApi("GET", "/api/org/budget", { cookie: adaCookie })).body).toEqual(CAPS);

  // A second PUT replaces all four.
  const cleared = await spendApi("PUT", "/api/org/budget", { cookie: adaCookie, json: { ...NO_CAPS, member_daily_cents: 0 } });
  expect(cleared.body).toEqual({ ...NO_CAPS, member_daily_cents: 0 });
  const [row] = await t.db
    .select()
    .from(orgBudget)
    .where(eq(orgBudget.orgId, (await asMember(t.db, ada)).orgId));
  expect(row).toMatchObject({ memberDailyCents: 0, organizationDailyCents: null, updatedBy: ada.id });
});

it("an admin demoted a moment ago is refused by the statement itself", async () => {
  const { ada, mo, adaCookie } = await team();
  // Mo becomes the admin and Ada a member, behind the session's back.
  await joinOrgOf(t.db, mo, ada, "admin");
  await joinOrgOf(t.db, ada, mo, "member");
  expect((await spendApi("PUT", "/api/org/budget", { cookie: adaCookie, json: CAPS })).status).toBe(403);
});

it.each([
  ["a cap missing", { organization_daily_cents: 1, organization_monthly_cents: 1, member_daily_cents: 1 }],
  ["a field more", { ...CAPS, per_purpose_cents: 5 }],
  ["a negative cap", { ...CAPS, member_daily_cents: -1 }],
  ["a fraction of a cent", { ...CAPS, member_daily_cents: 1.5 }],
  ["a string", { ...CAPS, member_daily_cents: "100" }],
  ["an array", [CAPS]],
])("PUT with %s is 422 invalid_request", async (_why, body) => {
  const { adaCookie } = await team();
  const res = await spendApi("PUT", "/api/org/budget", { cookie: adaCookie, json: body });
  expect(res).toMatchObject({ status: 422, body: { detail: "invalid_request" } });
  expect((await spendApi("GET", "/api/org/budget", { cookie: adaCookie })).body).toEqual(NO_CAPS);
});

it("PUT with a body that is not JSON is 422; signed out is 401", async () => {
  const { adaCookie } = await team();
  expect((await spendApi("PUT", "/api/org/budget", { cookie: adaCookie, raw: "{" })).status).toBe(422);
  expect((await spendApi("PUT", "/api/org/budget", { json: CAPS })).status).toBe(401);
  expect((await spendApi("GET", "/api/usage")).status).toBe(401);
});

it("another organization's caps never show, and its admin cannot set ours", async () => {
  const { adaCookie, beaCookie } = await team();
  await spendApi("PUT", "/api/org/budget", { cookie: adaCookie, json: CAPS });
  expect((await spendApi("GET", "/api/org/budget", { cookie: beaCookie })).body).toEqual(NO_CAPS);
  // Bea's PUT sets her own organization's caps, never Ada's.
  await spendApi("PUT", "/api/org/budget", { cookie: beaCookie, json: NO_CAPS });
  expect((await spendApi("GET", "/api/org/budget", { cookie: adaCookie })).body).toEqual(CAPS);
});

it("GET /api/usage: a member sees their own, per purpose; an admin also the organization's and each member's; never another org's", async () => {
  const { ada, mo, bea, adaCookie, moCookie, beaCookie } = await team();
  await spent(ada, 1.25);
  await spent(mo, 2.5);
  await spent(mo, 0.5, "review_invoice");
  await spent(bea, 100);
  // Two months ago: outside this month, so in no sum.
  await spent(mo, 1000, "summarize_invoice", new Date(Date.now() - 62 * 24 * 3600 * 1000));

  const mine = await spendApi("GET", "/api/usage", { cookie: moCookie });
  expect(mine.status).toBe(200);
  expect(mine.body.me).toEqual({
    day_cents: 3,
    month_cents: 3,
    by_purpose: [
      { purpose: "review_invoice", day_cents: 0.5, month_cents: 0.5 },
      { purpose: "summarize_invoice", day_cents: 2.5, month_cents: 2.5 },
    ],
  });
  expect(mine.body).not.toHaveProperty("organization");
  expect(mine.body).not.toHaveProperty("members");
  expect(Date.parse(mine.body.day_start)).toBeLessThanOrEqual(Date.now());
  expect(mine.body.day_start.endsWith("T00:00:00.000Z")).toBe(true);
  expect(mine.body.month_start).toMatch(/-01T00:00:00\.000Z$/);

  const admin = await spendApi("GET", "/api/usage", { cookie: adaCookie });
  expect(admin.body.me).toMatchObject({ day_cents: 1.25, month_cents: 1.25 });
  expect(admin.body.organization).toEqual({
    day_cents: 4.25,
    month_cents: 4.25,
    by_purpose: [
      { purpose: "review_invoice", day_cents: 0.5, month_cents: 0.5 },
      { purpose: "summarize_invoice", day_cents: 3.75, month_cents: 3.75 },
    ],
  });
  expect(admin.body.members).toEqual([
    { user_id: ada.id, name: "Ada", day_cents: 1.25, month_cents: 1.25 },
    { user_id: mo.id, name: "Mo", day_cents: 3, month_cents: 3 },
  ]);
  expect(JSON.stringify(admin.body)).not.toContain(bea.id);

  const other = await spendApi("GET", "/api/usage", { cookie: beaCookie });
  expect(other.body.organization).toMatchObject({ day_cents: 100, month_cents: 100 });
  expect(other.body.members).toEqual([{ user_id: bea.id, name: "Bea", day_cents: 100, month_cents: 100 }]);
});
