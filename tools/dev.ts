// `npm run dev`: migrate and seed the configured database, then run Next.js and an Inngest
// server side by side until Ctrl-C.
//
//   - Database: DATABASE_URL, or the embedded PGlite folder under .data/. Migrating and
//     seeding run in a child process that closes the database before Next starts, because
//     PGlite allows one process per data folder (and the db modules need the react-server
//     condition, which this script does not run under).
//   - Inngest: the real `inngest-cli dev` when it is installed and runs (an optional
//     dependency whose postinstall downloads the binary; `npm ci --ignore-scripts` or no
//     internet leaves a stub that exits 1), else our stand-in, packages/inngest-local.
//   - The first page: dev compiles each page on its first request (a minute or more on a busy
//     machine), so /sign-in is requested, saying so, before the banner sends anyone to it.
//   - Ports: PORT (default 3000) for the app, INNGEST_PORT (default 8288) for the Inngest
//     server. A port given explicitly must be free, or nothing starts; an unset one moves to
//     the next free port, so a second checkout runs beside the first. The banner prints the
//     address the app really listens on (Next itself would silently move to another port).
//   - Each child runs in its own process group; Ctrl-C, SIGTERM or a closed terminal (SIGHUP)
//     stops both groups, and if this process is killed outright (kill -9) the watchdog,
//     tools/dev-reaper.ts, does, so no orphaned next-server keeps the port and .data/.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { DEMO_USERS, demoPassword } from "../db/demo";
import { cliPath as INNGEST_LOCAL_CLI } from "@claimcheck/inngest-local";
import { killTree } from "./dev-reaper";
import { TSX_SERVER_FLAGS } from "./tsx-server";

const ROOT = process.cwd();
const BIN = path.join(ROOT, "node_modules", ".bin");
const NEXT = path.join(ROOT, "node_modules", "next", "dist", "bin", "next");
const TSX = path.join(BIN, "tsx");
const INNGEST_CLI = path.join(BIN, "inngest-cli");

const HOST = "127.0.0.1";
const DEMO_PASSWORD = demoPassword();

const say = (line: string) => console.info(`[dev] ${line}`);

type Child = { name: string; proc: ChildProcess; exited: Promise<number> };
const children: Child[] = [];
let stopping = false;

// The watchdog that stops the children if this process dies without doing so (kill -9): it learns
// their pids on its stdin and acts when the pipe closes. Started before any child.
const reaper = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "tools", "dev-reaper.ts")], {
  cwd: ROOT,
  detached: true,
  stdio: ["pipe", "ignore", "inherit"],
});
reaper.unref();
(reaper.stdin as unknown as net.Socket).unref();
reaper.stdin?.on("error", () => {}); // a watchdog that could not start leaves Ctrl-C working as before
const tellReaper = (line: string) => void reaper.stdin?.write(`${line}\n`);

function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Child {
  const proc = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"], detached: true });
  const exited = new Promise<number>((resolve) => {
    proc.once("error", (error) => {
      console.error(`[dev] could not start ${name}: ${error.message}`);
      resolve(1);
    });
    proc.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  const child = { name, proc, exited };
  children.push(child);
  if (proc.pid) tellReaper(`pid ${proc.pid}`);
  return child;
}

function killGroup(child: Child, signal: NodeJS.Signals) {
  if (!child.proc.pid || child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  killTree(child.proc.pid, signal);
}

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    for (const child of children) killGroup(child, "SIGTERM");
    const force = setTimeout(() => children.forEach((c) => killGroup(c, "SIGKILL")), 5000);
    await Promise.all(children.map((c) => c.exited));
    clearTimeout(force);
    tellReaper("done");
  }
  process.exit(code);
}

process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));
process.on("SIGHUP", () => void stopAll(0));
// Last resort: never leave a group running if this process dies another way.
process.on("exit", () => children.forEach((c) => killGroup(c, "SIGKILL")));

/** Whether nothing listens on `port` (on any address: Next binds all of them). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ port }, () => probe.close(() => resolve(true)));
  });
}

/** The port from `variable`, which must be free; unset, the first free one from `fallback` on. */
async function choosePort(variable: "PORT" | "INNGEST_PORT", fallback: number, taken: number[] = []): Promise<number> {
  const given = process.env[variable]?.trim();
  if (given) {
    const port = Number(given);
    if (!/^\d+$/.test(given) || port < 1 || port > 65535) throw new Error(`${variable} must be a port number (1-65535), not "${given}"`);
    if (taken.includes(port) || !(await portFree(port))) throw new Error(`${variable}=${port} is already in use; pick another port`);
    return port;
  }
  for (let port = fallback; port < fallback + 50; port++) {
    if (taken.includes(port) || !(await portFree(port))) continue;
    if (port !== fallback) say(`port ${fallback} is in use; using ${port} (set ${variable} to choose)`);
    return port;
  }
  throw new Error(`no free port from ${fallback} to ${fallback + 49}; set ${variable}`);
}

