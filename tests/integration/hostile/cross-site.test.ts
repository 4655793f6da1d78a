// Cross-site writes (docs/contract.md, "Cross-site writes"): every state-changing route
// refuses a foreign Origin with 403 cross_origin and a non-JSON body with 415
// unsupported_media_type, before reading the session or the body, and writes nothing; JSON
// from our own origin or from no origin at all (curl) still works, and so do bodiless POSTs.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, signInCookie, sink } from "../../support/api";
import * as rows from "../../support/db";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

const OURS = "http://127.0.0.1:3000"; // the origin of the URLs that tests/support/api.ts builds
const EVIL = "http://evil.example";

/** Everything a write could touch, as one comparable value. */
async function snapshot() {
  const [row] = await t.db
    .select({
      leases: sql<string>`(select coalesce(string_agg(id::text || ':' || status, ',' order by id), '') from inference_lease)`,
      events: sql<number>`(select count(*) from lease_event)`.mapWith(Number),
      invoices: sql<string>`(select string_agg(id::text || ':' || version || ':' || counterparty || ':' || coalesce(summary, ''), ',' order by id) from invoice)`,
      sessions: sql<string>`(select coalesce(string_agg(id::text || ':' || coalesce(revoked_at::text, '-'), ',' order by id), '') from app_session)`,
      counters: sql<number>`(select count(*) from rate_limit)`.mapWith(Number),
    })
    .from(sql`(select 1) as one`);
  return { ...row!, dispatched: sink().events.length };
}

async function world() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  const cookie = await signInCookie(alice.email);
  const open = await api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
  expect(open.status).toBe(201);
  const leaseId: string = open.body.lease_id;
  await t.db.execute(sql`update inference_lease set status = 'proposed', proposal = '{"summary":"Proposed","model":"test"}' where id = ${leaseId}`);
  const other = await makeInvoice(t.db, alice.id); // no lease yet: for "open a lease"
  return { alice, inv, other, cookie, leaseId };
}

type W = Awaited<ReturnType<typeof world>>;
type Write = { name: string; method: string; path: (w: W) => string; json?: (w: W) => unknown; signedIn: boolean };

// Each state-changing route, with the JSON a real client would send.
const WRITES: Write[] = [
  { name: "open lease", method: "POST", path: () => "/api/leases", json: (w) => ({ invoice_id: w.other.id, purpose: "summarize_invoice" }), signedIn: true },
  { name: "cancel", method: "POST", path: (w) => `/api/leases/${w.leaseId}/cancel`, signedIn: true },
  { name: "apply", method: "POST", path: (w) => `/api/leases/${w.leaseId}/apply`, signedIn: true },
  { name: "PATCH invoice", method: "PATCH", path: (w) => `/api/invoices/${w.inv.id}`, json: () => ({ counterparty: "Mallory Ltd" }), signedIn: true },
  { name: "sign-in", method: "POST", path: () => "/api/session", json: (w) => ({ email: w.alice.email, password: PASSWORD }), signedIn: false },
  { name: "sign-out", method: "DELETE", path: () => "/api/session", signedIn: true },
];

