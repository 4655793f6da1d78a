// Starts the built app as `npm start` does (server.mjs: Next.js behind its method gate) on a
// free loopback port, in its own process group, with the local Inngest stand-in
// (packages/inngest-local, in this process) driving its real /api/inngest route: the whole path
// an event takes in production against a self-hosted Inngest server, minus the browser.
// Production never runs Inngest's unsigned dev mode, so each server gets a fresh random
// signing key and event key, shared with its stand-in only (INNGEST_BASE_URL +
// INNGEST_SIGNING_KEY + INNGEST_EVENT_KEY, as with `inngest start`).
// Used by the integration tests on PostgreSQL and by the Playwright run (tests/e2e/support/stack.ts).
//
// The app is built once into .next-test (NEXT_DIST_DIR), shared by both, and rebuilt when a
// source file is newer than that build. APP_SERVER_REUSE_BUILD=1 uses an existing build as
// it is; APP_SERVER_LOG=1 echoes the app's and the stand-in's output.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cliPath, signBody, startInngestLocal, type InngestLocal, type RunSummary } from "@claimcheck/inngest-local";
import { isAlive } from "@/lib/pid";
import { TEST_INNGEST_ENCRYPTION_KEY } from "./step-data";

export const TEST_DIST_DIR = ".next-test";
export const TEST_SESSION_PASSWORD = "claimcheck-integration-tests-session-key-0123456789";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const NEXT_BIN = path.join(ROOT, "node_modules", "next", "dist", "bin", "next");
// What `npm start` runs: Next.js behind the gate that answers the methods it would fail on (decision 0048).
const SERVER = path.join(ROOT, "server.mjs");
const ECHO = process.env.APP_SERVER_LOG === "1";

export type AppServerOptions = {
  /** The database the app uses (a PostgreSQL URL; see tests/support/db.ts). */
  databaseUrl: string;
  /** Names the server in echoed output and log files (default: its port). */
  name?: string;
  /** Also write the app's output to `<logDir>/app-<name>.log` and the stand-in's to `<logDir>/inngest-<name>.log`. */
  logDir?: string;
  /** LEASE_TTL_SECONDS for the app (default 90). */
  leaseTtlSeconds?: number;
  /** MODEL_* variables for the app; unset ones are not inherited from this process. */
  model?: {
    provider?: "local" | "openai-compatible";
    latencyMs?: number;
    /** MODEL_IGNORE_ABORT: the local model answers after its delay even when aborted. */
    ignoreAbort?: boolean;
    baseUrl?: string;
    apiKey?: string;
    name?: string;
    timeoutMs?: number;
  };
  /**
   * The factor on the stand-in's retry schedule, the real server's (default 0.01, to keep
   * retries quick: 150 ms, 300 ms, 600 ms… each plus up to 300 ms; 1 is production's).
   */
  retryScale?: number;
  /** Extra environment for the app; it overrides everything above. */
  env?: Record<string, string>;
  /**
   * `next start` without server.mjs's gate in front: only for measuring what the gate costs
   * (`npm run bench reads -- --against-next-start`); such a server answers TRACE with a 500.
   */
  bareNextStart?: boolean;
};

export type AppServer = {
  name: string;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** The app's Inngest serve URL, `${url}/api/inngest`. */
  serveUrl: string;
  /**
   * The stand-in, e.g. http://127.0.0.1:41235 (POST /e/:key; GET /runs and POST /fn/:id/invoke
   * with `authorization: Bearer <signingKey>`, as its control plane needs in self-hosted mode).
   */
  inngestUrl: string;
  inngest: InngestLocal;
  /** The app's and its stand-in's INNGEST_SIGNING_KEY (random per server). */
  signingKey: string;
  /** The app's and its stand-in's INNGEST_EVENT_KEY: POST `${inngestUrl}/e/${eventKey}`. */
  eventKey: string;
  /** The app's stdout and stderr lines so far (its JSON log lines among them). */
  appLogs(): string[];
  /** The stand-in's log lines so far. */
  inngestLogs(): string[];
  /** The app's process (server.mjs, which runs Next.js in the same process), for the benchmarks' CPU accounting. */
  pid: number | undefined;
  stop(): Promise<void>;
};

