// Every row of the contract's HTTP table, refusals included, through the real route handlers
// on a real database. Events go to a local sink standing where the Inngest server stands.
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { appSession, inferenceLease, invoice, leaseEvent } from "@/db/schema";
import { api, cookieFrom, signInCookie, sink } from "../../support/api";
import { opened } from "../../harness/step-data";
import * as leases from "@/lib/leases";
import { LEASE_EVENTS_PAGE } from "@/lib/leases";
import { rowsOf } from "../../support/fuzz";
import * as rows from "../../support/db";
import { joinOrgOf, makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());
beforeEach(() => sink().setFailing(false));

async function world() {
  const alice = await makeUser(t.db, "Alice");
  const bob = await makeUser(t.db, "Bob");
  const inv = await makeInvoice(t.db, alice.id);
  const bobInv = await makeInvoice(t.db, bob.id, { counterparty: "Bob's Supplier" });
  return { alice, bob, inv, bobInv, aliceCookie: await signInCookie(alice.email), bobCookie: await signInCookie(bob.email) };
}

async function counts() {
  const [row] = await t.db
    .select({
      leases: sql<number>`(select count(*) from inference_lease)`.mapWith(Number),
      events: sql<number>`(select count(*) from lease_event)`.mapWith(Number),
      invoices: sql<string>`(select string_agg(id::text || ':' || version || ':' || coalesce(summary, ''), ',' order by id) from invoice)`,
    })
    .from(sql`(select 1) as one`);
  return row!;
}

const leaseRow = (id: string) => rows.leaseRow(t.db, id);

async function proposeByHand(leaseId: string, summary = "Proposed summary") {
  await t.db
    .update(inferenceLease)
    .set({ status: "proposed", proposal: { summary, model: "test" } })
    .where(eq(inferenceLease.id, leaseId));
}

