// Two opens racing for the last of a budget cannot both pass. The test holds both invoices
// FOR UPDATE on a connection of its own, so each open stops at its invoice select (before the
// budget check) until both are waiting; then it lets them go at once. Each open then locks the
// organization's budget row FOR UPDATE (lib/spend admitCall): the second waits for the first
// to commit and then counts the first's reservation. Without that lock both read the same sums
// and both pass (seen: remove `.for("update")` in admitCall and this test fails).
// And an open racing the recording of a call: the usage row and the reservation's release are one
// statement (lib/leases recordUsage's CTE), so an open in between counts the call exactly once.
// PostgreSQL only: PGlite runs one transaction at a time.
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { inferenceLease, orgBudget } from "@/db/schema";
import { openLease, recordUsage } from "@/lib/leases";
import { callKey, reservationCents } from "@/lib/spend";
import { api, signInCookie } from "../../support/api";
import { openedLease } from "./support";
import { asMember, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { appsWaiting as waitForApps, holderFor, type RowHolder } from "../../support/row-holder";
import { withEnv } from "./support";

let t: TestDb;
let holder: RowHolder;
let restore: () => void = () => {};
beforeAll(async () => {
  if (inject("dbKind") !== "postgres") throw new Error("budget-race.connections.test.ts needs PostgreSQL");
  t = await openTestDb();
  holder = holderFor(t);
  restore = withEnv({ MODEL_PROVIDER: "local", MODEL_PRICE_PER_MTOK: "1000,2000" });
});
afterAll(async () => {
  restore();
  await holder?.end();
  await t?.close();
});

/** Resolves once `n` app connections wait on a lock. */
const appsWaiting = (n: number) => waitForApps(holder, t.name, n, "opens");

it("two opens for the last of a budget, released together: exactly one admitted, over 20 rounds", async () => {
  // One call's reservation is far more than the cap: the first admitted lease takes all of it.
  expect(reservationCents("summarize_invoice")).toBeGreaterThan(1);
  const alice = await makeUser(t.db, "Alice");
  const { orgId } = await asMember(t.db, alice);
  await t.db.insert(orgBudget).values({ orgId, organizationDailyCents: 1 });
  const cookie = await signInCookie(alice.email);
  const seen: string[] = [];
  for (let round = 0; round < 20; round++) {
    const a = await makeInvoice(t.db, alice.id);
    const b = await makeInvoice(t.db, alice.id);
    const held = holder.hold(`select 1 from invoice where id in ('${a.id}', '${b.id}') for update`);
    await held.isLocked;
    const opens = [a, b].map((inv) => api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } }));
    await appsWaiting(2);
    held.release();
    await held.done;
    const statuses = (await Promise.all(opens)).map((r) => r.status).sort();
    seen.push(statuses.join("/"));
    expect(statuses, `round ${round}`).toEqual([201, 429]);
    const leases = await t.db
      .select()
      .from(inferenceLease)
      .where(inArray(inferenceLease.invoiceId, [a.id, b.id]));
    expect(leases).toHaveLength(1);
    // The next round starts from an empty budget again: the admitted lease closes, its reservation with it.
    await t.db.update(inferenceLease).set({ status: "rejected", reservedCents: null }).where(eq(inferenceLease.id, leases[0]!.id));
  }
  console.info(`[budget-race] ${JSON.stringify(seen)}`);
});

it("an open while a call's usage is being recorded counts the call once: its reservation until the row commits, then its cost", async () => {
  const reserve = reservationCents("summarize_invoice");
  const alice = await makeUser(t.db, "Alice");
  const { orgId } = await asMember(t.db, alice);
  // Each round's cap is what was spent before it plus half a reservation, and its call costs one
  // cent more than that half: counted as the reservation or as the cost, it reaches the cap; only
  // a release seen without its usage row (what was spent before, alone) is below it.
  const half = Math.floor(reserve / 2);
  let spent = 0;
  await t.db.insert(orgBudget).values({ orgId, organizationDailyCents: null });
  const nothing = { async leaseOpened() {}, async leaseClosed() {} };
  const tryOpen = async () => {
    const inv = await makeInvoice(t.db, alice.id);
    const r = await openLease(
      t.db,
      { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 60 },
      nothing,
    );
    return r.ok ? "created" : r.code;
  };
  for (let round = 0; round < 5; round++) {
    const inv = await makeInvoice(t.db, alice.id);
    // Opened with no cap set; then the cap is what was spent plus half its reservation.
    await t.db.update(orgBudget).set({ organizationDailyCents: null }).where(eq(orgBudget.orgId, orgId));
    const { lease } = await openedLease(t.db, alice.id, inv.id);
    await t.db
      .update(orgBudget)
      .set({ organizationDailyCents: spent + half })
      .where(eq(orgBudget.orgId, orgId));
    const key = callKey(lease.id, 0);
    // The test's own connection inserts the same call key and holds it: the recording's insert waits
    // on it, mid-statement, with nothing of it committed (and its release, which follows the row, not run).
    const held = holder.hold(
      `insert into model_usage (org_id, actor_id, lease_id, invoice_id, purpose, model, input_tokens, output_tokens, cost_cents, outcome, call_key)
       values ('${orgId}', '${alice.id}', '${lease.id}', '${inv.id}', 'summarize_invoice', 'm', 0, 0, 0, 'aborted', '${key}')`,
      true,
    );
    await held.isLocked;
    const usage = { callKey: key, model: "m", inputTokens: 1, outputTokens: 0, estimated: true, costCents: half + 1 };
    const recording = recordUsage(t.db, lease.id, usage, "aborted");
    await holder.appWaitingOnLock(recording);
    expect(await tryOpen(), `round ${round}: an open while the call is being recorded`).toBe("budget_exhausted");
    held.release();
    await held.done;
    expect(await recording, `round ${round}: recorded`).toBe(true);
    expect(await tryOpen(), `round ${round}: an open once it is recorded`).toBe("budget_exhausted");
    spent += half + 1;
  }
});