export async function startAppServer(opts: AppServerOptions): Promise<AppServer> {
  await ensureBuild();
  const port = await freePort();
  const name = opts.name ?? String(port);
  const url = `http://127.0.0.1:${port}`;
  const serveUrl = `${url}/api/inngest`;
  if (opts.logDir) fs.mkdirSync(opts.logDir, { recursive: true });
  const logFile = (kind: string) => (opts.logDir ? path.join(opts.logDir, `${kind}-${name}.log`) : undefined);
  const appLogFile = logFile("app");
  const inngestLogFile = logFile("inngest");

  const signingKey = `signkey-test-${randomBytes(32).toString("hex")}`;
  const eventKey = randomBytes(24).toString("hex");
  const inngestLog: string[] = [];
  const inngestOut = inngestLogFile ? fs.createWriteStream(inngestLogFile) : undefined;
  const inngest = await startInngestLocal({
    port: 0,
    signingKey,
    eventKeys: [eventKey],
    appUrls: [serveUrl],
    retryScale: opts.retryScale ?? 0.01,
    syncRetryMs: 250,
    log: (line) => {
      push(inngestLog, line);
      inngestOut?.write(`${new Date().toISOString()} ${line}\n`);
      if (ECHO) console.info(`[inngest-local:${name}] ${line}`);
    },
  });

  const app = launchApp({ port, name, appLogFile, env: appEnv(opts, { baseUrl: inngest.url, signingKey, eventKey }), bare: opts.bareNextStart });
  const stop = async () => {
    await app.stop();
    await inngest.close();
    inngestOut?.end();
  };

  try {
    await waitUntilServing(app.child, serveUrl, signingKey, app.logs, appLogFile);
    await inngest.sync(); // at once, rather than at the stand-in's next sync retry
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    name,
    url,
    serveUrl,
    inngestUrl: inngest.url,
    inngest,
    signingKey,
    eventKey,
    appLogs: () => [...app.logs],
    inngestLogs: () => [...inngestLog],
    pid: app.child.pid,
    stop,
  };
}

// ---------------------------------------------------------------------------------------
// Several app instances on one Inngest server, and processes that can be killed

export type InngestServerOptions = {
  /** The serve URLs it syncs and calls (with the same app id, the one synced last gets the runs). */
  appUrls: string[];
  name?: string;
  /** Also write its output to `<logDir>/inngest-<name>.log`. */
  logDir?: string;
  /** The factor on its retry schedule, the real server's (default 0.01). */
  retryScale?: number;
  /** Re-sync the apps every n ms (default 0: only at start and on sync()). */
  pollMs?: number;
};

/**
 * The local stand-in as a process of its own (packages/inngest-local/main.ts, self-hosted mode
 * with fresh random keys), so that it can be killed and started again on the same port, as
 * an Inngest server would be. Its runs live in its memory: a killed one forgets them.
 */
export type InngestServer = {
  name: string;
  url: string;
  port: number;
  signingKey: string;
  eventKey: string;
  logs(): string[];
  /** Its runs, from GET /runs ([] when it is down). */
  runs(): Promise<RunSummary[]>;
  /** Syncs every app now (POST /sync); throws if one does not answer. */
  sync(): Promise<void>;
  /** Sends the process group `signal` (default SIGKILL) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again after kill(), on the same port and with the same keys. */
  start(): Promise<void>;
  /** SIGSTOP: it keeps its port (connections are accepted) and answers nothing until thaw(). */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  stop(): Promise<void>;
};

const TSX_CLI = path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");

