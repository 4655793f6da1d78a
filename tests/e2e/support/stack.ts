// What the end-to-end run stands on: a fresh PostgreSQL database, the app's test build, and
// app servers (`next start`) each driven by its own local Inngest stand-in; the build and the
// servers come from tests/harness/app-server.ts, shared with the integration tests. Used by
// tests/e2e/global-setup.ts; usable by hand too (see tests/e2e/README.md).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import postgres from "postgres";
import { ensureBuild, ROOT, startAppServer, TEST_DIST_DIR, type AppServer } from "../../harness/app-server";
import { SERVERS, type ServerName } from "./settings";
import { TSX_SERVER_FLAGS } from "../../../tools/tsx-server";

export { ROOT };
export const LOG_DIR = path.join(ROOT, "test-results", "e2e-logs");
/** CI's and this machine's PostgreSQL (trust auth), used when DATABASE_URL is unset. */
export const DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const TSX_BIN = path.join(ROOT, "node_modules", ".bin", "tsx");

// ---------------------------------------------------------------------------------------
// Database

export async function postgresAnswers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

export type E2eDatabase = { name: string; url: string; drop(): Promise<void> };

/** A new database `cc_e2e_<random>`, migrated and seeded through the project's own tools. */
export async function createDatabase(adminUrl: string): Promise<E2eDatabase> {
  const name = `cc_e2e_${randomBytes(5).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const env = { ...process.env, DATABASE_URL: url.toString() };
  for (const tool of ["tools/db-migrate.ts", "tools/db-seed.ts"]) {
    const run = spawnSync(TSX_BIN, [...TSX_SERVER_FLAGS, tool], { cwd: ROOT, env, encoding: "utf8" });
    if (run.status !== 0) throw new Error(`${tool} failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  }
  return {
    name,
    url: url.toString(),
    async drop() {
      const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  };
}

// ---------------------------------------------------------------------------------------
// Build and servers

/**
 * The shared test build (.next-test), built unless it is newer than the sources.
 * E2E_REBUILD=1 forces a build; E2E_SKIP_BUILD=1 uses whatever build is there, here and in
 * startAppServer's own check (through APP_SERVER_REUSE_BUILD).
 */
export async function buildApp(log: (line: string) => void = console.log): Promise<void> {
  const skip = process.env.E2E_SKIP_BUILD === "1";
  if (skip) process.env.APP_SERVER_REUSE_BUILD = "1";
  const result = await ensureBuild({ rebuild: !skip && process.env.E2E_REBUILD === "1" });
  if (result === "current") log(`e2e: reusing the build in ${TEST_DIST_DIR}${skip ? " (E2E_SKIP_BUILD=1)" : ", newer than the sources"}`);
}

/** One of the run's app servers (see global-setup.ts), with its logs under test-results/e2e-logs/. */
export function startServer(name: ServerName, databaseUrl: string): Promise<AppServer> {
  return startAppServer({
    name,
    databaseUrl,
    logDir: LOG_DIR,
    retryScale: 0.01,
    // Cookies are per host, not per port: a key of its own keeps one server's session
    // cookie from working on the other.
    // MODEL_PRICE_PER_MTOK: the local model costs nothing unless priced, and the usage page and
    // the budget are shown with costs above zero (USD 3 in, 15 out per million tokens).
    env: { SESSION_PASSWORD: `e2e-${randomBytes(24).toString("hex")}`, MODEL_PRICE_PER_MTOK: "3,15", ...SERVERS[name] },
  });
}
