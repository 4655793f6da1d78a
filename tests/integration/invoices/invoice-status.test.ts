// POST /api/invoices/:id/status through the real route handler, on both databases: who may, what
// a paid day must be, the version bump that withdraws a lease in flight, the history row, the
// idempotent repeat, and two changes racing.
import { randomUUID } from "node:crypto";
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { inferenceLease, invoiceChange } from "@/db/schema";
import { api, signInCookie, sink } from "../../support/api";
import { eventKinds, invoiceRow, leaseEvents, joinOrgOf, leaseRow, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());
beforeEach(() => sink().setFailing(false));

const status = (id: string, cookie: string, json: unknown) => api("POST", `/api/invoices/${id}/status`, { cookie, json });

/** The database's today plus `days`, as YYYY-MM-DD. */
async function dbDay(days = 0): Promise<string> {
  const [row] = await t.db.select({ d: sql<string>`(current_date + ${days}::int)::text` }).from(sql`(select 1) as one`);
  return row!.d;
}

const history = (invoiceId: string) =>
  t.db
    .select({ kind: invoiceChange.kind, actorId: invoiceChange.actorId, version: invoiceChange.version, changes: invoiceChange.changes })
    .from(invoiceChange)
    .where(eq(invoiceChange.invoiceId, invoiceId))
    .orderBy(asc(invoiceChange.id));

/** Alice (admin of her organization), Dave (a member of it) and Bob (another organization). */
async function world() {
  const alice = await makeUser(t.db, "Alice");
  const dave = await makeUser(t.db, "Dave");
  const bob = await makeUser(t.db, "Bob");
  await joinOrgOf(t.db, dave, alice, "member");
  const inv = await makeInvoice(t.db, alice.id, { issuedOn: "2026-01-01", dueOn: "2026-01-31" });
  const daveInv = await makeInvoice(t.db, dave.id);
  return {
    alice,
    dave,
    bob,
    inv,
    daveInv,
    aliceCookie: await signInCookie(alice.email),
    daveCookie: await signInCookie(dave.email),
    bobCookie: await signInCookie(bob.email),
  };
}

