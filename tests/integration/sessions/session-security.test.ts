// Sessions under attack, through the real route handlers on a real database: cookies that do
// not unseal, sessions past their own expiry on the database clock, guessed passwords.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { sealData } from "iron-session";
import type { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDb, type Db } from "@/db/client";
import * as schema from "@/db/schema";
import { appSession, inferenceLease, rateLimit } from "@/db/schema";
import { openLease, type LeaseDispatch } from "@/lib/leases";
import { admitSignIn, clientAddress, SIGN_IN_LIMITS } from "@/lib/rate-limit";
import { DEVICE_COOKIE } from "@/lib/device-cookie";
import { attemptSignIn, SESSION_TTL_SECONDS } from "@/lib/sessions";
import { api, cookieFrom, signInCookie } from "../../support/api";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

/** A real session cookie's value, cut into iron's `*`-separated parts (the last carries `~2`). */
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
      ["PATCH", `/api/invoices/${inv.id}`],
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
      json: { email: alice.email, password: PASSWORD },
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

describe("sign-in attempt limits", () => {
  const { points: EMAIL_POINTS, blockDuration: EMAIL_BLOCK } = SIGN_IN_LIMITS.email;
  const signInAs = (email: string, password: string, headers?: Record<string, string>) =>
    api("POST", "/api/session", { json: { email, password }, headers });

  async function failUntilLimited(email: string, headers?: Record<string, string>) {
    for (let i = 0; i < EMAIL_POINTS; i++) {
      const res = await signInAs(email, `wrong-${i}`, headers);
      expect({ attempt: i + 1, status: res.status, body: res.body }).toEqual({ attempt: i + 1, status: 401, body: { detail: "invalid_credentials" } });
    }
  }

  function expectLimited(res: Awaited<ReturnType<typeof api>>, maxSeconds: number) {
    expect(res).toMatchObject({ status: 429, body: { detail: "too_many_attempts" } });
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
    expect(res.headers.getSetCookie()).toEqual([]);
  }

  it(`answers 429 with Retry-After after ${SIGN_IN_LIMITS.email.points} wrong passwords, refuses even the right one until the block ends, and leaves other users alone`, async () => {
    const alice = await makeUser(t.db, "Alice");
    const bob = await makeUser(t.db, "Bob");
    await failUntilLimited(alice.email);
    expectLimited(await signInAs(alice.email, "wrong-again"), EMAIL_BLOCK);
    expectLimited(await signInAs(alice.email, PASSWORD), EMAIL_BLOCK);
    expectLimited(await signInAs(` ${alice.email.toUpperCase()} `, PASSWORD), EMAIL_BLOCK);
    expect((await signInAs(bob.email, PASSWORD)).status).toBe(200);
    // When the block has run out (moved into the past here), the right password works again.
    await t.db.update(rateLimit).set({ expire: sql`now() - interval '1 second'` });
    expect((await signInAs(alice.email, PASSWORD)).status).toBe(200);
  });

  it("answers an unknown email exactly as a known one", async () => {
    const nobody = `nobody-${randomUUID().slice(0, 8)}@example.test`;
    await failUntilLimited(nobody);
    expectLimited(await signInAs(nobody, PASSWORD), EMAIL_BLOCK);
  });

  it("counts failures only: a successful sign-in clears the email's count", async () => {
    const alice = await makeUser(t.db, "Alice");
    for (let i = 0; i < EMAIL_POINTS - 1; i++) expect((await signInAs(alice.email, "wrong")).status).toBe(401);
    expect((await signInAs(alice.email, PASSWORD)).status).toBe(200);
    await failUntilLimited(alice.email);
    expect((await signInAs(alice.email, PASSWORD)).status).toBe(429);
  });

  it("holds against a parallel burst: exactly the budget is checked, the rest refused", async () => {
    const alice = await makeUser(t.db, "Alice");
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => signInAs(alice.email, `wrong-${i}`)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(EMAIL_POINTS);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30 - EMAIL_POINTS);
  });

  it("keeps its counters in the database: a second app instance (another handle) sees the block; no email is stored in clear", async () => {
    const alice = await makeUser(t.db, "Alice");
    await failUntilLimited(alice.email);
    const other = await secondHandle();
    try {
      const gate = await admitSignIn(other.db, { email: alice.email, address: null });
      expect(gate.ok).toBe(false);
      const refused = await attemptSignIn(other.db, { email: alice.email, password: PASSWORD, address: null });
      expect(refused).toMatchObject({ ok: false, code: "too_many_attempts" });
    } finally {
      await other.close();
    }
    const keys = (await t.db.select({ key: rateLimit.key }).from(rateLimit)).map((r) => r.key);
    expect(keys.some((k) => k.includes("@"))).toBe(false);
  });

  it("limits a client address across emails when TRUST_PROXY names the proxy, and leaves other addresses alone", async () => {
    const previous = process.env.TRUST_PROXY;
    process.env.TRUST_PROXY = "1";
    try {
      const { points, blockDuration } = SIGN_IN_LIMITS.address;
      const alice = await makeUser(t.db, "Alice");
      // The client forged an entry of its own; the proxy appended the address it saw.
      const from = (ip: string) => ({ "x-forwarded-for": `6.6.6.6, ${ip}` });
      for (let i = 0; i < points; i++) {
        const res = await signInAs(`spray-${i}-${randomUUID().slice(0, 6)}@example.test`, "guess", from("203.0.113.7"));
        expect({ attempt: i + 1, status: res.status }).toEqual({ attempt: i + 1, status: 401 });
      }
      expectLimited(await signInAs(alice.email, PASSWORD, from("203.0.113.7")), blockDuration);
      expect((await signInAs(alice.email, PASSWORD, from("198.51.100.9"))).status).toBe(200);
      // The address's refusals did not count against alice's email.
      const aliceKey = `sign_in_email:${createHash("sha256").update(alice.email).digest("hex")}`;
      expect(await t.db.select().from(rateLimit).where(eq(rateLimit.key, aliceKey))).toEqual([]);
    } finally {
      if (previous === undefined) delete process.env.TRUST_PROXY;
      else process.env.TRUST_PROXY = previous;
    }
  });

  it("trusts no X-Forwarded-For by default: rotating it does not escape the email limit", async () => {
    expect(process.env.TRUST_PROXY ?? "").toBe("");
    const alice = await makeUser(t.db, "Alice");
    for (let i = 0; i < EMAIL_POINTS; i++) expect((await signInAs(alice.email, "wrong", { "x-forwarded-for": `10.0.0.${i}` })).status).toBe(401);
    expectLimited(await signInAs(alice.email, PASSWORD, { "x-forwarded-for": "10.9.9.9" }), EMAIL_BLOCK);
  });
});