describe("POST/GET/DELETE /api/session", () => {
  it("signs in with email and password: 200 {actor} and a cookie", async () => {
    const alice = await makeUser(t.db, "Alice");
    const res = await api("POST", "/api/session", { json: { email: alice.email, password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ actor: { id: alice.id, email: alice.email, name: "Alice" } });
    const cookie = cookieFrom(res.headers);
    expect(cookie).toMatch(/^claimcheck_session=/);
    expect(res.headers.getSetCookie()[0]).toMatch(/HttpOnly/i);
    const me = await api("GET", "/api/session", { cookie });
    expect(me).toMatchObject({ status: 200, body: { actor: { id: alice.id } } });
  });

  it("refuses wrong passwords and unknown emails alike: 401 invalid_credentials, no cookie", async () => {
    const alice = await makeUser(t.db, "Alice");
    for (const json of [
      { email: alice.email, password: "wrong" },
      { email: "nobody@example.test", password: PASSWORD },
    ]) {
      const res = await api("POST", "/api/session", { json });
      expect(res).toMatchObject({ status: 401, body: { detail: "invalid_credentials" } });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it("answers malformed sign-in bodies with 422 invalid_request", async () => {
    for (const opts of [
      { raw: "{not json" },
      { json: { email: 42, password: true } },
      { json: { email: "a@b.c" } },
      { json: [] },
      { raw: "" },
    ]) {
      expect(await api("POST", "/api/session", opts)).toMatchObject({ status: 422, body: { detail: "invalid_request" } });
    }
  });

  it("answers 401 not_signed_in without a cookie, with a tampered cookie, and with a forged one", async () => {
    const { aliceCookie } = await world();
    expect(await api("GET", "/api/session")).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
    const tampered = aliceCookie.slice(0, -6) + (aliceCookie.endsWith("A") ? "BBBBBB" : "AAAAAA");
    expect(await api("GET", "/api/session", { cookie: tampered })).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
    expect(await api("GET", "/api/session", { cookie: "claimcheck_session=Fe26.2**garbage" })).toMatchObject({ status: 401 });
    for (const [method, path] of [
      ["GET", "/api/invoices"],
      ["POST", "/api/leases"],
      ["DELETE", "/api/session"],
      ["POST", `/api/leases/${randomUUID()}/apply`],
    ] as const) {
      expect((await api(method, path, { cookie: tampered, json: method === "GET" ? undefined : {} })).status).toBe(401);
    }
  });

  it("sign-out ends the session on the server: a replayed copy of the cookie gets 401", async () => {
    const { aliceCookie } = await world();
    const out = await api("DELETE", "/api/session", { cookie: aliceCookie });
    expect(out).toMatchObject({ status: 200, body: { status: "signed_out", revoked: [] } });
    expect(out.headers.getSetCookie()[0]).toMatch(/claimcheck_session=;|Max-Age=0|Expires=Thu, 01 Jan 1970/i);
    expect(await api("GET", "/api/session", { cookie: aliceCookie })).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
    expect(await api("DELETE", "/api/session", { cookie: aliceCookie })).toMatchObject({ status: 401 });
  });

  it("sign-out revokes the leases that session opened, and only those, and tells the workers", async () => {
    const { alice, inv, aliceCookie } = await world();
    const other = await makeInvoice(t.db, alice.id);
    const otherSession = await signInCookie(alice.email);
    const mine = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    const theirs = await api("POST", "/api/leases", { cookie: otherSession, json: { invoice_id: other.id, purpose: "summarize_invoice" } });
    const out = await api("DELETE", "/api/session", { cookie: aliceCookie });
    expect(out.body).toEqual({ status: "signed_out", revoked: [mine.body.lease_id] });
    expect(await leaseRow(mine.body.lease_id)).toMatchObject({ status: "rejected", closedReason: "signed_out" });
    expect((await leaseRow(theirs.body.lease_id))?.status).toBe("open");
    expect(sink().events).toContainEqual(
      expect.objectContaining({ name: "lease/closed", data: expect.objectContaining({ leaseId: mine.body.lease_id }) }),
    );
    // The other session still works.
    expect((await api("GET", "/api/session", { cookie: otherSession })).status).toBe(200);
  });
});

describe("sign-out whatever the session's state, and sign-out everywhere", () => {
  const open = async (cookie: string, invoiceId: string) => {
    const res = await api("POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
    expect(res.status).toBe(201);
    return res.body.lease_id as string;
  };
  const closedSignal = (leaseId: string) => expect.objectContaining({ name: "lease/closed", data: expect.objectContaining({ leaseId }) });
  const clears = (headers: Headers) => headers.getSetCookie().some((c) => /^claimcheck_session=;/.test(c));
  const sessionsOf = async (userId: string) =>
    t.db
      .select({ id: appSession.id, revoked: sql<boolean>`${appSession.revokedAt} is not null` })
      .from(appSession)
      .where(eq(appSession.userId, userId));

  it("DELETE /api/session with a session past its expires_at still closes that session's leases: 401, cookie cleared, runs told", async () => {
    const { alice, inv, aliceCookie } = await world();
    const other = await makeInvoice(t.db, alice.id);
    const otherSession = await signInCookie(alice.email);
    const mine = await open(aliceCookie, inv.id);
    const theirs = await open(otherSession, other.id);
    const [lease] = await t.db.select({ sessionId: inferenceLease.sessionId }).from(inferenceLease).where(eq(inferenceLease.id, mine));
    await t.db
      .update(appSession)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(appSession.id, lease!.sessionId!));

    const out = await api("DELETE", "/api/session", { cookie: aliceCookie });
    expect({ status: out.status, body: out.body, clears: clears(out.headers) }).toEqual({
      status: 401,
      body: { detail: "not_signed_in" },
      clears: true,
    });
    expect(await leaseRow(mine)).toMatchObject({ status: "rejected", closedReason: "signed_out" });
    expect(sink().events).toContainEqual(closedSignal(mine));
    // Only that session's: the other one and its lease go on.
    expect((await leaseRow(theirs))?.status).toBe("open");
    expect((await api("GET", "/api/session", { cookie: otherSession })).status).toBe(200);
  });

  it("DELETE /api/session?scope=all ends every session of the user and closes all their leases in flight, and nobody else's", async () => {
    const { alice, bob, inv, bobInv, aliceCookie, bobCookie } = await world();
    const other = await makeInvoice(t.db, alice.id);
    const laptop = await signInCookie(alice.email);
    const mine = await open(aliceCookie, inv.id);
    const onLaptop = await open(laptop, other.id);
    await proposeByHand(onLaptop);
    const bobs = await open(bobCookie, bobInv.id);

    const out = await api("DELETE", "/api/session?scope=all", { cookie: aliceCookie });
    expect(out.status).toBe(200);
    expect(out.body.status).toBe("signed_out");
    expect([...out.body.revoked].sort()).toEqual([mine, onLaptop].sort());
    expect(clears(out.headers)).toBe(true);
    for (const id of [mine, onLaptop]) {
      expect(await leaseRow(id)).toMatchObject({ status: "rejected", closedReason: "signed_out" });
      expect(sink().events).toContainEqual(closedSignal(id));
    }
    expect((await sessionsOf(alice.id)).every((s) => s.revoked)).toBe(true);
    for (const cookie of [aliceCookie, laptop]) expect((await api("GET", "/api/session", { cookie })).status).toBe(401);
    // Bob is untouched.
    expect((await leaseRow(bobs))?.status).toBe("open");
    expect((await api("GET", "/api/session", { cookie: bobCookie })).status).toBe(200);
    expect((await sessionsOf(bob.id)).some((s) => s.revoked)).toBe(false);
  });

  it("?scope=all from a dead session is 401 and ends nothing but that session's leases", async () => {
    const { alice, inv, aliceCookie } = await world();
    const other = await makeInvoice(t.db, alice.id);
    const laptop = await signInCookie(alice.email);
    const mine = await open(aliceCookie, inv.id);
    const onLaptop = await open(laptop, other.id);
    const [lease] = await t.db.select({ sessionId: inferenceLease.sessionId }).from(inferenceLease).where(eq(inferenceLease.id, mine));
    await t.db
      .update(appSession)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(appSession.id, lease!.sessionId!));
    const out = await api("DELETE", "/api/session?scope=all", { cookie: aliceCookie });
    expect({ status: out.status, body: out.body }).toEqual({ status: 401, body: { detail: "not_signed_in" } });
    expect(await leaseRow(mine)).toMatchObject({ status: "rejected", closedReason: "signed_out" });
    expect((await leaseRow(onLaptop))?.status).toBe("open");
    expect((await api("GET", "/api/session", { cookie: laptop })).status).toBe(200);
  });

  it("any other scope is 422 invalid_request and writes nothing", async () => {
    const { inv, aliceCookie } = await world();
    const mine = await open(aliceCookie, inv.id);
    const before = await counts();
    for (const query of ["scope=", "scope=ALL", "scope=everywhere", "scope=all&scope=all", "scope=this", "scope=%00"]) {
      const res = await api("DELETE", `/api/session?${query}`, { cookie: aliceCookie });
      expect({ query, status: res.status, body: res.body }).toEqual({ query, status: 422, body: { detail: "invalid_request" } });
    }
    expect(await counts()).toEqual(before);
    expect((await leaseRow(mine))?.status).toBe("open");
    expect((await api("GET", "/api/session", { cookie: aliceCookie })).status).toBe(200);
  });
});

describe("GET/PATCH /api/invoices", () => {
  it("lists the actor's invoices only", async () => {
    const { inv, bobInv, aliceCookie } = await world();
    const res = await api("GET", "/api/invoices", { cookie: aliceCookie });
    expect(res.status).toBe(200);
    const ids = res.body.map((i: { id: string }) => i.id);
    expect(ids).toContain(inv.id);
    expect(ids).not.toContain(bobInv.id);
    expect(res.body.find((i: { id: string }) => i.id === inv.id)).toMatchObject({
      counterparty: "Northwind Traders",
      total_cents: 1234550,
      currency: "EUR",
      summary: null,
      version: 1,
    });
  });

  it("shows one invoice with lines, summary and the lease in flight; foreign, missing and malformed ids get the same 404", async () => {
    const { inv, bobInv, aliceCookie } = await world();
    const res = await api("GET", `/api/invoices/${inv.id}`, { cookie: aliceCookie });
    expect(res.status).toBe(200);
    expect(res.body.lines).toHaveLength(2);
    expect(res.body.lines[0]).toEqual({
      description: "Consulting, November",
      quantity: 10,
      unit_price_cents: 120000,
      amount_cents: 1200000,
      // No category until categorize_lines writes one (tests/integration/http/lease-changes.test.ts).
      category: null,
    });
    expect(res.body.lease).toBeNull();
    const opened = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    const again = await api("GET", `/api/invoices/${inv.id}`, { cookie: aliceCookie });
    expect(again.body.lease).toMatchObject({ lease_id: opened.body.lease_id, status: "open" });

    const refusals = await Promise.all(
      [bobInv.id, randomUUID(), "not-a-uuid", "1 or 1=1", "%00"].map((id) =>
        api("GET", `/api/invoices/${encodeURIComponent(id)}`, { cookie: aliceCookie }),
      ),
    );
    for (const r of refusals) expect(r).toMatchObject({ status: 404, body: { detail: "invoice_not_found" } });
  });

  it("PATCH edits allowed fields, increments the version, ignores owner fields", async () => {
    const { alice, bob, inv, aliceCookie } = await world();
    const res = await api("PATCH", `/api/invoices/${inv.id}`, {
      cookie: aliceCookie,
      json: { counterparty: "Northwind Traders GmbH", due_on: "2026-12-31", owner_id: bob.id, version: 99, summary: "hijack" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ counterparty: "Northwind Traders GmbH", due_on: "2026-12-31", version: 2, summary: null });
    const [row] = await t.db.select().from(invoice).where(eq(invoice.id, inv.id));
    expect(row).toMatchObject({ ownerId: alice.id, version: 2, summary: null });
  });

  it("PATCH refusals: 404 for foreign/missing/malformed, 422 for bad input, 409 for a stale expected_version; nothing written", async () => {
    const { inv, bobInv, aliceCookie } = await world();
    const before = await counts();
    for (const id of [bobInv.id, randomUUID(), "nope"]) {
      expect(await api("PATCH", `/api/invoices/${id}`, { cookie: aliceCookie, json: { counterparty: "X" } })).toMatchObject({
        status: 404,
        body: { detail: "invoice_not_found" },
      });
    }
    for (const opts of [
      { raw: "{" },
      { json: {} },
      { json: { counterparty: 5 } },
      { json: { counterparty: "" } },
      { json: { due_on: "31/12/2026" } },
      { json: { due_on: "2026-02-30" } },
      { json: { issued_on: "2026-12-01", due_on: "2026-11-01" } },
      { json: { due_on: "2020-01-01" } }, // before the stored issue date
      { json: { counterparty: "x".repeat(201) } },
    ]) {
      expect(await api("PATCH", `/api/invoices/${inv.id}`, { cookie: aliceCookie, ...opts })).toMatchObject({
        status: 422,
        body: { detail: "invalid_request" },
      });
    }
    expect(
      await api("PATCH", `/api/invoices/${inv.id}`, { cookie: aliceCookie, json: { counterparty: "Y", expected_version: 7 } }),
    ).toMatchObject({ status: 409, body: { detail: "invoice_changed" } });
    expect(await counts()).toEqual(before);
  });
});

describe("POST /api/leases", () => {
  it("opens a lease: 201 {lease_id, deadline_at, status:open}, and sends lease/opened with an id derived from the lease and the lease's run nonce", async () => {
    const { alice, bob, inv, aliceCookie } = await world();
    const res = await api("POST", "/api/leases", {
      cookie: aliceCookie,
      // Actor fields in the body are ignored: the actor is the session's.
      json: { invoice_id: inv.id, purpose: "summarize_invoice", actor_id: bob.id, user_id: bob.id },
      headers: { "x-actor-id": bob.id },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["deadline_at", "lease_id", "status"]);
    expect(res.body.status).toBe("open");
    const row = await leaseRow(res.body.lease_id);
    expect(row).toMatchObject({ actorId: alice.id, invoiceId: inv.id, purpose: "summarize_invoice", status: "open" });
    expect(new Date(res.body.deadline_at).getTime()).toBe(row!.deadlineAt.getTime());
    const sent = sink().events.filter((e) => e.name === "lease/opened" && e.id === `lease-opened-${res.body.lease_id}`);
    expect(sent).toEqual([
      { name: "lease/opened", id: `lease-opened-${res.body.lease_id}`, data: expect.any(Object), ts: expect.any(Number) },
    ]);
    // The nonce goes to Inngest only, sealed (docs/decisions/0049): the generation must hand it back to propose.
    expect(sent[0]!.data.runNonce).toMatchObject({ __ENCRYPTED__: true });
    expect(JSON.stringify(sent[0]!.data)).not.toContain(row!.runNonce);
    expect(await opened(sent[0]!.data)).toEqual({
      leaseId: res.body.lease_id,
      actorId: alice.id,
      invoiceId: inv.id,
      purpose: "summarize_invoice",
      runNonce: row!.runNonce,
    });
    expect(row!.runNonce).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(res.body)).not.toContain(row!.runNonce);
    const read = await api("GET", `/api/leases/${res.body.lease_id}`, { cookie: aliceCookie });
    expect(JSON.stringify(read.body)).not.toContain(row!.runNonce);
  });

  it("answers 200 with the same shape for the lease already in flight", async () => {
    const { inv, aliceCookie } = await world();
    const first = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    const second = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    expect(first.status).toBe(201);
    expect(second).toMatchObject({ status: 200, body: first.body });
  });

  it("the 200 for the lease already in flight carries its current status: proposed once proposed", async () => {
    const { inv, aliceCookie } = await world();
    const first = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    await proposeByHand(first.body.lease_id);
    const again = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    expect(again).toMatchObject({
      status: 200,
      body: { lease_id: first.body.lease_id, deadline_at: first.body.deadline_at, status: "proposed" },
    });
  });

  it("after the invoice changes hands, the new owner reads who holds the lease in flight (a name, nothing else of it), and POST /api/leases is 409 lease_in_flight naming them", async () => {
    const { alice, bob, inv, aliceCookie, bobCookie } = await world();
    const opened = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    const leaseId = opened.body.lease_id as string;
    await proposeByHand(leaseId, "Alice's private summary");
    // Hands change within a team: Bob joins Alice's organization first.
    await joinOrgOf(t.db, bob, alice);
    await t.db.update(invoice).set({ ownerId: bob.id }).where(eq(invoice.id, inv.id));

    const read = await api("GET", `/api/invoices/${inv.id}`, { cookie: bobCookie });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ lease: null, latest_lease: null, lease_held_by: { name: "Alice" } });
    expect(read.body.lease_held_by).toEqual({ name: "Alice" });

    const before = await counts();
    const refused = await api("POST", "/api/leases", { cookie: bobCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    expect(refused).toMatchObject({ status: 409, body: { detail: "lease_in_flight", held_by: { name: "Alice" } } });
    expect(refused.body).toEqual({ detail: "lease_in_flight", held_by: { name: "Alice" } });
    expect(await counts()).toEqual(before);
    for (const text of [JSON.stringify(read.body), JSON.stringify(refused.body)]) {
      for (const secret of [leaseId, alice.id, alice.email, "Alice's private summary", opened.body.deadline_at])
        expect(text).not.toContain(secret);
    }

    // Alice, a teammate now, still reads the invoice but may no longer summarize it (403: it is
    // visibly there); once her lease is closed, nobody else holds one.
    expect((await api("GET", `/api/invoices/${inv.id}`, { cookie: aliceCookie })).status).toBe(200);
    expect(
      await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } }),
    ).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    await t.db.update(inferenceLease).set({ status: "rejected", closedReason: "cancelled" }).where(eq(inferenceLease.id, leaseId));
    expect((await api("GET", `/api/invoices/${inv.id}`, { cookie: bobCookie })).body.lease_held_by).toBeNull();
    const mine = await api("POST", "/api/leases", { cookie: bobCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    expect(mine.status).toBe(201);
    expect((await api("GET", `/api/invoices/${inv.id}`, { cookie: bobCookie })).body).toMatchObject({
      lease: { lease_id: mine.body.lease_id },
      lease_held_by: null,
    });
  });

  it("refusals: 404 invoice_not_found (foreign, missing, malformed), 422 purpose_not_allowed / invalid_request; nothing written", async () => {
    const { inv, bobInv, aliceCookie } = await world();
    const before = await counts();
    for (const id of [bobInv.id, randomUUID(), "not-a-uuid"]) {
      expect(
        await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: id, purpose: "summarize_invoice" } }),
      ).toMatchObject({ status: 404, body: { detail: "invoice_not_found" } });
    }
    for (const purpose of ["delete_invoice", "SUMMARIZE_INVOICE", "", "summarize_invoice "]) {
      expect(await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose } })).toMatchObject({
        status: 422,
        body: { detail: "purpose_not_allowed" },
      });
    }
    for (const opts of [
      { raw: '{"invoice_id":' },
      { raw: "null" },
      { json: { invoice_id: 1, purpose: "summarize_invoice" } },
      { json: { invoice_id: inv.id, purpose: ["summarize_invoice"] } },
      { json: { invoice_id: inv.id } },
      { json: "summarize_invoice" },
    ]) {
      expect(await api("POST", "/api/leases", { cookie: aliceCookie, ...opts })).toMatchObject({
        status: 422,
        body: { detail: "invalid_request" },
      });
    }
    expect(await counts()).toEqual(before);
  });

  it("an oversized body is 413, never 500, and writes nothing", async () => {
    const { inv, aliceCookie } = await world();
    const before = await counts();
    const huge = JSON.stringify({ invoice_id: inv.id, purpose: "summarize_invoice", pad: "x".repeat(2_000_000) });
    expect(await api("POST", "/api/leases", { cookie: aliceCookie, raw: huge })).toMatchObject({
      status: 413,
      body: { detail: "payload_too_large" },
    });
    // A lying content-length header does not get around the limit either.
    expect(await api("POST", "/api/leases", { cookie: aliceCookie, raw: huge, headers: { "content-length": "10" } })).toMatchObject({
      status: 413,
    });
    expect(await api("POST", "/api/session", { raw: huge })).toMatchObject({ status: 413 });
    expect(await counts()).toEqual(before);
  });

  it("503 dispatch_failed when the event cannot be sent, and the lease is closed", async () => {
    const { inv, aliceCookie } = await world();
    sink().setFailing(true);
    const res = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    expect(res).toMatchObject({ status: 503, body: { detail: "dispatch_failed" } });
    const [row] = await t.db.select().from(inferenceLease).where(eq(inferenceLease.invoiceId, inv.id));
    expect(row).toMatchObject({ status: "rejected", closedReason: "dispatch_failed" });
    sink().setFailing(false);
    // The slot is free again: the next click opens a fresh lease.
    expect(
      (await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } })).status,
    ).toBe(201);
  });
});

