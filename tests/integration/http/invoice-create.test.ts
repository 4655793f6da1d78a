// POST /api/invoices: each answer of its contract row, through the real route handler on a
// real database; every refusal writes nothing.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, signInCookie } from "../../support/api";
import { rowsOf } from "../../support/fuzz";
import { joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

const body = (over: Record<string, unknown> = {}) => ({
  number: `N-${Math.random().toString(36).slice(2, 10)}`,
  counterparty: "Contoso Ltd",
  currency: "EUR",
  issued_on: "2026-11-01",
  due_on: "2026-12-01",
  lines: [
    { description: "Audit", quantity: 2, unit_price_cents: 50000 },
    { description: "Travel", quantity: 1, unit_price_cents: 1250 },
  ],
  ...over,
});

async function counts() {
  const [row] = rowsOf<{ invoices: number; lines: number; changes: number }>(
    await t.db.execute(
      sql`select (select count(*)::int from invoice) as invoices, (select count(*)::int from invoice_line) as lines, (select count(*)::int from invoice_change) as changes`,
    ),
  );
  return row!;
}

describe("POST /api/invoices", () => {
  it("creates the invoice with its lines and a `created` history row: 201, as GET returns it", async () => {
    const alice = await makeUser(t.db, "Alice");
    const cookie = await signInCookie(alice.email);
    const res = await api("POST", "/api/invoices", { cookie, json: body({ number: "INV-NEW-1", currency: "usd" }) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: "invalid_request", field: "currency" });
    const ok = await api("POST", "/api/invoices", { cookie, json: body({ number: "INV-NEW-1" }) });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ number: "INV-NEW-1", total_cents: 101250, currency: "EUR", version: 1, lease: null });
    expect(ok.body.lines).toEqual([
      // No category until categorize_lines writes one.
      { description: "Audit", quantity: 2, unit_price_cents: 50000, amount_cents: 100000, category: null },
      { description: "Travel", quantity: 1, unit_price_cents: 1250, amount_cents: 1250, category: null },
    ]);
    const read = await api("GET", `/api/invoices/${ok.body.id}`, { cookie });
    expect(read.body).toEqual(ok.body);
    const changes = rowsOf<{ kind: string; actor_id: string; version: number; changes: unknown }>(
      await t.db.execute(sql`select kind, actor_id, version, changes from invoice_change where invoice_id = ${ok.body.id}`),
    );
    expect(changes).toEqual([{ kind: "created", actor_id: alice.id, version: 1, changes: {} }]);
  });

  it("401 without a session, and nothing written", async () => {
    const before = await counts();
    expect(await api("POST", "/api/invoices", { json: body() })).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
    expect(await counts()).toEqual(before);
  });

  it("422 invalid_request names the field at fault, and writes nothing", async () => {
    const alice = await makeUser(t.db, "Alice");
    const cookie = await signInCookie(alice.email);
    const line = { description: "x", quantity: 1, unit_price_cents: 1 };
    const cases: [Record<string, unknown>, string][] = [
      [body({ number: "" }), "number"],
      [body({ counterparty: 7 }), "counterparty"],
      [body({ currency: "EURO" }), "currency"],
      [body({ currency: "ZZZ" }), "currency"],
      [body({ issued_on: "2026-02-30" }), "issued_on"],
      [body({ due_on: "2026-10-01" }), "due_on"],
      [body({ lines: [] }), "lines"],
      [body({ lines: Array.from({ length: 201 }, () => line) }), "lines"],
      [body({ lines: [{ ...line, quantity: 0 }] }), "lines.0.quantity"],
      [body({ lines: [line, { ...line, quantity: 1.5 }] }), "lines.1.quantity"],
      [body({ lines: [{ ...line, unit_price_cents: -1 }] }), "lines.0.unit_price_cents"],
      [body({ lines: [{ ...line, description: "a\u0000b" }] }), "lines.0.description"],
      // Each line fits an integer, the total does not.
      [body({ lines: [{ ...line, quantity: 2, unit_price_cents: 2_000_000_000 }] }), "lines"],
      [body({ owner_id: "not-a-uuid" }), "owner_id"],
    ];
    const before = await counts();
    for (const [json, field] of cases) {
      const res = await api("POST", "/api/invoices", { cookie, json });
      expect({ field, res: res.body, status: res.status }).toEqual({ field, res: { detail: "invalid_request", field }, status: 422 });
    }
    expect((await api("POST", "/api/invoices", { cookie, raw: "{nope" })).status).toBe(422);
    expect(await counts()).toEqual(before);
  });

  it("409 invoice_number_taken within the organization; another organization may use the number", async () => {
    const alice = await makeUser(t.db, "Alice");
    const bob = await makeUser(t.db, "Bob");
    await makeInvoice(t.db, alice.id, { number: "DUP-1" });
    const before = await counts();
    const res = await api("POST", "/api/invoices", { cookie: await signInCookie(alice.email), json: body({ number: "DUP-1" }) });
    expect(res).toMatchObject({ status: 409, body: { detail: "invoice_number_taken" } });
    expect(await counts()).toEqual(before);
    const other = await api("POST", "/api/invoices", { cookie: await signInCookie(bob.email), json: body({ number: "DUP-1" }) });
    expect(other.status).toBe(201);
  });

  it("owner_id: an admin creates for a member of the organization; a member may not (403); an outsider is the field at fault (422)", async () => {
    const admin = await makeUser(t.db, "Admin");
    const member = await makeUser(t.db, "Member");
    const outsider = await makeUser(t.db, "Outsider");
    await joinOrgOf(t.db, member, admin, "member");
    const adminCookie = await signInCookie(admin.email);
    const memberCookie = await signInCookie(member.email);

    const forMember = await api("POST", "/api/invoices", { cookie: adminCookie, json: body({ owner_id: member.id }) });
    expect(forMember.status).toBe(201);
    const [row] = rowsOf<{ owner_id: string }>(await t.db.execute(sql`select owner_id from invoice where id = ${forMember.body.id}`));
    expect(row!.owner_id).toBe(member.id);
    // The member reads it in their list: it is theirs.
    expect((await api("GET", `/api/invoices/${forMember.body.id}`, { cookie: memberCookie })).status).toBe(200);

    const before = await counts();
    expect(await api("POST", "/api/invoices", { cookie: memberCookie, json: body({ owner_id: admin.id }) })).toMatchObject({
      status: 403,
      body: { detail: "forbidden" },
    });
    expect(await api("POST", "/api/invoices", { cookie: adminCookie, json: body({ owner_id: outsider.id }) })).toMatchObject({
      status: 422,
      body: { detail: "invalid_request", field: "owner_id" },
    });
    expect(await counts()).toEqual(before);
    // Naming oneself is no creation for others.
    expect((await api("POST", "/api/invoices", { cookie: memberCookie, json: body({ owner_id: member.id }) })).status).toBe(201);
  });

  it("415 for a body that is not JSON, 413 for one over the limit", async () => {
    const alice = await makeUser(t.db, "Alice");
    const cookie = await signInCookie(alice.email);
    const before = await counts();
    expect((await api("POST", "/api/invoices", { cookie, raw: "a=b", headers: { "content-type": "text/plain" } })).status).toBe(415);
    const huge = body({ counterparty: "x".repeat(20_000) });
    expect((await api("POST", "/api/invoices", { cookie, json: huge })).status).toBe(413);
    expect(await counts()).toEqual(before);
  });
});