describe("POST /api/invoices/:id/status", () => {
  it("marks paid on a day: 200 the invoice, version +1, a status_changed row with both fields before and after", async () => {
    const { alice, inv, aliceCookie } = await world();
    const res = await status(inv.id, aliceCookie, { status: "paid", paid_on: "2026-11-15" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: inv.id, status: "paid", paid_on: "2026-11-15", overdue: false, version: inv.version + 1 });
    expect(await invoiceRow(t.db, inv.id)).toMatchObject({ status: "paid", paidOn: "2026-11-15", version: inv.version + 1 });
    expect(await history(inv.id)).toEqual([
      {
        kind: "status_changed",
        actorId: alice.id,
        version: inv.version + 1,
        changes: { status: { from: "open", to: "paid" }, paid_on: { from: null, to: "2026-11-15" } },
      },
    ]);
  });

  it("void and reopen clear the day; each is a change of its own; GET shows the status", async () => {
    const { inv, aliceCookie } = await world();
    await status(inv.id, aliceCookie, { status: "paid", paid_on: "2026-11-15" });
    const voided = await status(inv.id, aliceCookie, { status: "void" });
    expect(voided).toMatchObject({ status: 200, body: { status: "void", paid_on: null, version: inv.version + 2 } });
    const reopened = await status(inv.id, aliceCookie, { status: "open", paid_on: null });
    expect(reopened).toMatchObject({ status: 200, body: { status: "open", paid_on: null, version: inv.version + 3 } });
    // Due 2026-01-31, before the database's today: open again means overdue again.
    expect(reopened.body.overdue).toBe(true);
    expect((await history(inv.id)).map((h) => h.changes)).toEqual([
      { status: { from: "open", to: "paid" }, paid_on: { from: null, to: "2026-11-15" } },
      { status: { from: "paid", to: "void" }, paid_on: { from: "2026-11-15", to: null } },
      { status: { from: "void", to: "open" } },
    ]);
    expect((await api("GET", `/api/invoices/${inv.id}`, { cookie: aliceCookie })).body).toMatchObject({ status: "open", overdue: true });
  });

  it("the same status again: 200, no version bump, no history row, whatever expected_version says", async () => {
    const { inv, aliceCookie } = await world();
    const first = await status(inv.id, aliceCookie, { status: "paid", paid_on: "2026-11-15", expected_version: inv.version });
    expect(first.status).toBe(200);
    const again = await status(inv.id, aliceCookie, { status: "paid", paid_on: "2026-11-15", expected_version: inv.version });
    expect(again).toMatchObject({ status: 200, body: { status: "paid", version: inv.version + 1 } });
    const openAgain = await makeInvoice(t.db, (await invoiceRow(t.db, inv.id)).ownerId);
    expect(await status(openAgain.id, aliceCookie, { status: "open" })).toMatchObject({
      status: 200,
      body: { version: openAgain.version },
    });
    expect(await history(inv.id)).toHaveLength(1);
    expect(await history(openAgain.id)).toHaveLength(0);
    // Paid again on another day is a change: the day is corrected and recorded.
    const moved = await status(inv.id, aliceCookie, { status: "paid", paid_on: "2026-11-16" });
    expect(moved).toMatchObject({ status: 200, body: { paid_on: "2026-11-16", version: inv.version + 2 } });
    expect((await history(inv.id)).at(-1)!.changes).toEqual({ paid_on: { from: "2026-11-15", to: "2026-11-16" } });
  });

  it("a paid day: today is fine, tomorrow by the database clock is 422 paid_on_in_future; nothing written", async () => {
    const { inv, aliceCookie } = await world();
    const refused = await status(inv.id, aliceCookie, { status: "paid", paid_on: await dbDay(1) });
    expect(refused).toMatchObject({ status: 422, body: { detail: "paid_on_in_future" } });
    expect(await invoiceRow(t.db, inv.id)).toMatchObject({ status: "open", paidOn: null, version: inv.version });
    expect(await history(inv.id)).toHaveLength(0);
    const today = await dbDay();
    expect(await status(inv.id, aliceCookie, { status: "paid", paid_on: today })).toMatchObject({ status: 200, body: { paid_on: today } });
  });

  it("422 invalid_request for a bad body; nothing written", async () => {
    const { inv, aliceCookie } = await world();
    for (const json of [
      {},
      { status: "paid" },
      { status: "paid", paid_on: null },
      { status: "paid", paid_on: "15/11/2026" },
      { status: "paid", paid_on: "2026-02-30" },
      { status: "void", paid_on: "2026-11-15" },
      { status: "open", paid_on: "2026-11-15" },
      { status: "overdue" },
      { status: "PAID", paid_on: "2026-11-15" },
      { status: "void", expected_version: 0 },
      { status: "void", expected_version: "1" },
      [],
      "void",
    ]) {
      expect(await status(inv.id, aliceCookie, json), JSON.stringify(json)).toMatchObject({
        status: 422,
        body: { detail: "invalid_request" },
      });
    }
    expect(await api("POST", `/api/invoices/${inv.id}/status`, { cookie: aliceCookie, raw: "{not json" })).toMatchObject({ status: 422 });
    expect(await invoiceRow(t.db, inv.id)).toMatchObject({ status: "open", version: inv.version });
    expect(await history(inv.id)).toHaveLength(0);
  });

  it("who may: the owner and an admin (200); a teammate 403 forbidden; another organization and a missing or malformed id 404; signed out 401", async () => {
    const { inv, daveInv, aliceCookie, daveCookie, bobCookie } = await world();
    // Dave, a member, on Alice's invoice: visibly there, not his to change.
    expect(await status(inv.id, daveCookie, { status: "void" })).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    // Bob, another organization: as absent as a missing id, whatever the body.
    for (const [id, body] of [
      [inv.id, { status: "void" }],
      [inv.id, { status: "bogus" }],
      [randomUUID(), { status: "void" }],
      ["not-a-uuid", { status: "void" }],
    ] as const) {
      expect(await status(id, bobCookie, body)).toMatchObject({ status: 404, body: { detail: "invoice_not_found" } });
    }
    expect(await invoiceRow(t.db, inv.id)).toMatchObject({ status: "open", version: inv.version });
    expect(await status(inv.id, "", { status: "void" })).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
    // The owner on his own; the admin on a teammate's.
    expect(await status(daveInv.id, daveCookie, { status: "void" })).toMatchObject({ status: 200, body: { status: "void" } });
    expect(await status(daveInv.id, aliceCookie, { status: "open" })).toMatchObject({ status: 200, body: { status: "open" } });
    expect((await history(daveInv.id)).length).toBe(2);
  });

  it("409 invoice_changed when the version is no longer expected_version; nothing written", async () => {
    const { inv, aliceCookie } = await world();
    expect((await api("PATCH", `/api/invoices/${inv.id}`, { cookie: aliceCookie, json: { counterparty: "Renamed" } })).status).toBe(200);
    const refused = await status(inv.id, aliceCookie, { status: "void", expected_version: inv.version });
    expect(refused).toMatchObject({ status: 409, body: { detail: "invoice_changed" } });
    expect(await invoiceRow(t.db, inv.id)).toMatchObject({ status: "open", version: inv.version + 1 });
    expect((await history(inv.id)).map((h) => h.kind)).toEqual(["edited"]);
  });

  it("the version bump withdraws the lease in flight (rejected, invoice_changed, its event naming the status) and tells the generation to stop", async () => {
    const { inv, aliceCookie } = await world();
    const opened = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    expect(opened.status).toBe(201);
    const leaseId = opened.body.lease_id as string;
    await t.db
      .update(inferenceLease)
      .set({ status: "proposed", proposal: { summary: "Before paid", model: "m" } })
      .where(eq(inferenceLease.id, leaseId));
    const res = await status(inv.id, aliceCookie, { status: "paid", paid_on: "2026-11-15" });
    expect(res).toMatchObject({ status: 200, body: { lease: null } });
    expect(await leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
    expect(await eventKinds(t.db, leaseId)).toEqual(["opened", "invoice_changed"]);
    expect((await leaseEvents(t.db, leaseId)).at(-1)!.detail).toMatchObject({ by: "edit", fields: ["status", "paid_on"] });
    expect(sink().events).toContainEqual(expect.objectContaining({ name: "lease/closed", data: expect.objectContaining({ leaseId }) }));
    expect(await api("POST", `/api/leases/${leaseId}/apply`, { cookie: aliceCookie })).toMatchObject({
      status: 409,
      body: { detail: "invoice_changed" },
    });
    expect((await invoiceRow(t.db, inv.id)).summary).toBeNull();
  });

  it("two changes racing on one version: one wins, the other is 409 invoice_changed; one history row, one bump", async () => {
    const { alice, aliceCookie } = await world();
    for (let round = 0; round < 10; round++) {
      const inv = await makeInvoice(t.db, alice.id);
      const [a, b] = await Promise.all([
        status(inv.id, aliceCookie, { status: "paid", paid_on: "2026-11-15", expected_version: inv.version }),
        status(inv.id, aliceCookie, { status: "void", expected_version: inv.version }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const loser = a.status === 409 ? a : b;
      expect(loser.body).toEqual({ detail: "invoice_changed" });
      const winner = a.status === 200 ? a : b;
      const row = await invoiceRow(t.db, inv.id);
      expect(row).toMatchObject({ status: winner.body.status, version: inv.version + 1 });
      expect(await history(inv.id)).toHaveLength(1);
    }
  });

  it("two changes racing without expected_version: both apply in turn, each recorded against the other's result", async () => {
    const { inv, aliceCookie } = await world();
    const answers = await Promise.all([
      status(inv.id, aliceCookie, { status: "paid", paid_on: "2026-11-15" }),
      status(inv.id, aliceCookie, { status: "void" }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const rows = await history(inv.id);
    expect(rows.map((r) => r.version)).toEqual([inv.version + 1, inv.version + 2]);
    // The second saw the first's status as its "from".
    expect(rows[1]!.changes.status!.from).toBe(rows[0]!.changes.status!.to);
    expect((await invoiceRow(t.db, inv.id)).status).toBe(rows[1]!.changes.status!.to);
  });
});