export async function startInngestServer(opts: InngestServerOptions): Promise<InngestServer> {
  const port = await freePort();
  const name = opts.name ?? `inngest-${port}`;
  const url = `http://127.0.0.1:${port}`;
  const signingKey = `signkey-test-${randomBytes(32).toString("hex")}`;
  const eventKey = randomBytes(24).toString("hex");
  if (opts.logDir) fs.mkdirSync(opts.logDir, { recursive: true });
  const logFile = opts.logDir ? path.join(opts.logDir, `inngest-${name}.log`) : undefined;
  const logs: string[] = [];
  let current: { child: ChildProcess; stop: () => Promise<void> } | null = null;
  let launches = 0;

  const start = async () => {
    const out = logFile ? fs.createWriteStream(logFile, { flags: launches++ ? "a" : "w" }) : undefined;
    const args = [TSX_CLI, cliPath, "-p", String(port), "--poll", String(opts.pollMs ?? 0), "--retry-scale", String(opts.retryScale ?? 0.01)];
    for (const u of opts.appUrls) args.push("-u", u);
    const env: Record<string, string | undefined> = { ...process.env, INNGEST_SIGNING_KEY: signingKey, INNGEST_EVENT_KEY: eventKey };
    delete env.INNGEST_DEV;
    const child = spawn(process.execPath, args, { cwd: ROOT, env: env as NodeJS.ProcessEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    current = { child, stop: trackChild(child) };
    pipeLines(child, (line) => {
      push(logs, line);
      out?.write(`${line}\n`);
      if (ECHO) console.info(`[${name}] ${line}`);
    }, () => out?.end());
    const started = Date.now();
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}):\n${logs.slice(-20).join("\n")}`);
      try {
        if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() - started > 30_000) throw new Error(`${name} did not listen on ${url} within 30 s:\n${logs.slice(-20).join("\n")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    const c = current;
    if (!c) return;
    current = null;
    killGroup(c.child, signal);
    await c.stop();
  };
  await start();
  return {
    name,
    url,
    port,
    signingKey,
    eventKey,
    logs: () => [...logs],
    async runs() {
      try {
        const res = await fetch(`${url}/runs`, { headers: { authorization: `Bearer ${signingKey}` }, signal: AbortSignal.timeout(5000) });
        return res.ok ? ((await res.json()) as RunSummary[]) : [];
      } catch {
        return [];
      }
    },
    async sync() {
      const res = await fetch(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${signingKey}` }, signal: AbortSignal.timeout(30_000) });
      if (!res.ok) throw new Error(`${name}: POST /sync answered ${res.status}: ${await res.text()}`);
    },
    kill,
    start,
    freeze: () => current && killGroup(current.child, "SIGSTOP"),
    thaw: () => current && killGroup(current.child, "SIGCONT"),
    stop: async () => {
      if (current) killGroup(current.child, "SIGCONT"); // a frozen one could not act on SIGTERM
      await kill("SIGTERM");
    },
  };
}

export type AppInstanceOptions = Omit<AppServerOptions, "retryScale"> & {
  /** The Inngest server this instance sends events to (shared with the other instances). */
  inngest: InngestServer;
  /** The port to listen on (default: a free one). Give it when the Inngest server must know the URL first. */
  port?: number;
};

/** One app server (`npm start`) of several on a shared Inngest server; it can be killed and started again on its port. */
export type AppInstance = {
  name: string;
  url: string;
  serveUrl: string;
  port: number;
  appLogs(): string[];
  /** Sends the process group `signal` (default SIGKILL) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again after kill(), on the same port; resolves once it serves. */
  start(): Promise<void>;
  stop(): Promise<void>;
};

export async function startAppInstance(opts: AppInstanceOptions): Promise<AppInstance> {
  await ensureBuild();
  const port = opts.port ?? (await freePort());
  const name = opts.name ?? String(port);
  const url = `http://127.0.0.1:${port}`;
  const serveUrl = `${url}/api/inngest`;
  if (opts.logDir) fs.mkdirSync(opts.logDir, { recursive: true });
  const appLogFile = opts.logDir ? path.join(opts.logDir, `app-${name}.log`) : undefined;
  const { inngest } = opts;
  const env = appEnv(opts, { baseUrl: inngest.url, signingKey: inngest.signingKey, eventKey: inngest.eventKey });
  const logs: string[] = [];
  let current: LaunchedApp | null = null;
  let launches = 0;
  const start = async () => {
    const app = (current = launchApp({ port, name, appLogFile, env, logs, append: launches++ > 0 }));
    try {
      await waitUntilServing(app.child, serveUrl, inngest.signingKey, logs, appLogFile);
    } catch (error) {
      await app.stop();
      throw error;
    }
  };
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    const app = current;
    if (!app) return;
    current = null;
    killGroup(app.child, signal);
    await app.stop();
  };
  await start();
  return { name, url, serveUrl, port, appLogs: () => [...logs], kill, start, stop: () => kill("SIGTERM") };
}

function push(lines: string[], line: string) {
  lines.push(line);
  if (lines.length > 5000) lines.splice(0, lines.length - 5000);
}

type LaunchedApp = { child: ChildProcess; logs: string[]; stop: () => Promise<void> };

/**
 * The app as `npm start` runs it (server.mjs: Next.js behind its method gate) on `port`, in
 * its own process group, its output kept (and echoed or written to a file).
 */
function launchApp(opts: {
  port: number;
  name: string;
  appLogFile?: string;
  env: NodeJS.ProcessEnv;
  logs?: string[];
  append?: boolean;
  bare?: boolean;
}): LaunchedApp {
  const logs = opts.logs ?? [];
  const out = opts.appLogFile ? fs.createWriteStream(opts.appLogFile, { flags: opts.append ? "a" : "w" }) : undefined;
  const entry = opts.bare ? [NEXT_BIN, "start"] : [SERVER];
  const child = spawn(process.execPath, [...entry, "-p", String(opts.port), "-H", "127.0.0.1"], {
    cwd: ROOT,
    env: opts.env,
    detached: true, // its own process group: stop() ends next-server with it
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = trackChild(child);
  pipeLines(child, (line) => {
    push(logs, line);
    out?.write(`${line}\n`);
    if (ECHO) console.info(`[app:${opts.name}] ${line}`);
  }, () => out?.end());
  return { child, logs, stop };
}

/** Calls `onLine` for each line the child writes to stdout or stderr; `onEnd` once both end. */
function pipeLines(child: ChildProcess, onLine: (line: string) => void, onEnd: () => void) {
  let openStreams = 2;
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding("utf8");
    let partial = "";
    stream.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) onLine(line);
    });
    stream.once("end", () => {
      if (partial) onLine(partial);
      if (--openStreams === 0) onEnd();
    });
  }
}

/**
 * The app's environment: this process's, minus anything that configures the app (or the
 * seed, or the test runs), plus ours.
 */
function appEnv(opts: AppServerOptions, inngest: { baseUrl: string; signingKey: string; eventKey: string }): NodeJS.ProcessEnv {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(MODEL_|LEASE_|SESSION_|INNGEST_|SEED_|E2E_|DATABASE_URL$|PORT$|NODE_ENV$|NEXT_DIST_DIR$|VITEST)/.test(key)) continue;
    env[key] = value;
  }
  const model = opts.model ?? {};
  const set = (key: string, value: string | number | undefined) => {
    if (value !== undefined) env[key] = String(value);
  };
  Object.assign(env, {
    NODE_ENV: "production",
    NEXT_DIST_DIR: TEST_DIST_DIR,
    NEXT_TELEMETRY_DISABLED: "1",
    DATABASE_URL: opts.databaseUrl,
    // The stand-in in its self-hosted mode: signed calls both ways, events with the key.
    INNGEST_BASE_URL: inngest.baseUrl,
    INNGEST_SIGNING_KEY: inngest.signingKey,
    INNGEST_EVENT_KEY: inngest.eventKey,
    SESSION_PASSWORD: TEST_SESSION_PASSWORD,
    // One key for every test server, so instances sharing an Inngest server read each other's steps.
    INNGEST_ENCRYPTION_KEY: TEST_INNGEST_ENCRYPTION_KEY,
    SESSION_COOKIE_SECURE: "false",
    LEASE_TTL_SECONDS: String(opts.leaseTtlSeconds ?? 90),
    MODEL_PROVIDER: model.provider ?? "local",
  });
  set("MODEL_LATENCY_MS", model.latencyMs);
  set("MODEL_IGNORE_ABORT", model.ignoreAbort === undefined ? undefined : model.ignoreAbort ? "1" : "0");
  set("MODEL_BASE_URL", model.baseUrl);
  set("MODEL_API_KEY", model.apiKey);
  set("MODEL_NAME", model.name);
  set("MODEL_TIMEOUT_MS", model.timeoutMs);
  Object.assign(env, opts.env ?? {});
  return env as NodeJS.ProcessEnv;
}