describe("GET /api/leases/:id", () => {
  it("returns the lease with its timeline; foreign, missing and malformed ids get the same 404", async () => {
    const { inv, aliceCookie, bobCookie } = await world();
    const opened = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    const res = await api("GET", `/api/leases/${opened.body.lease_id}`, { cookie: aliceCookie });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      lease_id: opened.body.lease_id,
      invoice_id: inv.id,
      purpose: "summarize_invoice",
      status: "open",
      deadline_at: opened.body.deadline_at,
      proposal: null,
      events: [{ kind: "opened", at: expect.any(String), detail: expect.any(Object) }],
      events_before: null,
    });
    const notFound = { status: 404, body: { detail: "lease_not_found" } };
    expect(await api("GET", `/api/leases/${opened.body.lease_id}`, { cookie: bobCookie })).toMatchObject(notFound);
    expect(await api("GET", `/api/leases/${randomUUID()}`, { cookie: aliceCookie })).toMatchObject(notFound);
    expect(await api("GET", `/api/leases/zzz`, { cookie: aliceCookie })).toMatchObject(notFound);
  });

  it("reports a lease past its deadline as expired", async () => {
    const { inv, aliceCookie } = await world();
    const opened = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    await t.db
      .update(inferenceLease)
      .set({ deadlineAt: sql`now() - interval '1 second'` })
      .where(eq(inferenceLease.id, opened.body.lease_id));
    const res = await api("GET", `/api/leases/${opened.body.lease_id}`, { cookie: aliceCookie });
    expect(res.body.status).toBe("expired");
    expect(res.body.events.map((e: { kind: string }) => e.kind)).toEqual(["opened", "expired"]);
  });
});

