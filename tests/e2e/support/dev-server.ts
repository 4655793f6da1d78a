// `npm run dev` itself, as a developer starts it from a clean clone: on an empty database of
// its own (tools/dev.ts migrates and seeds it), on free ports (PORT, INNGEST_PORT) and its own
// build folder, so it never meets a developer's dev server or the run's production servers.
// The address comes from the banner the developer reads, not from what we asked for.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { freePort } from "../../harness/app-server";
import { DEFAULT_PG_URL, LOG_DIR, ROOT } from "./stack";

export const DEV_DIST_DIR = ".next-dev-test";

export type DevServer = {
  /** The app's address as the banner printed it. */
  url: string;
  databaseUrl: string;
  /** npm's pid (`npm run dev`), the leader of the group stop() signals. */
  pid: number;
  /** Everything the dev server printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
};

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

export type DevServerOptions = {
  bannerTimeoutMs: number;
  /**
   * A newcomer's checkout (see freshCheckout) run as they would run it: no DATABASE_URL (the
   * embedded PGlite in its .data/), Next's default .next. Without it: this checkout, on a new
   * PostgreSQL database and a build folder of its own.
   */
  checkout?: string;
  /** The log file's name under LOG_DIR. */
  logName?: string;
};

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const adminUrl = process.env.DATABASE_URL || DEFAULT_PG_URL;
  const name = `cc_e2e_dev_${randomBytes(5).toString("hex")}`;
  let databaseUrl = "";
  if (!opts.checkout) {
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const dbUrl = new URL(adminUrl);
    dbUrl.pathname = `/${name}`;
    databaseUrl = dbUrl.toString();
  }

  const [port, inngestPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), INNGEST_PORT: String(inngestPort), NEXT_DIST_DIR: DEV_DIST_DIR };
  if (opts.checkout) {
    delete env.DATABASE_URL;
    delete env.NEXT_DIST_DIR;
  }
  // What a developer's shell would not have: the production run's settings.
  for (const key of Object.keys(env)) if (/^(E2E_|NODE_ENV$|SESSION_|LEASE_|MODEL_|INNGEST_(?!PORT$)|APP_URL$|TRUST_PROXY$)/.test(key)) delete env[key];

  fs.mkdirSync(LOG_DIR, { recursive: true });
  const logFile = path.join(LOG_DIR, opts.logName ?? "npm-run-dev.log");
  const log = fs.createWriteStream(logFile);
  let output = "";
  // Its own process group: stop() signals npm, tools/dev.ts and (through dev.ts) its children.
  const proc = spawn("npm", ["run", "dev"], { cwd: opts.checkout ?? ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  let running = true;
  void exited.then(() => (running = false));
  for (const stream of [proc.stdout, proc.stderr]) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      output += chunk;
      log.write(chunk);
    });
  }

  const stop = async () => {
    if (running && proc.pid) {
      try {
        process.kill(-proc.pid, "SIGTERM"); // dev.ts stops its children's groups, then exits
      } catch {
        // already gone
      }
      const timer = setTimeout(() => proc.pid && process.kill(-proc.pid, "SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    }
    // npm is gone; tools/dev.ts stops the app and the Inngest server (each in a group of its
    // own) just after. Wait for both ports to close, so nothing is left running.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && ((await listening(port)) || (await listening(inngestPort)))) await new Promise((r) => setTimeout(r, 250));
    log.end();
    if (opts.checkout) return;
    const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(`drop database if exists ${name} with (force)`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };

  const started = Date.now();
  while (Date.now() - started < opts.bannerTimeoutMs) {
    // The banner's line: "    app             http://127.0.0.1:3000   (sign in at ...)".
    const url = /^\s*app\s+(https?:\/\/\S+)/m.exec(output)?.[1];
    if (url) return { url, databaseUrl, pid: proc.pid!, output: () => output, stop };
    if (!running) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`npm run dev printed no address within ${opts.bannerTimeoutMs} ms (log: ${logFile}):\n${output.slice(-3000)}`);
}

/**
 * A copy of this checkout's tracked files (with their uncommitted changes) as a newcomer's
 * clone has them: no .next, no .data, no next-env.d.ts. node_modules is hard-linked (seconds,
 * not minutes; `npm ci` needs the registry); a file the caller puts into it must be a new one.
 */
export function freshCheckout(): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "claimcheck-clone-"));
  const files = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" });
  if (files.status !== 0) throw new Error(`git ls-files failed: ${files.stderr}`);
  for (const file of files.stdout.split("\0").filter(Boolean)) {
    if (!fs.existsSync(path.join(ROOT, file))) continue; // deleted in the work tree
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, file), path.join(dir, file));
  }
  // Hard links need one file system; elsewhere a full copy (slow, but the same tree).
  const linked = spawnSync("cp", ["-al", path.join(ROOT, "node_modules"), dir]);
  if (linked.status !== 0) spawnSync("cp", ["-a", path.join(ROOT, "node_modules"), dir], { stdio: "inherit" });
  return {
    dir,
    // Retried: a next-server that has just closed its port may still be writing its cache.
    remove: () => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }),
  };
}
