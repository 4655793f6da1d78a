// Sessions under attack, through the real route handlers on a real database: cookies that do
// not unseal, sessions past their own expiry on the database clock.
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appSession, inferenceLease } from "@/db/schema";
import { openLease, type LeaseDispatch } from "@/lib/leases";
import { SESSION_TTL_SECONDS } from "@/lib/sessions";
import { api, signInCookie } from "../support/api";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

/** A real cookie's value, cut into iron's `*`-separated parts (the last carries `~2`). */
function parts(cookie: string): string[] {
  return cookie.slice("claimcheck_session=".length).split("*");
}

/** Cookies that do not unseal, each built from a real one. */
function tamperedCookies(cookie: string): Record<string, string> {
  const p = parts(cookie);
  const withPart = (i: number, value: string) => p.map((x, j) => (j === i ? value : x)).join("*");
  const flip = (s: string) => (s.startsWith("A") ? "B" : "A") + s.slice(1);
  return {
    "from the report": "Fe26.2*1*a*b*c*x*e*f",
    "bad MAC": withPart(7, flip(p[7]!)),
    "changed prefix": withPart(0, "Fe27.2"),
    "other prefix": withPart(0, "Xx26.2"),
    "non-numeric expiry": withPart(5, "soon"),
    "negative expiry": withPart(5, "-1"),
    "unknown key id": withPart(1, "9"),
    "empty key id": withPart(1, ""),
    "bad base64 in iv": withPart(3, "!!!"),
    "bad base64 in body": withPart(4, "%%%"),
    "too few parts": p.slice(0, 5).join("*"),
    "too many parts": [...p.slice(0, 7), "x", p[7]].join("*"),
    "odd version": p.join("*").replace(/~2$/, "~x"),
    garbage: "not-a-seal",
    "percent garbage": "%E0%A4%A",
    empty: "",
    huge: "Fe26.2*1*" + "A".repeat(7000),
  };
}

async function world() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  return { alice, inv, cookie: await signInCookie(alice.email) };
}

function clears(headers: Headers): boolean {
  return headers.getSetCookie().some((c) => /^claimcheck_session=;/.test(c) && /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c));
}

describe("a cookie that does not unseal", () => {
  it("is 401 not_signed_in on every authed route, and the answer clears it", async () => {
    const { inv, cookie } = await world();
    const routes = [
      ["GET", "/api/session"],
      ["DELETE", "/api/session"],
      ["GET", "/api/invoices"],
      ["GET", `/api/invoices/${inv.id}`],
      ["POST", "/api/leases"],
      ["GET", `/api/leases/${randomUUID()}`],
      ["POST", `/api/leases/${randomUUID()}/apply`],
      ["POST", `/api/leases/${randomUUID()}/cancel`],
    ] as const;
    for (const [name, value] of Object.entries(tamperedCookies(cookie))) {
      for (const [method, path] of routes) {
        const res = await api(method, path, {
          cookie: `claimcheck_session=${value}`,
          json: method === "GET" ? undefined : { invoice_id: inv.id, purpose: "summarize_invoice" },
        });
        expect({ name, method, path, status: res.status, body: res.body }).toEqual({ name, method, path, status: 401, body: { detail: "not_signed_in" } });
        expect({ name, path, clears: clears(res.headers) }).toEqual({ name, path, clears: true });
      }
    }
    // Nothing was written, and the real cookie still works.
    const [row] = await t.db.select({ leases: sql<number>`count(*)`.mapWith(Number) }).from(inferenceLease);
    expect(row!.leases).toBe(0);
    expect((await api("GET", "/api/session", { cookie })).status).toBe(200);
  });

  it("still lets the person sign in again over it", async () => {
    const { alice, cookie } = await world();
    const res = await api("POST", "/api/session", {
      cookie: `claimcheck_session=${tamperedCookies(cookie)["non-numeric expiry"]}`,
      json: { email: alice.email, password: "correct horse battery staple" },
    });
    expect(res.status).toBe(200);
  });
});

describe("a session past its own end on the database clock", () => {
  it("signing in sets the row's end to the cookie's lifetime after now(), on the database clock", async () => {
    const { alice } = await world();
    const [row] = await t.db
      .select({ seconds: sql<number>`extract(epoch from ${appSession.expiresAt} - ${appSession.createdAt})`.mapWith(Number) })
      .from(appSession)
      .where(eq(appSession.userId, alice.id));
    expect(row!.seconds).toBe(SESSION_TTL_SECONDS);
  });

  it("gets 401 and a cleared cookie although the cookie itself is still valid", async () => {
    const { alice, inv, cookie } = await world();
    expect((await api("GET", "/api/session", { cookie })).status).toBe(200);
    await t.db.update(appSession).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(appSession.userId, alice.id));
    for (const [method, path] of [["GET", "/api/session"], ["GET", "/api/invoices"], ["POST", "/api/leases"], ["DELETE", "/api/session"]] as const) {
      const res = await api(method, path, { cookie, json: method === "POST" ? { invoice_id: inv.id, purpose: "summarize_invoice" } : undefined });
      expect({ path, status: res.status, body: res.body, clears: clears(res.headers) }).toEqual({ path, status: 401, body: { detail: "not_signed_in" }, clears: true });
    }
  });

  it("opens no lease, even when the session ends between the actor check and the open", async () => {
    const { alice, inv } = await world();
    const [session] = await t.db.select({ id: appSession.id }).from(appSession).where(eq(appSession.userId, alice.id));
    await t.db.update(appSession).set({ expiresAt: sql`now()` }).where(eq(appSession.id, session!.id));
    const dispatched: string[] = [];
    const dispatch: LeaseDispatch = {
      async leaseOpened(lease) {
        dispatched.push(lease.id);
      },
      async leaseClosed() {},
    };
    const result = await openLease(t.db, { actorId: alice.id, sessionId: session!.id, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 90 }, dispatch);
    expect(result).toEqual({ ok: false, code: "not_signed_in" });
    expect(dispatched).toEqual([]);
  });
});