describe("GET /api/leases/:id: the events of a long lease, a page at a time", () => {
  const N = LEASE_EVENTS_PAGE;
  /** A lease of Alice's with `refusals` apply refusals after its `opened` event, recorded as apply records them. */
  async function longLease(refusals: number) {
    const w = await world();
    const opened = await api("POST", "/api/leases", {
      cookie: w.aliceCookie,
      json: { invoice_id: w.inv.id, purpose: "summarize_invoice" },
    });
    const leaseId = opened.body.lease_id as string;
    await t.db.execute(sql`insert into lease_event (lease_id, kind, detail)
      select ${leaseId}, 'apply_refused', jsonb_build_object('code', 'lease_open', 'n', g) from generate_series(1, ${refusals}) g`);
    const all = (await rows.leaseEvents(t.db, leaseId)).map((e) => ({ kind: e.kind, detail: e.detail }));
    return { ...w, leaseId, all };
  }
  const page = (body: { events: { kind: string; detail: unknown }[] }) => body.events.map((e) => ({ kind: e.kind, detail: e.detail }));
  const withoutTimeline = ({ events: _e, events_before: _b, server_now: _n, ...lease }: Record<string, unknown>) => lease;

  it(`the latest ${N} events, oldest first, then each earlier page through events_before, to the first event`, async () => {
    const { leaseId, aliceCookie, all } = await longLease(2 * N + 10);
    expect(all).toHaveLength(2 * N + 11);

    const first = await api("GET", `/api/leases/${leaseId}`, { cookie: aliceCookie });
    expect(first.status).toBe(200);
    expect(page(first.body)).toEqual(all.slice(-N));
    expect(first.body.events_before).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]{22}$/));

    const second = await api("GET", `/api/leases/${leaseId}?events_before=${first.body.events_before}`, { cookie: aliceCookie });
    expect(second.status).toBe(200);
    expect(page(second.body)).toEqual(all.slice(-2 * N, -N));
    expect(withoutTimeline(second.body)).toEqual(withoutTimeline(first.body));

    const last = await api("GET", `/api/leases/${leaseId}?events_before=${second.body.events_before}`, { cookie: aliceCookie });
    expect(last.status).toBe(200);
    expect(page(last.body)).toEqual(all.slice(0, 11));
    expect(last.body.events[0].kind).toBe("opened");
    expect(last.body.events_before).toBeNull();

    // Before the first event there is nothing: an empty page, not an error.
    const before = await api("GET", `/api/leases/${leaseId}?events_before=${leases.sealEventsCursor(leaseId, 1)}`, { cookie: aliceCookie });
    expect(before).toMatchObject({ status: 200, body: { events: [], events_before: null } });
  });

  it("the read is bounded: its plan touches at most a page and one of the lease's events, on the first page and on an earlier one, however long the timeline", async () => {
    const { leaseId, alice, inv, aliceCookie } = await longLease(4 * N);
    // History as a real database has it: many closed leases of a few events each. With fresh
    // statistics the planner expects a handful of events a lease, which is when an unbounded
    // plan (read every event of the lease, then sort) looks cheapest.
    await t.db.execute(sql`with closed as (
        insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at)
        select ${alice.id}, ${inv.id}, 'summarize_invoice', 'applied', now() from generate_series(1, 2000) returning id)
      insert into lease_event (lease_id, kind) select c.id, k from closed c cross join unnest(array['opened', 'proposed', 'applied']) k`);
    await t.db.execute(sql`analyze`);
    /** Every scan of lease_event in an EXPLAIN (ANALYZE, FORMAT JSON), with the entries or rows it produced over all its loops. */
    const scans = (explained: unknown) => {
      const [row] = rowsOf<Record<string, unknown>>(explained);
      const plan = Object.values(row!)[0];
      const json = (typeof plan === "string" ? JSON.parse(plan) : plan) as { Plan: Record<string, unknown> }[];
      const found: { node: string; rows: number }[] = [];
      const walk = (node: Record<string, unknown>) => {
        if (node["Relation Name"] === "lease_event" || String(node["Index Name"] ?? "").startsWith("lease_event")) {
          found.push({ node: String(node["Node Type"]), rows: Number(node["Actual Rows"]) * Number(node["Actual Loops"]) });
        }
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk(json[0]!.Plan);
      return found;
    };
    // lease_event_page_start's own query as the function plans it: its body, under its settings, as a generic plan.
    const [fn] = rowsOf<{ prosrc: string; proconfig: string[] }>(
      await t.db.execute(sql`select prosrc, proconfig from pg_proc where proname = 'lease_event_page_start'`),
    );
    const first = await api("GET", `/api/leases/${leaseId}`, { cookie: aliceCookie });
    for (const before of [null, leases.openEventsCursor(leaseId, first.body.events_before) as number]) {
      const read = scans(
        await t.db.execute(sql`explain (analyze, format json) ${leases.leaseReadStatement(t.db, alice.id, leaseId, { before })}`),
      );
      const pageStart = await t.db.transaction(async (tx) => {
        for (const setting of fn!.proconfig) await tx.execute(sql.raw(`set local ${setting.replace("=", " = ")}`));
        await tx.execute(sql.raw("set local plan_cache_mode = force_generic_plan"));
        await tx.execute(sql.raw(`prepare page_start(uuid, bigint, integer) as ${fn!.prosrc}`));
        const explained = await tx.execute(
          sql.raw(`explain (analyze, format json) execute page_start('${leaseId}', ${before ?? "9223372036854775807"}, ${N})`),
        );
        await tx.execute(sql.raw("deallocate page_start"));
        return scans(explained);
      });
      for (const [what, found] of [
        ["read", read],
        ["page start", pageStart],
      ] as const) {
        expect(found.length, what).toBeGreaterThan(0);
        for (const scan of found) expect({ what, before, ...scan, bounded: scan.rows <= N + 1 }).toMatchObject({ bounded: true });
      }
    }
  });

  it(`exactly ${N} events: one page, nothing before it; one more and the oldest moves to the page before`, async () => {
    const { leaseId, aliceCookie, all } = await longLease(N - 1);
    const full = await api("GET", `/api/leases/${leaseId}`, { cookie: aliceCookie });
    expect(page(full.body)).toEqual(all);
    expect(full.body.events_before).toBeNull();

    await t.db.insert(leaseEvent).values({ leaseId, kind: "apply_refused", detail: { code: "lease_open" } });
    const over = await api("GET", `/api/leases/${leaseId}`, { cookie: aliceCookie });
    expect(over.body.events).toHaveLength(N);
    expect(over.body.events[0]).toEqual(full.body.events[1]);
    const earlier = await api("GET", `/api/leases/${leaseId}?events_before=${over.body.events_before}`, { cookie: aliceCookie });
    expect(earlier.body).toMatchObject({ events: [full.body.events[0]], events_before: null });
  });

  it("a cursor that is not one is 400 invalid_cursor and writes nothing, not even the expiry a read would record; another actor's lease is 404 with its own cursor", async () => {
    const { leaseId, aliceCookie, bobCookie } = await longLease(2 * N);
    const first = await api("GET", `/api/leases/${leaseId}`, { cookie: aliceCookie });
    const cursor = first.body.events_before as string;
    // Overdue: the next good read records `expired`; a refused one must not.
    await t.db
      .update(inferenceLease)
      .set({ deadlineAt: sql`now() - interval '1 second'` })
      .where(eq(inferenceLease.id, leaseId));
    const before = await counts();
    // As sent, query strings: empty, garbage, the event id a cursor stands for, the cursor altered,
    // cut or lengthened, a cursor sealed for no event (0), twice.
    const id = String(leases.openEventsCursor(leaseId, cursor));
    const altered = `${cursor[0] === "A" ? "B" : "A"}${cursor.slice(1)}`;
    const bad = ["", "abc", id, "0", "-1", "1e3", "%201", altered, cursor.slice(1), `${cursor}A`, leases.sealEventsCursor(leaseId, 0)].map(
      (v) => `events_before=${v}`,
    );
    bad.push(`events_before=${cursor}&events_before=${cursor}`);
    for (const query of bad) {
      const res = await api("GET", `/api/leases/${leaseId}?${query}`, { cookie: aliceCookie });
      expect({ query, status: res.status, body: res.body }).toEqual({ query, status: 400, body: { detail: "invalid_cursor" } });
    }
    expect(await counts()).toEqual(before);
    expect((await leaseRow(leaseId)).status).toBe("open");

    // Someone else's lease with its own cursor: the same 404 as without a cursor. A cursor on a
    // lease it was not sealed for is not a cursor there, decided without reading.
    expect(await api("GET", `/api/leases/${leaseId}?events_before=${cursor}`, { cookie: bobCookie })).toMatchObject({
      status: 404,
      body: { detail: "lease_not_found" },
    });
    expect(await api("GET", `/api/leases/${randomUUID()}?events_before=${cursor}`, { cookie: aliceCookie })).toMatchObject({
      status: 400,
      body: { detail: "invalid_cursor" },
    });
    // Not signed in outranks a bad cursor.
    expect(await api("GET", `/api/leases/${leaseId}?events_before=abc`)).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
    expect(await counts()).toEqual(before);

    // A good cursor on the overdue lease reads as any read does: expired first, on the page asked for.
    const earlier = await api("GET", `/api/leases/${leaseId}?events_before=${cursor}`, { cookie: aliceCookie });
    expect(earlier.status).toBe(200);
    expect(earlier.body.status).toBe("expired");
    expect(earlier.body.events).toHaveLength(N);
    expect(earlier.body.events.every((e: { kind: string }) => e.kind !== "expired")).toBe(true);
    const latest = await api("GET", `/api/leases/${leaseId}`, { cookie: aliceCookie });
    expect(latest.body.events.at(-1).kind).toBe("expired");
    expect(latest.body.events).toHaveLength(N);
  });
});

