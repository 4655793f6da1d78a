// The usage page's budget form (app/usage/actions.ts saveBudgetAction), called as Next.js calls
// it, with the framework's edges (the request's cookies and headers, redirect) stood in for here:
// an admin's amounts in dollars are written as whole cents through the same writeBudget and
// BudgetInput as PUT /api/org/budget; a member is refused and nothing is written; a bad amount is
// refused beside its field and nothing is written, the other fields' good values included.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { orgBudget } from "@/db/schema";
import { asMember, joinOrgOf, makeUser, openTestDb, type TestDb } from "../../support/db";
import { signInCookie } from "../../support/api";
import { spendApi } from "./support";

const jar = new Map<string, string>();
class Redirected extends Error {
  constructor(readonly url: string) {
    super(`redirect ${url}`);
  }
}
vi.mock("next/headers", () => ({
  headers: async () => new Headers(),
  cookies: async () => ({
    get: (name: string) => (jar.has(name) ? { name, value: jar.get(name)! } : undefined),
    has: (name: string) => jar.has(name),
    set: () => {},
    delete: (name: string) => void jar.delete(name),
    getAll: () => [...jar].map(([name, value]) => ({ name, value })),
  }),
}));
vi.mock("next/navigation", () => ({
  redirect: (url: string) => {
    throw new Redirected(url);
  },
  RedirectType: { replace: "replace", push: "push" },
}));
vi.mock("next/cache", () => ({ revalidatePath: () => {} }));

const { saveBudgetAction } = await import("@/app/usage/actions");

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());
beforeEach(() => jar.clear());

async function signedIn(user: { email: string }) {
  const cookie = await signInCookie(user.email);
  jar.clear();
  for (const pair of cookie.split("; ")) {
    const at = pair.indexOf("=");
    jar.set(pair.slice(0, at), decodeURIComponent(pair.slice(at + 1)));
  }
  return cookie;
}

const form = (values: Record<string, string>) => {
  const data = new FormData();
  for (const [k, v] of Object.entries(values)) data.set(k, v);
  return data;
};
const EMPTY = { message: null, errors: {}, values: null };

/** The action's answer: its state, or where it sent the browser. */
async function post(values: Record<string, string>) {
  try {
    return { state: await saveBudgetAction(EMPTY, form(values)) };
  } catch (error) {
    if (error instanceof Redirected) return { redirect: error.url };
    throw error;
  }
}

async function caps(user: { id: string }) {
  const [row] = await t.db
    .select()
    .from(orgBudget)
    .where(eq(orgBudget.orgId, (await asMember(t.db, user)).orgId));
  return row ?? null;
}

const FORM = { organization_daily_cents: "5", organization_monthly_cents: "$1,250.50", member_daily_cents: "0", member_monthly_cents: "" };

it("an admin's amounts are written as whole cents (blank: no cap; 0: none), then back to /usage with a notice", async () => {
  const ada = await makeUser(t.db, "Ada");
  const cookie = await signedIn(ada);
  expect(await post(FORM)).toEqual({ redirect: "/usage?notice=saved#budget-heading" });
  expect(await caps(ada)).toMatchObject({
    organizationDailyCents: 500,
    organizationMonthlyCents: 125_050,
    memberDailyCents: 0,
    memberMonthlyCents: null,
    updatedBy: ada.id,
  });
  // The same budget the route reads.
  expect((await spendApi("GET", "/api/org/budget", { cookie })).body).toEqual({
    organization_daily_cents: 500,
    organization_monthly_cents: 125_050,
    member_daily_cents: 0,
    member_monthly_cents: null,
  });
});

it("a member is refused in words and nothing is written", async () => {
  const ada = await makeUser(t.db, "Ada");
  const mo = await makeUser(t.db, "Mo");
  await joinOrgOf(t.db, mo, ada, "member");
  await signedIn(mo);
  const answer = await post(FORM);
  expect(answer.state?.message).toBe("Only an admin can change the budget. Nothing was changed.");
  expect(await caps(ada)).toBeNull();
});

it.each([
  ["a comma for decimals", "25,50"],
  ["three decimals", "1.005"],
  ["a negative amount", "-5"],
  ["words", "five dollars"],
  ["more than the column holds", "21474836.48"],
])("%s is refused beside its field, and nothing is written", async (_why, typed) => {
  const ada = await makeUser(t.db, "Ada");
  await signedIn(ada);
  const answer = await post({ ...FORM, member_monthly_cents: typed });
  expect(answer.redirect).toBeUndefined();
  expect(answer.state?.message).toBe("Check the amounts below. Nothing was changed.");
  expect(Object.keys(answer.state!.errors)).toEqual(["member_monthly_cents"]);
  expect(answer.state!.errors.member_monthly_cents).toMatch(/dollars and cents|largest limit/);
  // What was typed comes back, to be corrected rather than typed again.
  expect(answer.state!.values).toMatchObject({ member_monthly_cents: typed, organization_monthly_cents: "$1,250.50" });
  expect(await caps(ada)).toBeNull();
});

it("the largest limit is accepted; a form that is not the form is refused", async () => {
  const ada = await makeUser(t.db, "Ada");
  await signedIn(ada);
  expect((await post({ ...FORM, member_monthly_cents: "21474836.47" })).redirect).toBeDefined();
  expect((await caps(ada))!.memberMonthlyCents).toBe(2_147_483_647);
  const refused = await saveBudgetAction(EMPTY, "not a form" as unknown as FormData);
  expect(refused.message).toBe("Check the amounts below. Nothing was changed.");
});

it("signed out: sent to sign in, nothing written", async () => {
  const ada = await makeUser(t.db, "Ada");
  const answer = await post(FORM);
  expect(answer.redirect).toMatch(/^\/sign-in/);
  expect(await caps(ada)).toBeNull();
});
