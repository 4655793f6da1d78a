// No read or write crosses organizations, through the real route handlers on both databases.
// Two organizations: Northwind (Alice admin, Carol approver, Dave member) and Fabrikam (Bob
// admin). Another organization's invoice or lease answers exactly as a missing id does (status
// and body, byte for byte) and writes nothing; a teammate's lease is as missing to the other
// teammates (GET, its stream, its cursor, apply, cancel), while the invoice it is on reads in
// full for them, with who holds the lease and until when, and nothing else of it.
// The pages, their RSC payloads and the server actions over HTTP: cross-org.built-app.test.ts.
import { randomUUID } from "node:crypto";
import { desc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as eventsRoute from "@/app/api/leases/[id]/events/route";
import { inferenceLease, leaseEvent } from "@/db/schema";
import { sealEventsCursor } from "@/lib/leases";
import { api, signInCookie } from "../../support/api";
import { joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

/** Everything a request could have written, as one comparable value. */
async function snapshot() {
  const [row] = await t.db
    .select({
      invoices: sql<string>`(select string_agg(concat_ws(':', id, org_id, owner_id, version, number, counterparty, issued_on, due_on, summary, status), ',' order by id) from invoice)`,
      leases: sql<string>`(select string_agg(concat_ws(':', id, status, closed_reason, deadline_at), ',' order by id) from inference_lease)`,
      events: sql<number>`(select count(*) from lease_event)`.mapWith(Number),
      changes: sql<number>`(select count(*) from invoice_change)`.mapWith(Number),
      memberships: sql<string>`(select string_agg(concat_ws(':', org_id, user_id, role), ',' order by org_id, user_id) from membership)`,
    })
    .from(sql`(select 1) as one`);
  return row!;
}

async function seedLease(actorId: string, invoiceId: string, status: "open" | "proposed", summary: string) {
  const [lease] = await t.db
    .insert(inferenceLease)
    .values({
      actorId,
      invoiceId,
      purpose: "summarize_invoice",
      status,
      deadlineAt: sql`now() + interval '10 minutes'`,
      proposal: status === "proposed" ? { summary, model: "test" } : null,
    })
    .returning();
  await t.db.insert(leaseEvent).values({ leaseId: lease!.id, kind: "opened", detail: {} });
  if (status === "proposed") await t.db.insert(leaseEvent).values({ leaseId: lease!.id, kind: "proposed", detail: {} });
  const [last] = await t.db
    .select({ id: leaseEvent.id })
    .from(leaseEvent)
    .where(eq(leaseEvent.leaseId, lease!.id))
    .orderBy(desc(leaseEvent.id))
    .limit(1);
  return { ...lease!, cursor: sealEventsCursor(lease!.id, Number(last!.id)) };
}

async function world() {
  const alice = await makeUser(t.db, "Alice Martin");
  const carol = await makeUser(t.db, "Carol");
  const dave = await makeUser(t.db, "Dave");
  const bob = await makeUser(t.db, "Bob");
  await joinOrgOf(t.db, carol, alice, "approver");
  await joinOrgOf(t.db, dave, alice, "member");
  const northwind = await makeInvoice(t.db, alice.id, { counterparty: "Northwind secret counterparty" });
  const fabrikam = await makeInvoice(t.db, bob.id, { counterparty: "Fabrikam secret counterparty" });
  const aliceLease = await seedLease(alice.id, northwind.id, "proposed", "Alice's private proposal");
  const bobLease = await seedLease(bob.id, fabrikam.id, "proposed", "Bob's private proposal");
  const [aliceCookie, carolCookie, daveCookie, bobCookie] = (await Promise.all(
    [alice, carol, dave, bob].map((u) => signInCookie(u.email)),
  )) as [string, string, string, string];
  return { alice, carol, dave, bob, northwind, fabrikam, aliceLease, bobLease, aliceCookie, carolCookie, daveCookie, bobCookie };
}

type Req = { method: string; path: (id: string) => string; json?: unknown };

/** The invoice routes, with the id in the path or the body. */
const INVOICE_REQUESTS: Req[] = [
  { method: "GET", path: (id) => `/api/invoices/${id}` },
  { method: "PATCH", path: (id) => `/api/invoices/${id}`, json: { counterparty: "Hijacked" } },
  { method: "PATCH", path: (id) => `/api/invoices/${id}`, json: { counterparty: "Hijacked", expected_version: 1 } },
  { method: "POST", path: () => "/api/leases", json: null },
];

/** The lease routes. */
const LEASE_REQUESTS: Req[] = [
  { method: "GET", path: (id) => `/api/leases/${id}` },
  { method: "POST", path: (id) => `/api/leases/${id}/apply` },
  { method: "POST", path: (id) => `/api/leases/${id}/cancel` },
];

/** What the route answers, as bytes: status and raw body text. */
async function answer(cookie: string, req: Req, id: string) {
  const json = req.json === null ? { invoice_id: id, purpose: "summarize_invoice" } : req.json;
  const res = await api(req.method, req.path(id), { cookie, json });
  return { status: res.status, body: JSON.stringify(res.body) };
}

async function stream(cookie: string, leaseId: string, query = "") {
  const req = new Request(`http://127.0.0.1:3000/api/leases/${leaseId}/events${query}`, { headers: { cookie } });
  const res = await eventsRoute.GET(req, { params: Promise.resolve({ id: leaseId }) });
  return { status: res.status, body: await res.text() };
}

describe("another organization's invoice is a missing id, byte for byte, and nothing is written", () => {
  it("every invoice route, both ways between Northwind and Fabrikam, for every role", async () => {
    const w = await world();
    const cases = [
      { cookie: w.bobCookie, foreign: w.northwind.id },
      { cookie: w.aliceCookie, foreign: w.fabrikam.id },
      { cookie: w.carolCookie, foreign: w.fabrikam.id },
      { cookie: w.daveCookie, foreign: w.fabrikam.id },
    ];
    let compared = 0;
    for (const { cookie, foreign } of cases) {
      for (const req of INVOICE_REQUESTS) {
        const before = await snapshot();
        const missing = await answer(cookie, req, randomUUID());
        const crossed = await answer(cookie, req, foreign);
        expect({ req: `${req.method} ${req.path(":id")}`, ...crossed }).toEqual({ req: `${req.method} ${req.path(":id")}`, ...missing });
        expect(crossed.status).toBe(404);
        expect(await snapshot()).toEqual(before);
        compared++;
      }
    }
    expect(compared).toBe(cases.length * INVOICE_REQUESTS.length);
  });

  it("the list holds only one's own organization's invoices, and no other organization's names", async () => {
    const w = await world();
    for (const cookie of [w.aliceCookie, w.carolCookie, w.daveCookie]) {
      const list = await api("GET", "/api/invoices", { cookie });
      expect(list.status).toBe(200);
      const ids = (list.body as { id: string }[]).map((i) => i.id);
      expect(ids).toContain(w.northwind.id);
      expect(ids).not.toContain(w.fabrikam.id);
      expect(JSON.stringify(list.body)).not.toContain("Fabrikam secret");
      expect(JSON.stringify(list.body)).not.toContain("Bob");
    }
    const bobs = await api("GET", "/api/invoices", { cookie: w.bobCookie });
    expect((bobs.body as { id: string }[]).map((i) => i.id)).not.toContain(w.northwind.id);
    expect(JSON.stringify(bobs.body)).not.toMatch(/Northwind secret|Alice|Carol|Dave/);
  });
});

describe("another organization's lease, and a teammate's, is a missing id, byte for byte", () => {
  it("GET, apply, cancel; the stream; the cursor", async () => {
    const w = await world();
    const cases = [
      { who: "Bob on Alice's lease (Fabrikam on Northwind)", cookie: w.bobCookie, lease: w.aliceLease },
      { who: "Alice on Bob's lease (Northwind on Fabrikam)", cookie: w.aliceCookie, lease: w.bobLease },
      { who: "Carol (approver) on Alice's lease (a teammate's)", cookie: w.carolCookie, lease: w.aliceLease },
      { who: "Dave (member) on Alice's lease (a teammate's)", cookie: w.daveCookie, lease: w.aliceLease },
      { who: "Carol on Bob's lease", cookie: w.carolCookie, lease: w.bobLease },
    ];
    for (const { who, cookie, lease } of cases) {
      const before = await snapshot();
      const missingId = randomUUID();
      for (const req of LEASE_REQUESTS) {
        const missing = await answer(cookie, req, missingId);
        const crossed = await answer(cookie, req, lease.id);
        expect({ who, req: req.path(":id"), ...crossed }).toEqual({ who, req: req.path(":id"), ...missing });
        expect(crossed).toEqual({ status: 404, body: JSON.stringify({ detail: "lease_not_found" }) });
      }
      // The lease's own cursor, sent by someone it is not for: 404 as for a missing lease with
      // a cursor of its own (a cursor sealed to another lease is 400 before anything is read).
      const missingCursor = sealEventsCursor(missingId, 1);
      const withCursor = await api("GET", `/api/leases/${lease.id}?events_before=${encodeURIComponent(lease.cursor)}`, { cookie });
      const missingWithCursor = await api("GET", `/api/leases/${missingId}?events_before=${encodeURIComponent(missingCursor)}`, { cookie });
      expect({ who, status: withCursor.status, body: withCursor.body }).toEqual({
        who,
        status: missingWithCursor.status,
        body: missingWithCursor.body,
      });
      expect(withCursor.status).toBe(404);
      const crossedStream = await stream(cookie, lease.id);
      const missingStream = await stream(cookie, missingId);
      expect({ who, ...crossedStream }).toEqual({ who, ...missingStream });
      expect(crossedStream.status).toBe(404);
      expect(await snapshot()).toEqual(before);
    }
    // The leases are still where they were, and their owners read them.
    expect((await api("GET", `/api/leases/${w.aliceLease.id}`, { cookie: w.aliceCookie })).body).toMatchObject({ status: "proposed" });
    expect((await api("GET", `/api/leases/${w.bobLease.id}`, { cookie: w.bobCookie })).body).toMatchObject({ status: "proposed" });
  });
});

describe("the teammate's view of an invoice", () => {
  it("reads the invoice, its lines, owner and who holds the lease until when; nothing of the lease's id or proposal", async () => {
    const w = await world();
    for (const cookie of [w.carolCookie, w.daveCookie]) {
      const res = await api("GET", `/api/invoices/${w.northwind.id}`, { cookie });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: w.northwind.id,
        owner: { id: w.alice.id, name: "Alice Martin" },
        lease: null,
        latest_lease: null,
        lease_held_by: null,
        teammate_lease: {
          name: "Alice Martin",
          purpose: "summarize_invoice",
          status: "proposed",
          deadline_at: w.aliceLease.deadlineAt.toISOString(),
        },
      });
      expect(res.body.lines).toHaveLength(2);
      expect(Object.keys(res.body.teammate_lease).sort()).toEqual(["deadline_at", "name", "purpose", "status"]);
      const text = JSON.stringify(res.body);
      for (const secret of [w.aliceLease.id, "Alice's private proposal", w.aliceLease.cursor]) expect(text).not.toContain(secret);
    }
    // The owner reads their own lease as before, and no teammate_lease of their own.
    const own = await api("GET", `/api/invoices/${w.northwind.id}`, { cookie: w.aliceCookie });
    expect(own.body).toMatchObject({
      owner: { id: w.alice.id, name: "Alice Martin" },
      lease: { lease_id: w.aliceLease.id },
      teammate_lease: null,
    });
    // The list names each invoice's owner.
    const list = await api("GET", "/api/invoices", { cookie: w.daveCookie });
    expect((list.body as { id: string; owner: unknown }[]).find((i) => i.id === w.northwind.id)?.owner).toEqual({
      id: w.alice.id,
      name: "Alice Martin",
    });
  });

  it("an open lease reads as open; once it closes, teammate_lease is null", async () => {
    const w = await world();
    const inv = await makeInvoice(t.db, w.alice.id);
    const open = await seedLease(w.alice.id, inv.id, "open", "");
    const read = async () => (await api("GET", `/api/invoices/${inv.id}`, { cookie: w.daveCookie })).body.teammate_lease;
    expect(await read()).toEqual({
      name: "Alice Martin",
      purpose: "summarize_invoice",
      status: "open",
      deadline_at: open.deadlineAt.toISOString(),
    });
    await t.db.update(inferenceLease).set({ status: "rejected", closedReason: "cancelled" }).where(eq(inferenceLease.id, open.id));
    expect(await read()).toBeNull();
  });

  it("teammate_lease names the purpose of the lease it reads, as the page's teammate panel does: a review reads as a review", async () => {
    const w = await world();
    const inv = await makeInvoice(t.db, w.alice.id);
    const [review] = await t.db
      .insert(inferenceLease)
      .values({
        actorId: w.alice.id,
        invoiceId: inv.id,
        purpose: "review_invoice",
        status: "open",
        deadlineAt: sql`now() + interval '10 minutes'`,
      })
      .returning();
    const res = await api("GET", `/api/invoices/${inv.id}`, { cookie: w.daveCookie });
    expect(res.body.teammate_lease).toEqual({
      name: "Alice Martin",
      purpose: "review_invoice",
      status: "open",
      deadline_at: review!.deadlineAt.toISOString(),
    });
    expect(JSON.stringify(res.body)).not.toContain(review!.id);
  });

  it("a teammate may not summarize (403 forbidden) nor, as approver or member, edit (403); nothing is written", async () => {
    const w = await world();
    for (const cookie of [w.carolCookie, w.daveCookie]) {
      const before = await snapshot();
      expect(
        await api("POST", "/api/leases", { cookie, json: { invoice_id: w.northwind.id, purpose: "summarize_invoice" } }),
      ).toMatchObject({ status: 403, body: { detail: "forbidden" } });
      expect(await api("PATCH", `/api/invoices/${w.northwind.id}`, { cookie, json: { counterparty: "Changed" } })).toMatchObject({
        status: 403,
        body: { detail: "forbidden" },
      });
      expect(await snapshot()).toEqual(before);
    }
  });

  it("GET /api/session names the organization and the role", async () => {
    const w = await world();
    const carol = await api("GET", "/api/session", { cookie: w.carolCookie });
    const alice = await api("GET", "/api/session", { cookie: w.aliceCookie });
    expect(carol.body.actor).toMatchObject({ id: w.carol.id, org: { id: alice.body.actor.org.id }, role: "approver" });
    expect(alice.body.actor).toMatchObject({ id: w.alice.id, role: "admin" });
    expect(typeof alice.body.actor.org.name).toBe("string");
    const bob = await api("GET", "/api/session", { cookie: w.bobCookie });
    expect(bob.body.actor.org.id).not.toBe(alice.body.actor.org.id);
    expect(Object.keys(bob.body.actor).sort()).toEqual(["email", "id", "name", "org", "role"]);
  });
});