describe("events_before names no global counter (docs/decisions/0046)", () => {
  const N = LEASE_EVENTS_PAGE;
  /** A lease of `alice` on a new invoice of hers, with `refusals` apply refusals after its `opened` event. */
  async function leaseWith(alice: { id: string }, cookie: string, refusals: number) {
    const inv = await makeInvoice(t.db, alice.id);
    const opened = await api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    const leaseId = opened.body.lease_id as string;
    await t.db.execute(sql`insert into lease_event (lease_id, kind, detail)
      select ${leaseId}, 'apply_refused', jsonb_build_object('code', 'lease_open') from generate_series(1, ${refusals}) g`);
    return { inv, leaseId };
  }

  it("a cursor is sealed to its lease: one lease's cursor on another of the same actor is 400 invalid_cursor, as garbage is, and reads nothing", async () => {
    const { alice, aliceCookie } = await world();
    const a = await leaseWith(alice, aliceCookie, 2 * N);
    const b = await leaseWith(alice, aliceCookie, 2 * N);
    const cursorA = (await api("GET", `/api/leases/${a.leaseId}`, { cookie: aliceCookie })).body.events_before as string;
    expect((await api("GET", `/api/leases/${a.leaseId}?events_before=${cursorA}`, { cookie: aliceCookie })).body.events).toHaveLength(N);
    const before = await counts();
    expect(await api("GET", `/api/leases/${b.leaseId}?events_before=${cursorA}`, { cookie: aliceCookie })).toMatchObject({
      status: 400,
      body: { detail: "invalid_cursor" },
    });
    expect(await counts()).toEqual(before);
  });

  it("flooding one lease changes nothing in another lease's answers: cursors keep one form, and no answer names an event id", async () => {
    const { alice, aliceCookie } = await world();
    // Event ids far from every other number in an answer, so one that leaks is found by its digits.
    await t.db.execute(sql`select setval('lease_event_id_seq', greatest(987650000, (select coalesce(max(id), 0) from lease_event)))`);
    const b = await leaseWith(alice, aliceCookie, N + 5);
    const answers = async () => [
      await api("GET", `/api/leases/${b.leaseId}`, { cookie: aliceCookie }),
      await api("GET", `/api/invoices/${b.inv.id}`, { cookie: aliceCookie }),
    ];
    const [read1, invoice1] = await answers();
    const cursor1 = read1!.body.events_before as string;

    // Everyone else's events: a flood on lease A, then one more event on B.
    const a = await leaseWith(alice, aliceCookie, 0);
    for (let i = 0; i < 30; i++) await api("POST", `/api/leases/${a.leaseId}/apply`, { cookie: aliceCookie });
    await t.db.insert(leaseEvent).values({ leaseId: b.leaseId, kind: "apply_refused", detail: { code: "lease_open" } });
    const [read2, invoice2] = await answers();
    const cursor2 = read2!.body.events_before as string;
    const earlier = await api("GET", `/api/leases/${b.leaseId}?events_before=${cursor2}`, { cookie: aliceCookie });

    for (const cursor of [cursor1, cursor2]) expect(cursor).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(cursor2).not.toBe(cursor1);
    expect(invoice1!.body.latest_lease.events_before).toBe(cursor1);
    expect(invoice2!.body.latest_lease.events_before).toBe(cursor2);
    const ids = (await t.db.select({ id: leaseEvent.id }).from(leaseEvent).where(eq(leaseEvent.leaseId, b.leaseId))).map((e) =>
      String(e.id),
    );
    expect(ids[0]).toMatch(/^98765/);
    for (const res of [read1, invoice1, read2, invoice2, earlier]) {
      const text = JSON.stringify(res!.body);
      expect(text).not.toMatch(/98765\d{4}/);
      for (const id of ids) expect(text).not.toContain(id);
    }
  });
});