const form = (w: W, write: Write) => new URLSearchParams(Object.entries((write.json?.(w) ?? { a: "1" }) as Record<string, string>)).toString();
const BOUNDARY = "----cc-test-boundary";
const multipart = (w: W, write: Write) =>
  Object.entries((write.json?.(w) ?? { a: "1" }) as Record<string, string>)
    .map(([k, v]) => `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join("") + `--${BOUNDARY}--\r\n`;

describe("a foreign Origin gets 403 cross_origin and nothing is written", () => {
  for (const write of WRITES) {
    it(write.name, async () => {
      const w = await world();
      const before = await snapshot();
      for (const headers of <Record<string, string>[]>[
        { origin: EVIL },
        { origin: "null" }, // a sandboxed frame or a data: page
        { origin: "https://127.0.0.1:3000.evil.example" },
        // The host we are reached by with a forged X-Forwarded-Host that matches the attacker: never trusted.
        { origin: EVIL, host: "127.0.0.1:3000", "x-forwarded-host": "evil.example" },
      ]) {
        const body = write.json?.(w);
        const res = await api(write.method, write.path(w), {
          cookie: write.signedIn ? w.cookie : undefined,
          json: body,
          headers,
        });
        expect(res, JSON.stringify(headers)).toMatchObject({ status: 403, body: { detail: "cross_origin" } });
        expect(res.headers.getSetCookie()).toEqual([]);
      }
      // Also with the simple content types a cross-site form sends.
      const res = await api(write.method, write.path(w), {
        cookie: write.signedIn ? w.cookie : undefined,
        raw: form(w, write),
        headers: { origin: EVIL, "content-type": "application/x-www-form-urlencoded" },
      });
      expect(res).toMatchObject({ status: 403, body: { detail: "cross_origin" } });
      expect(await snapshot()).toEqual(before);
      // The session still stands after a refused sign-out.
      expect((await api("GET", "/api/session", { cookie: w.cookie })).status).toBe(200);
    });
  }
});

describe("a body that is not JSON gets 415 unsupported_media_type and nothing is written", () => {
  for (const write of WRITES) {
    it(write.name, async () => {
      const w = await world();
      const before = await snapshot();
      const json = JSON.stringify(write.json?.(w) ?? {});
      const bodies: { raw: string; headers: Record<string, string> }[] = [
        // JSON text under a simple content type: what a cross-site fetch(no-cors) can send.
        { raw: json, headers: { "content-type": "text/plain" } },
        { raw: json, headers: { "content-type": "text/plain;charset=UTF-8" } },
        { raw: form(w, write), headers: { "content-type": "application/x-www-form-urlencoded" } },
        { raw: multipart(w, write), headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` } },
        // A declared non-JSON type on an empty body is refused too: it is how a form posts.
        { raw: "", headers: { "content-type": "application/x-www-form-urlencoded" } },
        { raw: "", headers: { "content-type": "text/plain" } },
      ];
      for (const { raw, headers } of bodies) {
        for (const origin of [undefined, OURS]) {
          const res = await api(write.method, write.path(w), {
            cookie: write.signedIn ? w.cookie : undefined,
            raw,
            headers: origin ? { ...headers, origin } : headers,
          });
          expect(res, `${headers["content-type"]} ${raw.slice(0, 40)}`).toMatchObject({ status: 415, body: { detail: "unsupported_media_type" } });
        }
      }
      expect(await snapshot()).toEqual(before);
    });
  }

  it("a body without any content type is refused, whether its length is declared or not", async () => {
    const w = await world();
    const before = await snapshot();
    const json = JSON.stringify({ counterparty: "Mallory Ltd" });
    const mod = await import("@/app/api/invoices/[id]/route");
    for (const headers of [{ "content-length": String(json.length) }, {}]) {
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(json));
          c.close();
        },
      });
      const req = new Request(`${OURS}/api/invoices/${w.inv.id}`, { method: "PATCH", headers: { cookie: w.cookie, ...headers }, body: stream, duplex: "half" } as RequestInit);
      expect(req.headers.get("content-type")).toBeNull();
      const res = await mod.PATCH(req, { params: Promise.resolve({ id: w.inv.id }) });
      expect(res.status, JSON.stringify(headers)).toBe(415);
      expect(await res.json()).toEqual({ detail: "unsupported_media_type" });
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe("our own origin, or none, still works", () => {
  it("JSON with our Origin, with no Origin, and with a Host that names us", async () => {
    const w = await world();
    for (const headers of <Record<string, string>[]>[{ origin: OURS }, {}, { origin: "http://app.example:8080", host: "app.example:8080" }]) {
      const opened = await api("POST", "/api/leases", { cookie: w.cookie, json: { invoice_id: w.other.id, purpose: "summarize_invoice" }, headers });
      expect(opened.status, JSON.stringify(headers)).toBeLessThan(300);
      const patched = await api("PATCH", `/api/invoices/${w.inv.id}`, { cookie: w.cookie, json: { due_on: "2026-12-31" }, headers });
      expect(patched.status).toBe(200);
    }
    const signIn = await api("POST", "/api/session", { json: { email: w.alice.email, password: PASSWORD }, headers: { origin: OURS, "content-type": "application/json; charset=utf-8" } });
    expect(signIn.status).toBe(200);
    expect(signIn.headers.getSetCookie().map((c) => c.split("=")[0])).toEqual(["claimcheck_session", "claimcheck_device"]);
  });

  it("curl-style bodiless apply, cancel and sign-out need no content type", async () => {
    const w = await world();
    const applied = await api("POST", `/api/leases/${w.leaseId}/apply`, { cookie: w.cookie });
    expect(applied).toMatchObject({ status: 200, body: { status: "applied", lease_id: w.leaseId } });
    expect((await rows.invoiceRow(t.db, w.inv.id)).summary).toBe("Proposed");

    const opened = await api("POST", "/api/leases", { cookie: w.cookie, json: { invoice_id: w.other.id, purpose: "summarize_invoice" }, headers: { origin: OURS } });
    const canceled = await api("POST", `/api/leases/${opened.body.lease_id}/cancel`, { cookie: w.cookie, headers: { origin: OURS } });
    expect(canceled).toMatchObject({ status: 200, body: { status: "rejected" } });

    const out = await api("DELETE", "/api/session", { cookie: w.cookie });
    expect(out).toMatchObject({ status: 200, body: { status: "signed_out" } });
  });

  it("a bodiless POST that declares JSON is fine too (fetch with headers only)", async () => {
    const w = await world();
    const res = await api("POST", `/api/leases/${w.leaseId}/cancel`, { cookie: w.cookie, headers: { origin: OURS, "content-type": "application/json" } });
    expect(res).toMatchObject({ status: 200, body: { status: "rejected" } });
  });

  it("reads are not affected by a foreign Origin (CORS keeps their answers from the other site)", async () => {
    const w = await world();
    expect((await api("GET", "/api/invoices", { cookie: w.cookie, headers: { origin: EVIL } })).status).toBe(200);
  });
});
