import "server-only";
import fs from "node:fs";
import path from "node:path";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { log } from "@/lib/log";
import * as schema from "./schema";
import { isAlive } from "@/lib/pid";

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A transaction handle or the database: the domain takes either. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export type DbHandle = {
  db: Db;
  kind: "postgres" | "pglite";
  /**
   * Subscribe to NOTIFY on a channel; resolves to an unsubscribe function. `onRelisten` is
   * called each time LISTEN is established again after its connection was lost: whatever was
   * notified meanwhile is gone, so the subscriber should re-read.
   */
  listen(channel: string, onPayload: (payload: string) => void, onRelisten?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

/** Seconds to wait for a connection to open (postgres.js would wait 30). */
export const CONNECT_TIMEOUT_S = 5;
/** The longest any one statement may run, lock waits included; beyond it, 57014 and a 503. */
export const STATEMENT_TIMEOUT_MS = 5_000;
/** Pool connections idle this long are closed, so few stale ones wait to fail. */
export const IDLE_TIMEOUT_S = 60;

export type DbOptions = { kind: "postgres"; url: string; max?: number } | { kind: "pglite"; dataDir: string | null }; // null: in memory

export function dbOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): DbOptions {
  if (env.DATABASE_URL) return { kind: "postgres", url: env.DATABASE_URL };
  return { kind: "pglite", dataDir: path.join(process.cwd(), ".data", "pglite") };
}

export async function openDb(options: DbOptions): Promise<DbHandle> {
  if (options.kind === "postgres") {
    const { default: postgres } = await import("postgres");
    const { drizzle } = await import("drizzle-orm/postgres-js");
    const connect = (max: number) =>
      postgres(options.url, {
        max,
        onnotice: () => {},
        // Bounded waits, so a database that is gone or stuck is a quick 503, not a hang (the
        // default connect timeout is 30 s). Parameters in the URL's query override these.
        connect_timeout: CONNECT_TIMEOUT_S,
        idle_timeout: IDLE_TIMEOUT_S,
        connection: { statement_timeout: STATEMENT_TIMEOUT_MS },
      });
    let client = connect(options.max ?? 10);
    let current = drizzle(client, { schema }) as unknown as Db;
    // postgres.js 3.4.9 can leave a pooled connection unable to write once its backend dies
    // inside a transaction (porsager/postgres#1208): every later query sent to it waits out
    // the connect timeout and fails. So after a transaction loses its connection the pool is
    // replaced, once per failure however many transactions saw it.
    const replacePool = (failed: Db) => {
      if (failed !== current) return;
      const old = client;
      client = connect(options.max ?? 10);
      current = drizzle(client, { schema }) as unknown as Db;
      log.warn("database pool replaced after a lost connection");
      void old.end({ timeout: 5 }).catch(() => {});
    };
    const transaction = retryingTransactions(() => current, replacePool);
    // The domain holds on to one `db`; it forwards to the pool of the moment.
    const db = new Proxy(current, {
      get(_target, prop) {
        if (prop === "transaction") return transaction;
        const value: unknown = Reflect.get(current, prop, current);
        return typeof value === "function" && prop !== "constructor" ? value.bind(current) : value;
      },
    });
    // LISTEN on a client of its own, untouched by pool replacement (postgres.js re-listens
    // by itself when that connection is lost).
    let listener: ReturnType<typeof postgres> | null = null;
    return {
      db,
      kind: "postgres",
      async listen(channel, onPayload, onRelisten) {
        listener ??= connect(1);
        // postgres.js calls onlisten after the first LISTEN and after each one it re-issues.
        let listens = 0;
        const sub = await listener.listen(channel, onPayload, () => {
          if (listens++ > 0) onRelisten?.();
        });
        return () => sub.unlisten();
      },
      close: async () => {
        await Promise.all([client.end({ timeout: 5 }), listener?.end({ timeout: 5 })]);
      },
    };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const release = options.dataDir ? lockDataDir(options.dataDir) : () => {};
  let client;
  try {
    client = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
    await client.waitReady;
  } catch (error) {
    release();
    throw error;
  }
  const pg = client;
  return {
    db: drizzle(pg, { schema }) as unknown as Db,
    kind: "pglite",
    async listen(channel, onPayload) {
      const unlisten = await pg.listen(channel, onPayload);
      return () => unlisten();
    },
    async close() {
      await pg.close();
      release();
    },
  };
}

/**
 * PGlite has no cross-process lock: a second process opens the same folder without error
 * and its writes are silently lost. We take one ourselves, a pid file created exclusively,
 * and refuse to open a folder that a live process holds.
 */
function lockDataDir(dataDir: string): () => void {
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const lockFile = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: "wx" });
      const release = () => {
        try {
          if (fs.readFileSync(lockFile, "utf8") === String(process.pid)) fs.unlinkSync(lockFile);
        } catch {
          // already gone
        }
      };
      process.once("exit", release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(fs.readFileSync(lockFile, "utf8"));
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new Error(
          `The embedded database at ${dataDir} is in use by process ${holder}. ` +
            `PGlite allows one process per data folder: stop that process, or set DATABASE_URL to use PostgreSQL.`,
        );
      }
      fs.unlinkSync(lockFile); // stale: its process is gone
    }
  }
  throw new Error(`Could not lock the embedded database at ${dataDir}.`);
}