describe("device cookies: a browser that signed in as the user before is not locked out by someone else's guesses", () => {
  const { points: EMAIL_POINTS } = SIGN_IN_LIMITS.email;
  const { points: DEVICE_POINTS } = SIGN_IN_LIMITS.device;
  const signInAs = (email: string, password: string, cookie?: string) => api("POST", "/api/session", { json: { email, password }, cookie });
  const deviceOf = (res: Awaited<ReturnType<typeof api>>) => {
    const set = res.headers.getSetCookie().find((c) => c.startsWith(`${DEVICE_COOKIE}=`));
    return set?.split(";")[0];
  };
  /** Signs in as `email` on a browser that already holds `device` (or a fresh one), and returns its device cookie. */
  async function signedInBrowser(email: string, device?: string): Promise<string> {
    const res = await signInAs(email, PASSWORD, device);
    expect(res.status).toBe(200);
    const cookie = deviceOf(res);
    expect(cookie, "a successful sign-in sets a device cookie").toMatch(new RegExp(`^${DEVICE_COOKIE}=Fe26\\.2\\*`));
    return cookie!;
  }
  async function strangerLocksOut(email: string) {
    for (let i = 0; i < EMAIL_POINTS; i++) expect((await signInAs(email, `guess-${i}`)).status).toBe(401);
    expect((await signInAs(email, PASSWORD)).status).toBe(429);
  }

  it(`after ${EMAIL_POINTS} wrong passwords from a stranger, bob's right password gets in from his browser (200) and is still 429 from a fresh one`, async () => {
    const bob = await makeUser(t.db, "Bob");
    const device = await signedInBrowser(bob.email);
    await strangerLocksOut(bob.email);

    const res = await signInAs(bob.email, PASSWORD, device);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { actor: { id: bob.id, email: bob.email, name: "Bob" } } });
    expect((await api("GET", "/api/session", { cookie: cookieFrom(res.headers) })).status).toBe(200);
    // Each success writes a fresh token for the browser.
    expect(deviceOf(res)).toBeDefined();
    expect(deviceOf(res)).not.toBe(device);

    const fresh = await signInAs(bob.email, PASSWORD);
    expect({ status: fresh.status, body: fresh.body }).toEqual({ status: 429, body: { detail: "too_many_attempts" } });
    expect(fresh.headers.getSetCookie()).toEqual([]);
    // The browser's success did not clear the stranger's block for everyone else.
    expect((await signInAs(bob.email, PASSWORD)).status).toBe(429);
  });

  it(`a device token has its own limit: ${DEVICE_POINTS} wrong passwords in a row and it exempts nothing any more`, async () => {
    const bob = await makeUser(t.db, "Bob");
    const device = await signedInBrowser(bob.email);
    await strangerLocksOut(bob.email);
    for (let i = 0; i < DEVICE_POINTS; i++) {
      const res = await signInAs(bob.email, `typo-${i}`, device);
      expect({ attempt: i + 1, status: res.status }).toEqual({ attempt: i + 1, status: 401 });
    }
    // Spent: the browser is now one like any other, and the email is locked.
    const spent = await signInAs(bob.email, PASSWORD, device);
    expect({ status: spent.status, body: spent.body }).toEqual({ status: 429, body: { detail: "too_many_attempts" } });
    expect(spent.headers.getSetCookie()).toEqual([]);
  });

  it("a token's wrong passwords count on the token, not on the email; a success clears the token's count", async () => {
    const alice = await makeUser(t.db, "Alice");
    const device = await signedInBrowser(alice.email);
    for (let i = 0; i < DEVICE_POINTS - 1; i++) expect((await signInAs(alice.email, "typo", device)).status).toBe(401);
    const again = await signedInBrowser(alice.email, device);
    for (let i = 0; i < DEVICE_POINTS - 1; i++) expect((await signInAs(alice.email, "typo", again)).status).toBe(401);
    expect((await signInAs(alice.email, PASSWORD, again)).status).toBe(200);
    // The email's whole budget is still there for other browsers.
    await strangerLocksOut(alice.email);
  });

  it("a forged, tampered or another user's device cookie exempts nobody", async () => {
    const alice = await makeUser(t.db, "Alice");
    const bob = await makeUser(t.db, "Bob");
    const alices = await signedInBrowser(alice.email);
    const bobs = await signedInBrowser(bob.email);
    const sessionSeal = cookieFrom((await signInAs(bob.email, PASSWORD)).headers)
      .split("; ")
      .find((c) => c.startsWith("claimcheck_session="))!
      .slice("claimcheck_session=".length);
    await strangerLocksOut(bob.email);
    const bobKey = createHash("sha256").update(bob.email).digest("hex");
    const value = bobs.slice(DEVICE_COOKIE.length + 1);
    const flip = (s: string) => (s.startsWith("A") ? "B" : "A") + s.slice(1);
    const p = value.split("*");
    const forged = {
      "alice's, for bob's email": alices.slice(DEVICE_COOKIE.length + 1),
      "bob's with its MAC changed": p.map((x, i) => (i === 7 ? flip(x) : x)).join("*"),
      "bob's with its body changed": p.map((x, i) => (i === 4 ? flip(x) : x)).join("*"),
      "sealed with another key": await sealData(
        { tokens: [{ user: bobKey, token: randomBytes(16).toString("hex") }] },
        { password: "not-the-app-key-but-32-characters-long-at-least", ttl: 3600 },
      ),
      "bob's session seal": sessionSeal,
      "plain json": JSON.stringify({ tokens: [{ user: bobKey, token: "0".repeat(32) }] }),
      garbage: "Fe26.2*1*a*b*c*x*e*f",
    };
    for (const [name, seal] of Object.entries(forged)) {
      const res = await signInAs(bob.email, PASSWORD, `${DEVICE_COOKIE}=${seal}`);
      expect({ name, status: res.status, body: res.body }).toEqual({ name, status: 429, body: { detail: "too_many_attempts" } });
    }
    expect((await signInAs(bob.email, PASSWORD, bobs)).status).toBe(200);
  });

  it("one browser keeps a token for each user who signed in on it", async () => {
    const alice = await makeUser(t.db, "Alice");
    const bob = await makeUser(t.db, "Bob");
    const shared = await signedInBrowser(bob.email, await signedInBrowser(alice.email));
    await strangerLocksOut(alice.email);
    await strangerLocksOut(bob.email);
    expect((await signInAs(alice.email, PASSWORD, shared)).status).toBe(200);
    expect((await signInAs(bob.email, PASSWORD, shared)).status).toBe(200);
  });
});