describe("POST /api/leases/:id/apply", () => {
  it("applies a proposed lease: 200, the summary on the invoice", async () => {
    const { inv, aliceCookie } = await world();
    const opened = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    await proposeByHand(opened.body.lease_id, "Northwind Traders: EUR 12,345.50 due 2026-12-01");
    const res = await api("POST", `/api/leases/${opened.body.lease_id}/apply`, { cookie: aliceCookie });
    expect(res).toMatchObject({ status: 200, body: { status: "applied", lease_id: opened.body.lease_id } });
    const detail = await api("GET", `/api/invoices/${inv.id}`, { cookie: aliceCookie });
    expect(detail.body).toMatchObject({
      summary: "Northwind Traders: EUR 12,345.50 due 2026-12-01",
      version: 2,
      lease: null,
      latest_lease: { status: "applied" },
    });
  });

  it("refusals: 404 for foreign/missing/malformed; 409 lease_open, lease_applied, lease_rejected, lease_expired, invoice_changed", async () => {
    const { alice, inv, aliceCookie, bobCookie } = await world();
    const open = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    const id = open.body.lease_id;
    const notFound = { status: 404, body: { detail: "lease_not_found" } };
    expect(await api("POST", `/api/leases/${id}/apply`, { cookie: bobCookie })).toMatchObject(notFound);
    expect(await api("POST", `/api/leases/${randomUUID()}/apply`, { cookie: aliceCookie })).toMatchObject(notFound);
    expect(await api("POST", `/api/leases/x'--/apply`, { cookie: aliceCookie })).toMatchObject(notFound);
    expect(await api("POST", `/api/leases/${id}/apply`, { cookie: aliceCookie })).toMatchObject({
      status: 409,
      body: { detail: "lease_open" },
    });

    await proposeByHand(id);
    expect((await api("POST", `/api/leases/${id}/apply`, { cookie: aliceCookie })).status).toBe(200);
    expect(await api("POST", `/api/leases/${id}/apply`, { cookie: aliceCookie })).toMatchObject({
      status: 409,
      body: { detail: "lease_applied" },
    });

    const inv2 = await makeInvoice(t.db, alice.id);
    const l2 = (await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv2.id, purpose: "summarize_invoice" } })).body
      .lease_id;
    await api("POST", `/api/leases/${l2}/cancel`, { cookie: aliceCookie });
    expect(await api("POST", `/api/leases/${l2}/apply`, { cookie: aliceCookie })).toMatchObject({
      status: 409,
      body: { detail: "lease_rejected" },
    });

    const inv3 = await makeInvoice(t.db, alice.id);
    const l3 = (await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv3.id, purpose: "summarize_invoice" } })).body
      .lease_id;
    await proposeByHand(l3);
    await t.db
      .update(inferenceLease)
      .set({ deadlineAt: sql`now() - interval '1 second'` })
      .where(eq(inferenceLease.id, l3));
    expect(await api("POST", `/api/leases/${l3}/apply`, { cookie: aliceCookie })).toMatchObject({
      status: 409,
      body: { detail: "lease_expired" },
    });
    expect((await leaseRow(l3))?.status).toBe("expired");

    const inv4 = await makeInvoice(t.db, alice.id);
    const l4 = (await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv4.id, purpose: "summarize_invoice" } })).body
      .lease_id;
    await proposeByHand(l4);
    expect(
      (await api("PATCH", `/api/invoices/${inv4.id}`, { cookie: aliceCookie, json: { counterparty: "Edited meanwhile" } })).status,
    ).toBe(200);
    expect(await api("POST", `/api/leases/${l4}/apply`, { cookie: aliceCookie })).toMatchObject({
      status: 409,
      body: { detail: "invoice_changed" },
    });
    expect(await leaseRow(l4)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });

    const summaries = await t.db.select({ id: invoice.id, summary: invoice.summary }).from(invoice).where(eq(invoice.ownerId, alice.id));
    expect(summaries.filter((s) => s.summary !== null).map((s) => s.id)).toEqual([inv.id]);
  });
});

