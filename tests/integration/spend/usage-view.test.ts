// lib/spend usageView, the usage page's one read: an admin reads the organization's spend (per
// day, per purpose, per member, call by call), a member only their own, a member demoted a
// moment ago only their own (the role is judged by the statement), another organization's user
// none of it; the sums match the rows inserted; the calls come 100 a page, newest first, through
// a sealed cursor that is the caller's alone.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { rowsOf } from "@/db/client";
import { modelUsage } from "@/db/schema";
import { usageView, USAGE_CALLS_PAGE, type UsageView } from "@/lib/spend";
import { asMember, joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { openedLease } from "./support";

let t: TestDb;
let clock: { now: Date; day0: Date; month0: Date };
beforeAll(async () => {
  t = await openTestDb();
  const [r] = rowsOf<{ now: string; day0: string; month0: string }>(
    await t.db.execute(sql`select now() as now, date_trunc('day', now(), 'UTC') as day0, date_trunc('month', now(), 'UTC') as month0`),
  );
  clock = { now: new Date(r!.now), day0: new Date(r!.day0), month0: new Date(r!.month0) };
});
afterAll(() => t?.close());

const day = (d: Date) => d.toISOString().slice(0, 10);

/** Calls of `user` on one invoice of theirs (one lease), each `{cents, purpose, at}`. */
async function calls(user: { id: string }, rows: { cents: number; purpose?: string; at?: Date; outcome?: string }[]) {
  const { orgId } = await asMember(t.db, user);
  const inv = await makeInvoice(t.db, user.id);
  const { lease } = await openedLease(t.db, user.id, inv.id);
  await t.db.insert(modelUsage).values(
    rows.map((r, i) => ({
      orgId,
      actorId: user.id,
      leaseId: lease.id,
      invoiceId: inv.id,
      purpose: r.purpose ?? "summarize_invoice",
      model: "test-model",
      inputTokens: 100 + i,
      outputTokens: 10 + i,
      costCents: r.cents,
      outcome: r.outcome ?? "proposed",
      callKey: `${lease.id}:${i}`,
      at: r.at ?? new Date(clock.now.getTime() - i * 1000),
    })),
  );
  return { inv, lease };
}

async function team() {
  const ada = await makeUser(t.db, "Ada");
  const mo = await makeUser(t.db, "Mo");
  await joinOrgOf(t.db, mo, ada, "member");
  const bea = await makeUser(t.db, "Bea");
  return { ada, mo, bea };
}

const view = async (user: { id: string }, before?: string | null) => (await usageView(t.db, await asMember(t.db, user), before))!;

it("an admin reads the organization's spend per day, per purpose, per member and call by call; a member only their own", async () => {
  const { ada, mo, bea } = await team();
  // The first minute of the month (today, on the 1st), today, and the month before (in no sum, but a call all the same).
  const firstOfMonth = new Date(clock.month0.getTime() + 60_000);
  const lastMonth = new Date(clock.month0.getTime() - 60_000);
  const adaCalls = await calls(ada, [{ cents: 1.25 }, { cents: 0.004, purpose: "review_invoice", outcome: "aborted" }]);
  const moCalls = await calls(mo, [
    { cents: 2.5 },
    { cents: 0.5, purpose: "categorize_lines", at: firstOfMonth, outcome: "late" },
    { cents: 1000, at: lastMonth, outcome: "failed" },
  ]);
  await calls(bea, [{ cents: 77 }]);

  const admin = await view(ada);
  expect(admin.scope).toBe("organization");
  expect(admin.spent.month_cents).toBeCloseTo(1.25 + 0.004 + 2.5 + 0.5, 6);
  const todayOnly = day(firstOfMonth) === day(clock.now) ? 0.5 : 0;
  expect(admin.spent.day_cents).toBeCloseTo(1.25 + 0.004 + 2.5 + todayOnly, 6);
  expect(admin.me.month_cents).toBeCloseTo(1.254, 6);

  // Per day: a row for each day of this month with spend, newest first, summing to the month.
  const expectedDays = new Map<string, { cents: number; calls: number }>();
  for (const [at, cents] of [
    [clock.now, 1.25],
    [clock.now, 0.004],
    [clock.now, 2.5],
    [firstOfMonth, 0.5],
  ] as const) {
    const d = expectedDays.get(day(at)) ?? { cents: 0, calls: 0 };
    expectedDays.set(day(at), { cents: d.cents + cents, calls: d.calls + 1 });
  }
  expect(admin.by_day.map((d) => d.day)).toEqual([...expectedDays.keys()].sort().reverse());
  for (const d of admin.by_day) {
    expect(d.cost_cents).toBeCloseTo(expectedDays.get(d.day)!.cents, 6);
    expect(d.calls).toBe(expectedDays.get(d.day)!.calls);
  }

  expect(admin.by_purpose.map((p) => [p.purpose, p.calls])).toEqual([
    ["categorize_lines", 1],
    ["review_invoice", 1],
    ["summarize_invoice", 2],
  ]);
  expect(admin.by_purpose.find((p) => p.purpose === "summarize_invoice")!.month_cents).toBeCloseTo(3.75, 6);
  expect(admin.members!.map((m) => [m.name, Number(m.month_cents.toFixed(6))])).toEqual([
    ["Ada", 1.254],
    ["Mo", 3],
  ]);

  // Every call of the organization, last month's too, newest first; another member's names no lease.
  expect(admin.calls).toHaveLength(5);
  expect(admin.calls.map((c) => c.at)).toEqual([...admin.calls.map((c) => c.at)].sort().reverse());
  const moCall = admin.calls.find((c) => c.actor_name === "Mo" && c.outcome === "failed")!;
  expect(moCall).toMatchObject({
    mine: false,
    lease_id: null,
    invoice_id: moCalls.inv.id,
    invoice_number: moCalls.inv.number,
    purpose: "summarize_invoice",
    model: "test-model",
    cost_cents: 1000,
  });
  const adaCall = admin.calls.find((c) => c.actor_name === "Ada" && c.outcome === "aborted")!;
  expect(adaCall).toMatchObject({ mine: true, lease_id: adaCalls.lease.id, input_tokens: 101, output_tokens: 11, cost_cents: 0.004 });
  expect(admin.older).toBeNull();
  const text = JSON.stringify(admin);
  expect(text).not.toContain(bea.id);
  expect(text).not.toContain(moCalls.lease.id);

  const member = await view(mo);
  expect(member.scope).toBe("member");
  expect(member.members).toBeNull();
  expect(member.spent.month_cents).toBeCloseTo(3, 6);
  expect(member.me).toEqual(member.spent);
  expect(member.by_purpose.map((p) => p.purpose)).toEqual(["categorize_lines", "summarize_invoice"]);
  expect(member.calls.map((c) => c.actor_name)).toEqual(["Mo", "Mo", "Mo"]);
  expect(member.calls.every((c) => c.mine && c.lease_id === moCalls.lease.id)).toBe(true);
  expect(JSON.stringify(member)).not.toContain(adaCalls.inv.id);

  // Another organization's admin: their own call alone.
  const other = await view(bea);
  expect(other.calls).toHaveLength(1);
  expect(other.spent.month_cents).toBe(77);
  expect(other.members!.map((m) => m.name)).toEqual(["Bea"]);
});

it("a member demoted a moment ago reads only their own, though their role was admin when they came", async () => {
  const { ada, mo } = await team();
  await calls(ada, [{ cents: 1 }]);
  await calls(mo, [{ cents: 2 }]);
  const asAdmin = await asMember(t.db, ada);
  expect((await usageView(t.db, asAdmin))!.scope).toBe("organization");
  // Mo becomes the admin and Ada a member, behind the caller's back: the Member in hand still says admin.
  await joinOrgOf(t.db, mo, ada, "admin");
  await joinOrgOf(t.db, ada, mo, "member");
  const demoted = (await usageView(t.db, asAdmin))!;
  expect(demoted.scope).toBe("member");
  expect(demoted.members).toBeNull();
  expect(demoted.spent.month_cents).toBe(1);
  expect(demoted.calls.map((c) => c.actor_name)).toEqual(["Ada"]);
});

it("a user of no organization any more reads nothing", async () => {
  const { ada, mo } = await team();
  const asMo = await asMember(t.db, mo);
  await t.db.execute(sql`delete from membership where user_id = ${mo.id}`);
  expect(await usageView(t.db, asMo)).toBeNull();
  expect(await usageView(t.db, { ...asMo, orgId: (await asMember(t.db, ada)).orgId })).toBeNull();
});

it("the calls come 100 a page, newest first, each once; the cursor is sealed to its caller", async () => {
  const { ada, mo } = await team();
  const total = 2 * USAGE_CALLS_PAGE + 5;
  // Two calls at the very same instant, at a page's edge: the row order still tells them apart.
  const rows = Array.from({ length: total }, (_, i) => ({ cents: 0.01, at: new Date(clock.now.getTime() - 1000 * (i === 100 ? 99 : i)) }));
  await calls(ada, rows);

  const pages: UsageView[] = [await view(ada)];
  while (pages.at(-1)!.older) pages.push(await view(ada, pages.at(-1)!.older));
  expect(pages.map((p) => p.calls.length)).toEqual([USAGE_CALLS_PAGE, USAGE_CALLS_PAGE, 5]);
  const seen = pages.flatMap((p) => p.calls.map((c) => c.input_tokens));
  expect(new Set(seen).size).toBe(total);
  const ats = pages.flatMap((p) => p.calls.map((c) => c.at));
  expect(ats).toEqual([...ats].sort().reverse());
  expect(pages[0]!.older).toMatch(/^[A-Za-z0-9_-]{22}$/);
  // Sums cover every call, not a page.
  expect(pages[1]!.spent.month_cents).toBeCloseTo(total * 0.01, 6);

  // Another caller's cursor, an altered one, garbage: the first page.
  await joinOrgOf(t.db, mo, ada, "admin");
  for (const cursor of [pages[0]!.older!, "x".repeat(22), "not a cursor", ""]) {
    const page = await view(cursor === pages[0]!.older ? mo : ada, cursor);
    expect(page.calls[0]!.at).toBe(pages[0]!.calls[0]!.at);
  }
});