// ---------------------------------------------------------------------------------------
// Processes

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills the child's whole process group when stopped, or when this process exits. */
function trackChild(child: ChildProcess): () => Promise<void> {
  live.add(child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const c of live) killGroup(c, "SIGKILL");
    });
  }
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  void exited.then(() => live.delete(child));
  return async () => {
    if (!live.has(child)) return;
    killGroup(child, "SIGTERM");
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function waitUntilServing(child: ChildProcess, serveUrl: string, signingKey: string, logs: string[], logFile?: string, timeoutMs = 60_000) {
  const started = Date.now();
  const see = logFile ? ` (see ${logFile})` : "";
  let last = "";
  while (Date.now() - started < timeoutMs) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the app exited (${child.exitCode ?? child.signalCode}) before serving${see}:\n${logs.slice(-40).join("\n")}`);
    }
    try {
      // Signed, as the Inngest server would: an unsigned GET gets 401 in production.
      const res = await fetch(serveUrl, { headers: { "x-inngest-signature": signBody("", signingKey) }, signal: AbortSignal.timeout(5000) });
      const text = await res.text();
      if (res.ok) return;
      // A 401 or 500 here is a configuration error (a key mismatch, no key): waiting will not fix it.
      throw new Error(`GET ${serveUrl} answered ${res.status}: ${text.slice(0, 300)}`);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("GET ")) throw error;
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`the app did not answer ${serveUrl} within ${timeoutMs} ms (${last})${see}:\n${logs.slice(-40).join("\n")}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------
// The build

// Everything the build reads. A directory's own mtime counts too: it changes when a file in
// it is added or deleted.
const SOURCES = ["app", "lib", "inngest", "db", "public", "instrumentation.ts", "proxy.ts", "next.config.ts", "package.json", "package-lock.json", "tsconfig.json"];

function newestSourceMtime(): number {
  let newest = 0;
  const visit = (p: string) => {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(p);
    } catch {
      return;
    }
    newest = Math.max(newest, stat.mtimeMs);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(p)) if (name !== "node_modules" && !name.startsWith(".")) visit(path.join(p, name));
    }
  };
  for (const s of SOURCES) visit(path.join(ROOT, s));
  return newest;
}