describe("POST /api/leases/:id/apply: a proposal with no usable summary", () => {
  for (const [what, proposal] of [
    ["a blank summary", { summary: "   ", model: "test" }],
    ["a summary that is not text", { summary: 42 }],
    ["no summary at all", { model: "test" }],
  ] as const) {
    it(`${what}: 409 proposal_unusable, the lease closed as proposal_unusable with its own event, the invoice untouched`, async () => {
      const { inv, aliceCookie } = await world();
      const opened = await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
      const leaseId = opened.body.lease_id as string;
      // Any JSON at all, as a row seeded with the contract's columns may hold.
      await t.db
        .update(inferenceLease)
        .set({ status: "proposed", proposal: proposal as never })
        .where(eq(inferenceLease.id, leaseId));
      const before = await rows.invoiceRow(t.db, inv.id);

      expect(await api("POST", `/api/leases/${leaseId}/apply`, { cookie: aliceCookie })).toMatchObject({
        status: 409,
        body: { detail: "proposal_unusable" },
      });
      expect(await leaseRow(leaseId)).toMatchObject({ status: "rejected", closedReason: "proposal_unusable" });
      expect(await rows.eventKinds(t.db, leaseId)).toEqual(["opened", "proposal_unusable"]);
      expect(await rows.invoiceRow(t.db, inv.id)).toEqual(before);
      const read = await api("GET", `/api/leases/${leaseId}`, { cookie: aliceCookie });
      expect(read.body).toMatchObject({ status: "rejected", closed_reason: "proposal_unusable" });
      // Closed: a second apply finds it so.
      expect(await api("POST", `/api/leases/${leaseId}/apply`, { cookie: aliceCookie })).toMatchObject({
        status: 409,
        body: { detail: "lease_rejected" },
      });
    });
  }
});

