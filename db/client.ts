import "server-only";
import fs from "node:fs";
import path from "node:path";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import * as schema from "./schema";

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A transaction handle or the database: the domain takes either. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export type DbHandle = {
  db: Db;
  kind: "postgres" | "pglite";
  /** Subscribe to NOTIFY on a channel; resolves to an unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

export type DbOptions =
  | { kind: "postgres"; url: string; max?: number }
  | { kind: "pglite"; dataDir: string | null }; // null: in memory

export function dbOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): DbOptions {
  if (env.DATABASE_URL) return { kind: "postgres", url: env.DATABASE_URL };
  return { kind: "pglite", dataDir: path.join(process.cwd(), ".data", "pglite") };
}

export async function openDb(options: DbOptions): Promise<DbHandle> {
  if (options.kind === "postgres") {
    const { default: postgres } = await import("postgres");
    const { drizzle } = await import("drizzle-orm/postgres-js");
    const client = postgres(options.url, { max: options.max ?? 10, onnotice: () => {} });
    return {
      db: drizzle(client, { schema }) as unknown as Db,
      kind: "postgres",
      async listen(channel, onPayload) {
        const sub = await client.listen(channel, onPayload);
        return () => sub.unlisten();
      },
      close: () => client.end({ timeout: 5 }),
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
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
