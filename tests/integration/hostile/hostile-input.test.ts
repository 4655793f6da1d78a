// Hostile input through the real route handlers, on both databases: every input below once
// answered 500 (or was stored altered); each must be a clear 4xx that writes nothing. Then a
// property test throws arbitrary bodies at the same routes: never a 5xx, and a 4xx never
// writes.
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, signInCookie } from "../../support/api";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

/** Everything a request could have written, as one comparable value. */
async function snapshot() {
  const [row] = await t.db
    .select({
      invoices: sql<string>`(select string_agg(concat_ws(':', id, version, number, counterparty, issued_on, due_on, summary), ',' order by id) from invoice)`,
      leases: sql<number>`(select count(*) from inference_lease)`.mapWith(Number),
      events: sql<number>`(select count(*) from lease_event)`.mapWith(Number),
      sessions: sql<number>`(select count(*) from app_session)`.mapWith(Number),
    })
    .from(sql`(select 1) as one`);
  return row!;
}

async function world() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  return { alice, inv, cookie: await signInCookie(alice.email) };
}

const NUL = "\u0000";
const LONE_HIGH = "\ud800";
const LONE_LOW = "\udc00";

describe("hostile strings, dates and numbers are refused with 422 and write nothing", () => {
  it("PATCH /api/invoices/:id", async () => {
    const { inv, cookie } = await world();
    const bodies: unknown[] = [
      { counterparty: `Evil${NUL}Corp` },
      { number: `INV${NUL}` },
      { counterparty: NUL },
      { counterparty: `Evil ${LONE_HIGH} Corp` },
      { number: `INV-${LONE_LOW}` },
      { counterparty: `tail ${LONE_HIGH}` },
      { issued_on: "0000-01-01" },
      { due_on: "0000-12-31" },
      { due_on: "10000-01-01" },
      { due_on: "+10000-01-01" },
      { issued_on: "99999-12-31", due_on: "99999-12-31" },
      { due_on: "2026-02-30" },
      { due_on: "1899-12-31" },
      { due_on: "2200-01-01" },
      { counterparty: "Fine", expected_version: 2147483648 },
      { counterparty: "Fine", expected_version: 9007199254740991 },
      { counterparty: "Fine", expected_version: 1e300 },
    ];
    for (const json of bodies) {
      const before = await snapshot();
      const res = await api("PATCH", `/api/invoices/${inv.id}`, { cookie, json });
      expect({ json, status: res.status, body: res.body }).toEqual({ json, status: 422, body: { detail: "invalid_request" } });
      expect(await snapshot()).toEqual(before);
    }
  });

  it("a lone surrogate written as a JSON escape is refused, not stored as U+FFFD", async () => {
    const { inv, cookie } = await world();
    for (const raw of [`{"counterparty":"A\\ud800B"}`, `{"number":"\\udfff"}`, `{"counterparty":"\\udc00\\ud800"}`]) {
      const before = await snapshot();
      const res = await api("PATCH", `/api/invoices/${inv.id}`, { cookie, raw });
      expect({ raw, status: res.status }).toEqual({ raw, status: 422 });
      expect(await snapshot()).toEqual(before);
    }
    // A proper pair (an emoji) is ordinary text.
    const ok = await api("PATCH", `/api/invoices/${inv.id}`, { cookie, raw: `{"counterparty":"Caf\\u00e9 \\ud83d\\ude00"}` });
    expect(ok.status).toBe(200);
    expect(ok.body.counterparty).toBe("Café 😀");
  });

  it("the edge values themselves are accepted", async () => {
    const { inv, cookie } = await world();
    const res = await api("PATCH", `/api/invoices/${inv.id}`, {
      cookie,
      json: { issued_on: "1900-01-01", due_on: "2199-12-31", expected_version: inv.version },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ issued_on: "1900-01-01", due_on: "2199-12-31" });
  });

  it("POST /api/leases", async () => {
    const { inv, cookie } = await world();
    for (const json of [
      { invoice_id: `${inv.id}${NUL}`, purpose: "summarize_invoice" },
      { invoice_id: inv.id, purpose: `summarize_invoice${NUL}` },
      { invoice_id: inv.id, purpose: `summarize_invoice${LONE_HIGH}` },
      { invoice_id: LONE_LOW, purpose: "summarize_invoice" },
    ]) {
      const before = await snapshot();
      const res = await api("POST", "/api/leases", { cookie, json });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(await snapshot()).toEqual(before);
    }
  });

  it("POST /api/session with a NUL or a lone surrogate in the email", async () => {
    const alice = await makeUser(t.db, "Alice");
    for (const email of [`${alice.email}${NUL}`, `${NUL}`.repeat(4), `a${LONE_HIGH}@example.test`]) {
      const before = await snapshot();
      const res = await api("POST", "/api/session", { json: { email, password: PASSWORD } });
      expect({ email, status: res.status }).toEqual({ email, status: expect.toSatisfy((s: number) => s === 401 || s === 422) });
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(await snapshot()).toEqual(before);
    }
  });
});