describe("POST /api/leases/:id/cancel", () => {
  it("cancels open and proposed leases: 200 {status:rejected}, lease/closed sent; refusals 404 and 409 lease_not_cancelable", async () => {
    const { alice, inv, aliceCookie, bobCookie } = await world();
    const id = (await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } })).body
      .lease_id;
    expect(await api("POST", `/api/leases/${id}/cancel`, { cookie: bobCookie })).toMatchObject({
      status: 404,
      body: { detail: "lease_not_found" },
    });
    expect((await leaseRow(id))?.status).toBe("open");
    expect(await api("POST", `/api/leases/${id}/cancel`, { cookie: aliceCookie })).toMatchObject({
      status: 200,
      body: { status: "rejected", lease_id: id },
    });
    expect(sink().events).toContainEqual(expect.objectContaining({ name: "lease/closed", data: { leaseId: id, reason: "cancelled" } }));
    expect(await api("POST", `/api/leases/${id}/cancel`, { cookie: aliceCookie })).toMatchObject({
      status: 409,
      body: { detail: "lease_not_cancelable" },
    });

    const inv2 = await makeInvoice(t.db, alice.id);
    const proposed = (
      await api("POST", "/api/leases", { cookie: aliceCookie, json: { invoice_id: inv2.id, purpose: "summarize_invoice" } })
    ).body.lease_id;
    await proposeByHand(proposed);
    expect((await api("POST", `/api/leases/${proposed}/cancel`, { cookie: aliceCookie })).status).toBe(200);
    expect(await api("POST", `/api/leases/${randomUUID()}/cancel`, { cookie: aliceCookie })).toMatchObject({ status: 404 });
    expect(await api("POST", `/api/leases/garbage/cancel`, { cookie: aliceCookie })).toMatchObject({ status: 404 });
    const kinds = await t.db.select({ kind: leaseEvent.kind }).from(leaseEvent).where(eq(leaseEvent.leaseId, id)).orderBy(leaseEvent.id);
    expect(kinds.map((k) => k.kind)).toEqual(["opened", "cancelled", "cancel_refused"]);
  });
});

describe("sessions table", () => {
  it("a cookie naming a live session of another user does not authenticate", async () => {
    const { alice, bob } = await world();
    const [bobSession] = await t.db.select().from(appSession).where(eq(appSession.userId, bob.id));
    // Forge a cookie whose sid is bob's session but uid is alice: sealed with the real key.
    const { sealData } = await import("iron-session");
    const { sessionOptions } = await import("@/lib/sessions");
    const opts = sessionOptions();
    const sealed = await sealData({ sid: bobSession!.id, uid: alice.id }, { password: opts.password });
    expect((await api("GET", "/api/session", { cookie: `claimcheck_session=${sealed}` })).status).toBe(401);
  });
});