// The newest source time the build started from, written beside the build: an edit made
// while a build runs is newer than this, so that build does not count as current.
const STAMP = path.join(ROOT, TEST_DIST_DIR, "SOURCES_STAMP");

function buildIsCurrent(): boolean {
  const buildId = path.join(ROOT, TEST_DIST_DIR, "BUILD_ID");
  if (!fs.existsSync(buildId) || !fs.existsSync(STAMP)) return false;
  if (process.env.APP_SERVER_REUSE_BUILD === "1") return true;
  return Number(fs.readFileSync(STAMP, "utf8")) >= newestSourceMtime();
}

/**
 * Builds the app into .next-test unless a current build is there (or `rebuild` is set); one
 * builder at a time, across processes. Says whether it built.
 */
export async function ensureBuild(opts: { rebuild?: boolean } = {}): Promise<"built" | "current"> {
  if (!opts.rebuild && buildIsCurrent()) return "current";
  const release = await lock(path.join(ROOT, `${TEST_DIST_DIR}.lock`));
  try {
    if (!opts.rebuild && buildIsCurrent()) return "current"; // another worker built it while we waited
    await build();
    return "built";
  } finally {
    release();
  }
}

async function build(): Promise<void> {
  // tsconfig.json already lists .next-test's route types, so the build leaves it alone.
  const env: Record<string, string | undefined> = { ...process.env, NEXT_DIST_DIR: TEST_DIST_DIR, NEXT_TELEMETRY_DISABLED: "1" };
  delete env.NODE_ENV; // vitest's "test" would make next warn; build sets production itself
  console.info(`[app-server] building the app into ${TEST_DIST_DIR} (about a minute)…`);
  const started = Date.now();
  const sources = newestSourceMtime();
  fs.rmSync(STAMP, { force: true });
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [NEXT_BIN, "build"], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const stop = trackChild(child);
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        output.push(chunk);
        if (ECHO) process.stdout.write(chunk);
      });
    }
    child.once("error", (error) => void stop().then(() => reject(error)));
    child.once("exit", (exitCode) => resolve(exitCode));
  });
  if (code !== 0) {
    const tail = output.join("").split("\n").slice(-60).join("\n");
    throw new Error(`next build (NEXT_DIST_DIR=${TEST_DIST_DIR}) failed with code ${code}:\n${tail}`);
  }
  fs.writeFileSync(STAMP, String(sources));
  console.info(`[app-server] built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** A lock directory holding the owner's pid; a lock whose owner is gone is taken over. */
async function lock(dir: string, timeoutMs = 10 * 60_000): Promise<() => void> {
  const started = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, "pid"), String(process.pid));
      return () => fs.rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let owner = 0;
    try {
      owner = Number(fs.readFileSync(path.join(dir, "pid"), "utf8"));
    } catch {
      // being created or removed right now
    }
    if (owner && !isAlive(owner)) fs.rmSync(dir, { recursive: true, force: true });
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for the build lock ${dir} (held by ${owner})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