describe("clientAddress", () => {
  const h = (xff?: string) => new Headers(xff === undefined ? {} : { "x-forwarded-for": xff });
  it("takes the entry TRUST_PROXY places from the right, and nothing without a trusted proxy", () => {
    expect(clientAddress(h("1.1.1.1, 2.2.2.2, 3.3.3.3"), {})).toBeNull();
    expect(clientAddress(h("1.1.1.1, 2.2.2.2, 3.3.3.3"), { TRUST_PROXY: "0" })).toBeNull();
    expect(clientAddress(h("1.1.1.1, 2.2.2.2, 3.3.3.3"), { TRUST_PROXY: "1" })).toBe("3.3.3.3");
    expect(clientAddress(h("1.1.1.1, 2.2.2.2, 3.3.3.3"), { TRUST_PROXY: "2" })).toBe("2.2.2.2");
    expect(clientAddress(h("3.3.3.3"), { TRUST_PROXY: "2" })).toBeNull();
    expect(clientAddress(h(), { TRUST_PROXY: "1" })).toBeNull();
    expect(() => clientAddress(h("1.1.1.1"), { TRUST_PROXY: "yes" })).toThrow(/TRUST_PROXY/);
  });
});

/** Another handle on the same database, as a second app instance would have. */
async function secondHandle(): Promise<{ db: Db; close(): Promise<void> }> {
  if (inject("dbKind") === "postgres") {
    const url = new URL(inject("pgAdminUrl"));
    url.pathname = `/${t.name}`;
    return openDb({ kind: "postgres", url: url.toString(), max: 2 });
  }
  // One in-memory PGlite per process: a second drizzle instance over it, with limiters of its own.
  const { drizzle } = await import("drizzle-orm/pglite");
  const client = (t.db as unknown as { $client: PGlite }).$client;
  return { db: drizzle(client, { schema }) as unknown as Db, close: async () => {} };
}