// ---------------------------------------------------------------------------------------
// The database going away: connections killed, a restart, a timeout. See
// docs/decisions/0009-database-faults.md.

// A connection that was working and went away (killed, reset, server shut down): the
// statement did not complete, and a new connection may well work.
const LOST_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_DESTROYED", "ECONNRESET", "EPIPE", "57P01", "57P02", "08003", "08006"]);
// The database cannot be reached or is refusing work for now: connecting failed or timed
// out, too many connections, starting up, or a statement ran past statement_timeout (57014).
const UNAVAILABLE_CODES = new Set([
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "57P03",
  "53300",
  "57014",
]);

function errorChain(error: unknown): { code?: unknown }[] {
  const chain: { code?: unknown }[] = [];
  // drizzle wraps the driver's error as `cause`.
  for (let e = error; e && typeof e === "object" && chain.length < 5; e = (e as { cause?: unknown }).cause) {
    chain.push(e as { code?: unknown });
  }
  return chain;
}

/** Did a working connection go away under the statement (so that trying again may work)? */
export function isConnectionError(error: unknown): boolean {
  return errorChain(error).some(({ code }) => typeof code === "string" && LOST_CODES.has(code));
}

/**
 * unique_violation (23505) of the index or constraint `name`: postgres.js names it
 * `constraint_name`, PGlite `constraint`.
 */
export function isUniqueViolation(error: unknown, name: string): boolean {
  return errorChain(error).some((e) => {
    const { code, constraint_name, constraint } = e as { code?: unknown; constraint_name?: unknown; constraint?: unknown };
    return code === "23505" && (constraint_name === name || constraint === name);
  });
}

/** deadlock_detected, serialization_failure: the server rolled the whole transaction back. */
const LOCK_CONFLICT_CODES = new Set(["40P01", "40001"]);
function isLockConflictVictim(error: unknown): boolean {
  return errorChain(error).some(({ code }) => typeof code === "string" && LOCK_CONFLICT_CODES.has(code));
}

/** Is the database unavailable for now, so that the answer is 503 and a later retry may work? */
export function isDbUnavailable(error: unknown): boolean {
  return errorChain(error).some(
    ({ code }) => typeof code === "string" && (LOST_CODES.has(code) || UNAVAILABLE_CODES.has(code) || code.startsWith("08")),
  );
}

/**
 * A transaction that failed because its connection went away before COMMIT was sent has
 * been rolled back by the server, so running it again once, on a fresh pool, is safe: the
 * callbacks in lib/ only touch the database (events are dispatched after commit). A failure
 * during COMMIT itself is ambiguous (it may have committed), so it is not retried.
 *
 * A transaction PostgreSQL chose as a deadlock's (or a serialization failure's) victim was
 * rolled back whole, before COMMIT, so it runs again too, up to twice: two edits of an invoice
 * racing an open on it can deadlock (tests/integration/leases/edit-open-race.connections.test.ts,
 * docs/decisions/0017), and the loser answered 500.
 */
function retryingTransactions(pool: () => Db, onConnectionLost: (failed: Db) => void): Db["transaction"] {
  return async (run, config) => {
    for (let attempt = 1; ; attempt++) {
      const db = pool();
      let ranToCommit = false;
      try {
        return await db.transaction(async (tx) => {
          const result = await run(tx);
          ranToCommit = true;
          return result;
        }, config);
      } catch (error) {
        if (isLockConflictVictim(error) && !ranToCommit && attempt < 3) {
          log.warn("transaction retried after PostgreSQL aborted it to break a lock conflict", { error: String(error) });
          continue;
        }
        if (!isConnectionError(error)) throw error;
        onConnectionLost(db);
        if (attempt >= 2 || ranToCommit) throw error;
        log.warn("transaction retried after a lost connection", { error: String(error) });
      }
    }
  };
}

// One handle per process, cached on globalThis so that hot reload in dev does not open a
// second pool (or, for PGlite, try to take its own folder twice).
const cache = globalThis as unknown as { __claimcheckDb?: Promise<DbHandle> };

export function getDbHandle(): Promise<DbHandle> {
  cache.__claimcheckDb ??= openDb(dbOptionsFromEnv()).catch((error) => {
    cache.__claimcheckDb = undefined;
    throw error;
  });
  return cache.__claimcheckDb;
}

export async function getDb(): Promise<Db> {
  return (await getDbHandle()).db;
}

/** The rows of a raw `execute`: postgres.js answers an array, PGlite an object with `rows`. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