// ---------------------------------------------------------------------------------------
// Property tests: arbitrary bodies, never a 5xx; a refusal writes nothing.

/** Strings biased towards what breaks databases: NULs, lone surrogates, odd dates and numbers. */
const nasty = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom("\u0000", "\ud800", "\udfff", "a", "é", "😀", "-", "0", "9") }),
  fc.constantFrom("", " ", "0000-01-01", "10000-01-01", "2026-02-30", "2026-11-30", "9999-12-31", "1900-01-01", "null"),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
);
const anyValue = fc.oneof(
  nasty,
  fc.integer(),
  fc.constantFrom(2147483647, 2147483648, -1, 0, 1e300, Number.MAX_SAFE_INTEGER, 0.5),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
);
const field = <K extends string>(...keys: K[]) => fc.constantFrom(...keys);

function bodyOf(keys: fc.Arbitrary<string>) {
  return fc.oneof(
    fc.dictionary(keys, anyValue, { maxKeys: 5 }),
    fc.jsonValue(),
  );
}

const RUNS = 60;

describe("property: arbitrary bodies never answer 5xx, and a 4xx writes nothing", () => {
  it("PATCH /api/invoices/:id", async () => {
    const { inv, cookie } = await world();
    const name = fc.oneof(nasty, fc.constantFrom("Northwind", " Contoso "));
    const day = fc.oneof(nasty, fc.constantFrom("2026-11-01", "2026-12-31"));
    const version = fc.oneof(anyValue, fc.integer({ min: 1, max: 3 }), fc.integer({ min: 2147483640, max: 2147483660 }));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          bodyOf(field("number", "counterparty", "issued_on", "due_on", "expected_version", "summary", "owner_id")),
          fc.record({ number: name, counterparty: name, issued_on: day, due_on: day, expected_version: version }, { requiredKeys: [] }),
        ),
        async (json) => {
          const before = await snapshot();
          const res = await api("PATCH", `/api/invoices/${inv.id}`, { cookie, json });
          expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
          if (res.status >= 400) expect(await snapshot()).toEqual(before);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("POST /api/leases", async () => {
    const { inv, cookie } = await world();
    const ids = fc.oneof(nasty, fc.constant(inv.id), fc.uuid());
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          bodyOf(field("invoice_id", "purpose", "actor_id")),
          fc.record({ invoice_id: ids, purpose: fc.oneof(nasty, fc.constant("summarize_invoice")) }),
        ),
        async (json) => {
          const before = await snapshot();
          const res = await api("POST", "/api/leases", { cookie, json });
          expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
          if (res.status >= 400) expect(await snapshot()).toEqual(before);
          // Close whatever opened, so the next run may open again.
          if (res.status === 201) await api("POST", `/api/leases/${res.body.lease_id}/cancel`, { cookie });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("POST /api/session", async () => {
    const alice = await makeUser(t.db, "Alice");
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          bodyOf(field("email", "password")),
          fc.record({ email: fc.oneof(nasty, fc.constant(alice.email), nasty.map((s) => alice.email + s)), password: fc.oneof(nasty, fc.constant("wrong")) }),
        ),
        async (json) => {
          const before = await snapshot();
          const res = await api("POST", "/api/session", { json });
          expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
          if (res.status >= 400) expect(await snapshot()).toEqual(before);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