async function waitForApp(APP_URL: string, timeoutMs = 180_000): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs && !stopping) {
    try {
      await fetch(`${APP_URL}/api/session`, { signal: AbortSignal.timeout(30_000) });
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  return false;
}

/** Whether the inngest-cli in node_modules/.bin is the real binary: a stub answers 1 to anything. */
function inngestCliProblem(): string | null {
  if (!fs.existsSync(INNGEST_CLI)) return "is not installed (it needs internet at install time)";
  const probe = spawnSync(INNGEST_CLI, ["version"], { cwd: ROOT, encoding: "utf8", timeout: 20_000 });
  if (probe.error) return `does not run (${probe.error.message})`;
  if (probe.status === 0) return null;
  const said = (probe.stderr || probe.stdout).trim().split("\n")[0];
  return `does not run (\`inngest-cli version\` exited ${probe.status ?? probe.signal}${said ? `: ${said}` : ""})`;
}

/**
 * Requests the first page, and the scripts it names, until it answers: the status it answered,
 * or null if it never did. The page's first request is where dev compiles it: done here, the
 * newcomer's first visit is served from a finished compile rather than waiting on a silent one.
 */
async function warmPage(url: string, timeoutMs = 10 * 60_000): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs && !stopping) {
    let res: Response;
    try {
      res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    } catch {
      await new Promise((r) => setTimeout(r, 1000)); // not listening yet, or the request was cut
      continue;
    }
    const html = await res.text().catch(() => "");
    // A 5xx is a compile or render error (Next prints it): reported, not waited on.
    const scripts = res.ok ? [...html.matchAll(/<script[^>]+src="(\/_next\/[^"]+)"/g)].map((m) => new URL(m[1]!, url).toString()) : [];
    await Promise.all(scripts.map((s) => fetch(s, { signal: AbortSignal.timeout(timeoutMs) }).then((r) => r.arrayBuffer()).catch(() => {})));
    return res.status;
  }
  return null;
}

async function main() {
  const PORT = await choosePort("PORT", 3000);
  const INNGEST_PORT = await choosePort("INNGEST_PORT", 8288, [PORT]);
  const APP_URL = `http://${HOST}:${PORT}`;
  const SERVE_URL = `${APP_URL}/api/inngest`;
  const INNGEST_URL = `http://${HOST}:${INNGEST_PORT}`;

  const where = process.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : "embedded PGlite in .data/";
  say(`migrating and seeding ${where}…`);
  const seed = start("db-seed", TSX, [...TSX_SERVER_FLAGS, "tools/db-seed.ts"]);
  const seedCode = await seed.exited;
  children.splice(children.indexOf(seed), 1);
  if (seedCode !== 0) {
    console.error(`[dev] migrating/seeding the database failed (exit ${seedCode}); not starting the app.`);
    process.exit(seedCode);
  }

  let inngest: Child;
  const cliProblem = inngestCliProblem();
  if (!cliProblem) {
    inngest = start("inngest-cli dev", INNGEST_CLI, ["dev", "-u", SERVE_URL, "--port", String(INNGEST_PORT)]);
  } else {
    say(`inngest-cli ${cliProblem}: using the local stand-in, packages/inngest-local.`);
    if (fs.existsSync(INNGEST_CLI)) say("(with internet, `npm rebuild --ignore-scripts=false inngest-cli` installs the real one.)");
    inngest = start("inngest-local", TSX, [INNGEST_LOCAL_CLI, "--dev", "-u", SERVE_URL, "-p", String(INNGEST_PORT)]);
  }

  // Next's own binary, not `npx next`: killing npx would orphan next-server.
  const next = start("next dev", process.execPath, [NEXT, "dev", "-p", String(PORT)], {
    ...process.env,
    PORT: String(PORT),
    INNGEST_DEV: INNGEST_URL,
    LOG_FORMAT: process.env.LOG_FORMAT ?? "pretty", // a terminal's reader; LOG_FORMAT=json for the lines as shipped
    NEXT_TELEMETRY_DISABLED: process.env.NEXT_TELEMETRY_DISABLED ?? "1", // offline machines; no phoning home
  });

  for (const child of [inngest, next]) {
    void child.exited.then((code) => {
      if (stopping) return;
      console.error(`[dev] ${child.name} exited (${code}); stopping.`);
      void stopAll(code || 1);
    });
  }

  if (await waitForApp(APP_URL)) {
    const page = `${APP_URL}/sign-in`;
    const warmStart = Date.now();
    const seconds = () => `${Math.round((Date.now() - warmStart) / 1000)} s`;
    say(`compiling the first page, /sign-in (dev compiles each page on its first request; on a busy machine a minute or more)…`);
    const ticker = setInterval(() => say(`still compiling /sign-in (${seconds()})…`), 15_000);
    const warmed = await warmPage(page);
    clearInterval(ticker);
    if (stopping) return;
    if (warmed === null) say(`/sign-in did not answer in ${seconds()}; it compiles on the first visit.`);
    else if (warmed >= 500) say(`/sign-in answered ${warmed} after ${seconds()}: see the error above.`);
    else say(`/sign-in compiled in ${seconds()}.`);
    console.info(
      [
        "",
        "  Claimcheck is running",
        `    app             ${APP_URL}   (sign in at ${APP_URL}/sign-in)`,
        `    Inngest server  ${INNGEST_URL}   (runs and steps)`,
        `    Inngest serve   ${SERVE_URL}`,
        `    database        ${where}`,
        `    demo logins     ${DEMO_USERS.map((u) => u.email).join(" / ")}, password "${DEMO_PASSWORD}"`,
        "  Ctrl-C stops everything.",
        "",
      ].join("\n"),
    );
  }
}

main().catch((error: unknown) => {
  console.error(`[dev] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  void stopAll(1);
});
