// What the end-to-end run stands on: a fresh PostgreSQL database, one production build, and
// app servers (`next start`) each driven by its own local Inngest stand-in. Used by
// tests/e2e/global-setup.ts; usable by hand too (see tests/e2e/README.md).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { startInngestLocal, type InngestLocal } from "../../../tools/inngest-local/server";

export const ROOT = fileURLToPath(new URL("../../..", import.meta.url)).replace(/\/$/, "");
export const DIST_DIR = ".next-e2e";
export const LOG_DIR = path.join(ROOT, "test-results", "e2e-logs");
/** CI's and this machine's PostgreSQL (trust auth), used when DATABASE_URL is unset. */
export const DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const NEXT_BIN = path.join(ROOT, "node_modules", "next", "dist", "bin", "next");
const TSX_BIN = path.join(ROOT, "node_modules", ".bin", "tsx");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

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
    const run = spawnSync(TSX_BIN, ["--conditions=react-server", tool], { cwd: ROOT, env, encoding: "utf8" });
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
// Build

const SOURCES = ["app", "lib", "db", "inngest", "next.config.ts", "package.json", "package-lock.json", "tsconfig.json"];

function newestMtime(entry: string): number {
  const stat = fs.statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of fs.readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, child)));
  return newest;
}

/** True when .next-e2e holds a build newer than every source it was built from. */
export function buildIsFresh(): boolean {
  const buildId = path.join(ROOT, DIST_DIR, "BUILD_ID");
  const built = fs.statSync(buildId, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return built > Math.max(...SOURCES.map((s) => newestMtime(path.join(ROOT, s))));
}

/**
 * `next build` into .next-e2e, skipped when that build is newer than the sources
 * (E2E_REBUILD=1 forces it, E2E_SKIP_BUILD=1 trusts whatever is there).
 * tsconfig.json lists .next-e2e's route types, so the build leaves it alone.
 */
export function buildApp(log: (line: string) => void = console.log): void {
  if (process.env.E2E_SKIP_BUILD === "1" && fs.existsSync(path.join(ROOT, DIST_DIR, "BUILD_ID"))) {
    log("e2e: E2E_SKIP_BUILD=1, using the existing build");
    return;
  }
  if (process.env.E2E_REBUILD !== "1" && buildIsFresh()) {
    log(`e2e: ${DIST_DIR} is newer than the sources, reusing it`);
    return;
  }
  log(`e2e: building into ${DIST_DIR} …`);
  const started = Date.now();
  const env: Record<string, string | undefined> = { ...process.env, NEXT_DIST_DIR: DIST_DIR, NEXT_TELEMETRY_DISABLED: "1" };
  delete env.NODE_ENV; // next build sets production itself
  const run = spawnSync(process.execPath, [NEXT_BIN, "build"], { cwd: ROOT, env: env as NodeJS.ProcessEnv, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`next build failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  log(`e2e: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// ---------------------------------------------------------------------------------------
// Servers

export type AppServerOptions = {
  name: string;
  databaseUrl: string;
  env?: Record<string, string>;
};

export type AppServer = {
  name: string;
  url: string;
  inngest: InngestLocal;
  stop(): Promise<void>;
};

async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`app server exited (${child.exitCode}); see ${logFile}:\n${fs.readFileSync(logFile, "utf8").slice(-3000)}`);
    }
    try {
      const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(2_000) });
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`app server at ${url} did not answer within ${timeoutMs} ms; see ${logFile}`);
}

/** This process's environment minus anything that configures the app: the run sets those. */
function inheritedEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(MODEL_|LEASE_|SESSION_|INNGEST_|SEED_|DATABASE_URL$|PORT$|NODE_ENV$|NEXT_DIST_DIR$|E2E_)/.test(key)) continue;
    env[key] = value;
  }
  return env;
}

/** `next start` on a free port plus its own Inngest stand-in; logs under test-results/e2e-logs/. */
export async function startAppServer(options: AppServerOptions): Promise<AppServer> {
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const inngestLog = fs.createWriteStream(path.join(LOG_DIR, `inngest-${options.name}.log`));
  const inngest = await startInngestLocal({
    appUrls: [`${url}/api/inngest`],
    port: 0,
    host: "127.0.0.1",
    backoffMs: 200,
    log: (line) => inngestLog.write(`${new Date().toISOString()} ${line}\n`),
  });

  const logFile = path.join(LOG_DIR, `app-${options.name}.log`);
  const out = fs.openSync(logFile, "w");
  // Its own process group, so stopping it also stops the next-server child it forks.
  const child = spawn(process.execPath, [NEXT_BIN, "start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", out, out],
    env: {
      ...inheritedEnv(),
      NODE_ENV: "production",
      NEXT_DIST_DIR: DIST_DIR,
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL: options.databaseUrl,
      INNGEST_DEV: inngest.url,
      SESSION_PASSWORD: `e2e-${randomBytes(24).toString("hex")}`,
      SESSION_COOKIE_SECURE: "false",
      MODEL_PROVIDER: "local",
      ...options.env,
    },
  });
  fs.closeSync(out);
  const killOnExit = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  // If the test runner dies without its teardown, the servers die with it.
  process.once("exit", killOnExit);

  const stop = async () => {
    process.off("exit", killOnExit);
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      const exited = new Promise((r) => child.once("exit", r));
      const timeout = new Promise((r) => setTimeout(r, 5_000));
      await Promise.race([exited, timeout]);
      if (child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    await inngest.close();
    inngestLog.end();
  };

  try {
    await waitForHttp(`${url}/sign-in`, child, 60_000, logFile);
    await inngest.sync();
  } catch (error) {
    await stop();
    throw error;
  }
  return { name: options.name, url, inngest, stop };
}
