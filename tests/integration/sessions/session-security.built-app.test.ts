// Sessions under attack against the built app (`next start`), on PostgreSQL: pages answer a
// cookie that does not unseal with a way to sign in (never a 500), and the sign-in limits
// hold inside the production bundle and across two app instances sharing one database.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SIGN_IN_LIMITS } from "@/lib/rate-limit";
import { startAppServer, type AppServer } from "../../harness/app-server";
import { makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

if (inject("dbKind") !== "postgres") {
  throw new Error("session-security.built-app.test.ts needs PostgreSQL: set DATABASE_URL.");
}

const BOOT_TIMEOUT = 300_000;
let t: TestDb;
let one: AppServer;
let two: AppServer;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  const env = { SESSION_COOKIE_SECURE: "false" };
  one = await startAppServer({ databaseUrl: url.toString(), name: "one", env });
  two = await startAppServer({ databaseUrl: url.toString(), name: "two", env });
}, BOOT_TIMEOUT);
afterAll(async () => {
  await one?.stop();
  await two?.stop();
  await t?.close();
});

const TAMPERED = ["Fe26.2*1*a*b*c*x*e*f", "Fe27.2*1*a*b*c*1797256854172*e*f~2", "Fe26.2*1*a*b*c*soon*e*f~2", "garbage", "A".repeat(3000)];

const get = (app: AppServer, path: string, cookie?: string) =>
  fetch(`${app.url}${path}`, { redirect: "manual", headers: cookie ? { cookie } : {} });

async function signIn(app: AppServer, email: string, password: string) {
  return fetch(`${app.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
}

describe("pages with a cookie that does not unseal", () => {
  it("send the browser to sign in, by a stop that clears the cookie; nothing answers 500", async () => {
    for (const value of TAMPERED) {
      const cookie = `claimcheck_session=${value}`;
      for (const path of ["/invoices", `/invoices/${crypto.randomUUID()}`]) {
        const page = await get(one, path, cookie);
        expect({ value, path, status: page.status, location: page.headers.get("location") }).toEqual({
          value,
          path,
          status: 307,
          // The page asked for goes along, so signing in returns there (lib/return-path.ts).
          location: `/sign-in/reset?next=${encodeURIComponent(path)}`,
        });
      }
      const reset = await get(one, "/sign-in/reset", cookie);
      expect(reset.status).toBe(303);
      expect(reset.headers.get("location")).toBe("/sign-in");
      expect(reset.headers.getSetCookie().join("\n")).toMatch(/claimcheck_session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/i);
      for (const path of ["/sign-in", "/"]) {
        const res = await get(one, path, cookie);
        expect({ value, path, ok: res.status === 200 || res.status === 307 }).toEqual({ value, path, ok: true });
      }
    }
  });

  it("the reset stop never clears a live session (a cross-site link to it signs no one out)", async () => {
    const alice = await makeUser(t.db, "Alice");
    const res = await signIn(one, alice.email, PASSWORD);
    const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const reset = await get(one, "/sign-in/reset", cookie);
    expect(reset.status).toBe(303);
    expect(reset.headers.get("location")).toBe("/invoices");
    expect(reset.headers.getSetCookie()).toEqual([]);
    expect((await get(one, "/invoices", cookie)).status).toBe(200);
  });
});

describe("sign-in limits in the running app", () => {
  it("are shared by two app instances on one database: failures on one, 429 with Retry-After on the other", async () => {
    const alice = await makeUser(t.db, "Alice");
    for (let i = 0; i < SIGN_IN_LIMITS.email.points; i++) {
      const res = await signIn(i % 2 ? one : two, alice.email, "wrong");
      expect(res.status).toBe(401);
    }
    for (const app of [one, two]) {
      const res = await signIn(app, alice.email, PASSWORD);
      expect(res.status).toBe(429);
      expect(await res.json()).toEqual({ detail: "too_many_attempts" });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(SIGN_IN_LIMITS.email.blockDuration);
    }
  });
});
