// The database going away under the route handlers (PostgreSQL only: PGlite runs in the
// process and has no connections to lose). Connections are killed with pg_terminate_backend
// between requests and in the middle of one; a statement runs past statement_timeout; the
// server is unreachable. Every answer is the result (a read retried, a transaction rerun) or
// 503 service_unavailable with Retry-After; never a 500, never a hang.
import net from "node:net";
import postgres from "postgres";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { openDb, type DbHandle } from "@/db/client";
import { api, signInCookie } from "../../support/api";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

if (inject("dbKind") !== "postgres") {
  throw new Error("db-faults.connections.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

const ADMIN_APP_NAME = "claimcheck-test-admin";
let t: TestDb;
let url: URL;
/** A connection of the test's own, spared by the kills. */
let admin: postgres.Sql;

const appDb = globalThis as { __claimcheckDb?: Promise<DbHandle> };

beforeAll(async () => {
  t = await openTestDb();
  url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  admin = postgres(url.toString(), { max: 2, onnotice: () => {}, connection: { application_name: ADMIN_APP_NAME } });
});
afterEach(() => {
  appDb.__claimcheckDb = Promise.resolve(t); // back to the file's own handle
});
afterAll(async () => {
  await admin?.end();
  await t?.close();
});

/** Ends every connection of the app to this database (the test's own are spared). */
async function killAppConnections(): Promise<number> {
  const rows = await admin<{ killed: boolean }[]>`
    select pg_terminate_backend(pid) as killed from pg_stat_activity
    where datname = ${t.name} and application_name <> ${ADMIN_APP_NAME} and pid <> pg_backend_pid()`;
  return rows.filter((r) => r.killed).length;
}

/** Resolves once some app connection is waiting on a lock (so the request is mid-flight). */
async function appWaitingOnLock(): Promise<void> {
  for (;;) {
    const [row] = await admin<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = ${t.name} and application_name <> ${ADMIN_APP_NAME} and wait_event_type = 'Lock'`;
    if (row!.n > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Runs `during` while a transaction of the test holds `lock` (e.g. an exclusive table lock);
 * `during` may let go of it early by calling `unlock`.
 */
async function whileLocked<T>(lock: string, during: (unlock: () => void) => Promise<T>): Promise<T> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = admin.begin(async (sql) => {
    await sql.unsafe(lock);
    locked();
    await released;
  });
  await isLocked;
  try {
    return await during(release);
  } finally {
    release();
    await holder;
  }
}

function expectOkOr503(res: { status: number; headers: Headers; body: unknown }, ok: number) {
  if (res.status === 503) {
    expect(res.body).toEqual({ detail: "service_unavailable" });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  } else {
    expect(res.status, JSON.stringify(res.body)).toBe(ok);
  }
}

async function world() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  return { alice, inv, cookie: await signInCookie(alice.email) };
}

describe("connections killed", () => {
  it("between requests: reads and writes go on (the pool reconnects)", async () => {
    const { inv, cookie } = await world();
    expect((await api("GET", "/api/invoices", { cookie })).status).toBe(200);
    expect(await killAppConnections()).toBeGreaterThan(0);
    expectOkOr503(await api("GET", "/api/invoices", { cookie }), 200);
    await killAppConnections();
    expectOkOr503(await api("PATCH", `/api/invoices/${inv.id}`, { cookie, json: { counterparty: "After the kill" } }), 200);
    await killAppConnections();
    expectOkOr503(await api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } }), 201);
  });

  it("mid-read: the read is run again and answers 200", async () => {
    const { cookie } = await world();
    const res = await whileLocked("lock table invoice in access exclusive mode", async (unlock) => {
      const pending = api("GET", "/api/invoices", { cookie });
      await appWaitingOnLock();
      expect(await killAppConnections()).toBeGreaterThan(0);
      unlock();
      return pending;
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it("mid-transaction, before commit: the transaction is run again and the lease opens once", async () => {
    const { inv, cookie } = await world();
    const res = await whileLocked("lock table inference_lease in access exclusive mode", async (unlock) => {
      const pending = api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
      await appWaitingOnLock();
      expect(await killAppConnections()).toBeGreaterThan(0);
      unlock();
      return pending;
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [row] = await admin<{ n: number }[]>`select count(*)::int as n from inference_lease where invoice_id = ${inv.id}`;
    expect(row!.n).toBe(1);
    // No connection was left broken (porsager/postgres#1208): many reads at once all succeed.
    const reads = await Promise.all(Array.from({ length: 24 }, () => api("GET", "/api/invoices", { cookie })));
    expect(reads.map((r) => r.status)).toEqual(reads.map(() => 200));
  });

  it("mid-write outside a transaction: 503 with Retry-After, and the write did not happen", async () => {
    const { inv, cookie } = await world();
    const res = await whileLocked(`select 1 from invoice where id = '${inv.id}' for update`, async () => {
      const pending = api("PATCH", `/api/invoices/${inv.id}`, { cookie, json: { counterparty: "Mid-kill" } });
      await appWaitingOnLock();
      expect(await killAppConnections()).toBeGreaterThan(0);
      return pending;
    });
    expectOkOr503(res, 200);
    const [row] = await admin<{ counterparty: string }[]>`select counterparty from invoice where id = ${inv.id}`;
    expect(row!.counterparty).toBe(res.status === 200 ? "Mid-kill" : inv.counterparty);
  });
});

describe("timeouts", () => {
  it("a statement past statement_timeout answers 503 with Retry-After", async () => {
    const { cookie } = await world();
    // The same app code on a handle whose URL shortens the timeout (URL parameters win).
    const short = new URL(url);
    short.searchParams.set("statement_timeout", "300");
    const handle = await openDb({ kind: "postgres", url: short.toString(), max: 3 });
    appDb.__claimcheckDb = Promise.resolve(handle);
    try {
      const res = await whileLocked("lock table invoice in access exclusive mode", () => api("GET", "/api/invoices", { cookie }));
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body).toEqual({ detail: "service_unavailable" });
      expect(res.headers.get("retry-after")).toBe("3");
    } finally {
      await handle.close();
    }
  });

  it("a database that accepts connections and never answers: 503 after the connect timeout, not a 30 s hang", async () => {
    const { cookie } = await world();
    const sockets = new Set<net.Socket>();
    const blackHole = net.createServer((s) => void sockets.add(s));
    await new Promise<void>((r) => blackHole.listen(0, "127.0.0.1", r));
    const dead = new URL(url);
    dead.host = `127.0.0.1:${(blackHole.address() as net.AddressInfo).port}`;
    const handle = await openDb({ kind: "postgres", url: dead.toString(), max: 2 });
    appDb.__claimcheckDb = Promise.resolve(handle);
    try {
      const started = Date.now();
      const res = await api("GET", "/api/invoices", { cookie });
      console.info(`[db-faults] black-hole database answered ${res.status} after ${Date.now() - started} ms`);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("3");
    } finally {
      await handle.close().catch(() => {});
      for (const s of sockets) s.destroy();
      blackHole.close();
    }
  }, 40_000);

  it("a database that refuses connections: 503 at once", async () => {
    const { cookie } = await world();
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const refused = new URL(url);
    refused.host = `127.0.0.1:${port}`;
    const handle = await openDb({ kind: "postgres", url: refused.toString(), max: 2 });
    appDb.__claimcheckDb = Promise.resolve(handle);
    try {
      const res = await api("PATCH", `/api/invoices/00000000-0000-4000-8000-000000000000`, { cookie, json: { counterparty: "X" } });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("3");
    } finally {
      await handle.close().catch(() => {});
    }
  });
});
