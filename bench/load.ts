// `npm run test:load [-- --actors 100 --duration 60 --latency 500 --streams 500 ...]`
// A load run against the production build: a fresh PostgreSQL database seeded with N load
// actors (`db:seed -- --actors N`), `next start` with the signed local Inngest server
// (tests/harness/app-server.ts) and the local model slowed to --latency ms. Then:
//
//   1. streams: ceil(S / 20) sessions (20 event streams is the per-session cap) hold S lease
//      event streams open while a few clients call the API; its p95 is measured, and also
//      without the streams for comparison.
//   2. load: every actor signs in and, for --duration s, does what the invoice page does:
//      reads, edits, opens a lease and follows it on GET /api/leases/:id/events, then
//      applies, discards, edits first (invoice_changed), abandons it, or signs out.
//   3. checks: after the last lease's deadline and one sweep, on the database: no lease in
//      flight past its deadline, the lease invariants (bench/load-invariants.ts), each lease
//      where its client left it, each invoice at the version its client counted.
//
// Prints a table of p50/p95/p99 per route and writes bench/results/load-<date>.json. Exits
// 1 if any check fails: a 5xx, a client timeout, a lost or stuck lease, an answer the
// scenario did not allow, an invariant, or the API p95 with the streams open over budget.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { ROOT, startAppServer, type AppServer } from "@/tests/harness/app-server";
import { checkDatabase, type InvariantReport } from "./load-invariants";
import { TSX_SERVER_FLAGS } from "../tools/tsx-server";

// ---------------------------------------------------------------------------------------
// Options

const USAGE = `usage: npm run test:load -- [--actors N] [--duration S] [--latency MS] [--streams N]
  [--probe S] [--probe-clients N] [--lease-ttl S] [--p95-budget MS] [--keep-db]
  --actors N       load actors seeded and driven (default 100)
  --duration S     seconds of load (default 60)
  --latency MS     MODEL_LATENCY_MS of the local model (default 500)
  --streams N      event streams held open in the streams phase (default 500; 0 skips it)
  --probe S        seconds of API calls with and without the streams (default 15 each)
  --probe-clients N  clients making those calls, one at a time each, 20-60 ms apart (default 4)
  --lease-ttl S    LEASE_TTL_SECONDS of the app (default 45)
  --p95-budget MS  the API p95 allowed with the streams open (default 100; 0: report only)
  --keep-db        leave the database (its name is printed) for a look afterwards
  DATABASE_URL     the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)`;

const opts = { actors: 100, duration: 60, latency: 500, streams: 500, probe: 15, probeClients: 4, leaseTtl: 45, p95Budget: 100, keepDb: false };
{
  const args = process.argv.slice(2);
  const numbers: Record<string, keyof typeof opts> = {
    "--actors": "actors",
    "--duration": "duration",
    "--latency": "latency",
    "--streams": "streams",
    "--probe": "probe",
    "--probe-clients": "probeClients",
    "--lease-ttl": "leaseTtl",
    "--p95-budget": "p95Budget",
  };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag === "--keep-db") {
      opts.keepDb = true;
      continue;
    }
    if (flag === "--help" || flag === "-h") {
      console.info(USAGE);
      process.exit(0);
    }
    const key = numbers[flag];
    const value = inline ?? args[++i];
    if (!key || value === undefined || !/^\d+$/.test(value)) {
      console.error(`test:load: bad argument ${args[i - (inline === undefined ? 1 : 0)] ?? flag}\n${USAGE}`);
      process.exit(2);
    }
    (opts as Record<string, number | boolean>)[key] = Number(value);
  }
  if (opts.actors < 1) {
    console.error("test:load: --actors must be at least 1");
    process.exit(2);
  }
}

const MAX_STREAMS_PER_SESSION = 20; // app/_lib/sse.ts
const SEED_PASSWORD = "claimcheck-load-password";
const INVOICES_EACH = 3;
const PURPOSE = "summarize_invoice";
const CALL_TIMEOUT_MS = 30_000;
/** How long a stream may take to end after its lease closed (generous: a busy machine is slow). */
const STREAM_END_MS = 15_000;
/** Pause between opening the streams and measuring with them held. */
const SETTLE_MS = 5_000;

// ---------------------------------------------------------------------------------------
// Measuring

type Bucket = { ms: number[]; statuses: Map<number, number> };
class Recorder {
  buckets = new Map<string, Bucket>();
  record(route: string, status: number, ms: number) {
    let b = this.buckets.get(route);
    if (!b) this.buckets.set(route, (b = { ms: [], statuses: new Map() }));
    b.ms.push(ms);
    b.statuses.set(status, (b.statuses.get(status) ?? 0) + 1);
  }
  all(): number[] {
    return [...this.buckets.values()].flatMap((b) => b.ms);
  }
  table() {
    return [...this.buckets.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([route, b]) => ({
        route,
        count: b.ms.length,
        ...percentiles(b.ms),
        statuses: Object.fromEntries([...b.statuses.entries()].sort(([x], [y]) => x - y)),
      }));
  }
}

function percentiles(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? round(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!) : null);
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: s.length ? round(s.at(-1)!) : null };
}
const round = (x: number) => Math.round(x * 10) / 10;

const load = new Recorder(); // the load phase
const probeQuiet = new Recorder(); // API calls with no streams open
const probeStreams = new Recorder(); // API calls while the streams are held
const lifecycle = new Recorder(); // open → proposed as a client sees it on the stream
const serverErrors: { route: string; status: number; body: string }[] = [];
const timeouts: { route: string; error: string }[] = [];
const unexpected: { route: string; status: number; body: string; expected: number[] }[] = [];
const failures: string[] = [];

type Answer = { status: number; body: any; headers: Headers };

async function call(
  rec: Recorder,
  base: string,
  method: string,
  route: string,
  url: string,
  opts: { cookie?: string; json?: unknown; expect?: number[] } = {},
): Promise<Answer | null> {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.cookie = opts.cookie;
  // A browser on the page sends its Origin with every write; the app checks it.
  if (method !== "GET") headers.origin = base;
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  const started = performance.now();
  try {
    const res = await fetch(base + url, {
      method,
      headers,
      body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      redirect: "manual",
    });
    const text = await res.text();
    rec.record(`${method} ${route}`, res.status, performance.now() - started);
    if (res.status >= 500) serverErrors.push({ route: `${method} ${route}`, status: res.status, body: text.slice(0, 300) });
    else if (opts.expect && !opts.expect.includes(res.status)) {
      unexpected.push({ route: `${method} ${route}`, status: res.status, body: text.slice(0, 300), expected: opts.expect });
    }
    let body: any = null;
    try {
      body = text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
    } catch {
      body = text;
    }
    return { status: res.status, body, headers: res.headers };
  } catch (error) {
    timeouts.push({ route: `${method} ${route}`, error: error instanceof Error ? error.message : String(error) });
    return null;
  }
}

const cookieOf = (headers: Headers) =>
  headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");

// ---------------------------------------------------------------------------------------
// The page's event stream: GET /api/leases/:id/events, read as EventSource would

type LeaseJson = { lease_id: string; status: string; deadline_at: string; server_now: string; proposal: unknown; closed_reason: string | null };

class LeaseStream {
  lease: LeaseJson | null = null;
  ended = false;
  endedAt = 0;
  private abort = new AbortController();
  private waiters = new Set<() => void>();
  done: Promise<void> = Promise.resolve();

  static async open(rec: Recorder, base: string, cookie: string, leaseId: string): Promise<LeaseStream | number> {
    const s = new LeaseStream();
    const route = "GET /api/leases/:id/events";
    const started = performance.now();
    let res: Response;
    try {
      res = await fetch(`${base}/api/leases/${leaseId}/events`, {
        headers: { cookie, accept: "text/event-stream" },
        signal: s.abort.signal,
      });
    } catch (error) {
      timeouts.push({ route, error: error instanceof Error ? error.message : String(error) });
      return 0;
    }
    // Time to the response head: the stream itself stays open.
    rec.record(route, res.status, performance.now() - started);
    if (res.status !== 200 || !res.body) {
      const text = await res.text().catch(() => "");
      if (res.status >= 500) serverErrors.push({ route, status: res.status, body: text.slice(0, 300) });
      return res.status;
    }
    s.done = s.read(res.body);
    return s;
  }

  private async read(body: ReadableStream<Uint8Array>) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = "message";
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
          }
          if (event === "lease" && data.length) {
            this.lease = JSON.parse(data.join("\n")) as LeaseJson;
            this.notify();
          }
        }
      }
    } catch {
      // aborted by us, or the connection dropped
    }
    this.ended = true;
    this.endedAt = performance.now();
    this.notify();
  }

  private notify() {
    for (const w of this.waiters) w();
  }

  /** The lease once `ok` holds for it; null if the stream ends first or `timeoutMs` passes. */
  waitFor(ok: (l: LeaseJson) => boolean, timeoutMs: number): Promise<LeaseJson | null> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.lease && ok(this.lease)) finish(this.lease);
        else if (this.ended) finish(null);
      };
      const finish = (v: LeaseJson | null) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(v);
      };
      const timer = setTimeout(() => finish(null), timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Resolves true once the server has ended the stream, false after `timeoutMs`. */
  async endsWithin(timeoutMs: number): Promise<boolean> {
    await Promise.race([this.done, sleep(timeoutMs)]);
    return this.ended;
  }

  close() {
    this.abort.abort();
  }
}

// ---------------------------------------------------------------------------------------
// What the clients did, to hold the database to it afterwards

type ClientOutcome = "pending" | "applied" | "cancelled" | "revoked" | "invoice_changed" | "abandoned" | "expired";
type LeaseRecord = { id: string; invoiceId: string; actor: number; outcome: ClientOutcome };
const leases = new Map<string, LeaseRecord>();
/** Invoice id → the version its owner's client expects; undefined once a write's result is unknown. */
const versions = new Map<string, number | undefined>();
const counts = {
  lifecycles: 0,
  applied: 0,
  discarded: 0,
  cancelledWhileGenerating: 0,
  signedOutWhileGenerating: 0,
  invoiceChanged: 0,
  abandoned: 0,
  reopened: 0,
  expiredSeen: 0,
  edits: 0,
  signIns: 0,
  signOuts: 0,
  pageViews: 0,
  streamsOpened: 0,
};
const anomalies = {
  /** Open until its deadline: the generation never proposed. */
  stuckOpen: [] as string[],
  /** The stream ended before the lease reached a state the client was waiting for. */
  streamEndedEarly: [] as string[],
  /** Still open STREAM_END_MS after the lease reached a terminal state or its session ended. */
  streamNotClosed: [] as string[],
  streamRefused: [] as string[],
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.random() * (hi - lo);
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

function bump(invoiceId: string, ok: boolean | null) {
  if (ok === null) versions.set(invoiceId, undefined);
  else if (ok) {
    const v = versions.get(invoiceId);
    versions.set(invoiceId, v === undefined ? undefined : v + 1);
  }
}

// ---------------------------------------------------------------------------------------
// One actor: a person with the invoice page open

class Actor {
  cookie = "";
  invoices: string[] = [];
  constructor(
    readonly n: number,
    readonly email: string,
    readonly base: string,
    readonly rec: Recorder,
  ) {}

  async signIn(): Promise<boolean> {
    const res = await call(this.rec, this.base, "POST", "/api/session", "/api/session", {
      json: { email: this.email, password: SEED_PASSWORD },
      expect: [200],
    });
    if (res?.status !== 200) return false;
    this.cookie = cookieOf(res.headers);
    counts.signIns++;
    return true;
  }

  async signOut(): Promise<string[]> {
    const res = await call(this.rec, this.base, "DELETE", "/api/session", "/api/session", { cookie: this.cookie, expect: [200] });
    counts.signOuts++;
    this.cookie = "";
    return res?.status === 200 ? ((res.body?.revoked as string[]) ?? []) : [];
  }

  get(route: string, url: string, expect = [200]) {
    return call(this.rec, this.base, "GET", route, url, { cookie: this.cookie, expect });
  }

  async edit(invoiceId: string): Promise<void> {
    const res = await call(this.rec, this.base, "PATCH", "/api/invoices/:id", `/api/invoices/${invoiceId}`, {
      cookie: this.cookie,
      json: { counterparty: `Counterparty ${this.n}-${Math.floor(Math.random() * 1e6)}` },
      expect: [200],
    });
    counts.edits++;
    bump(invoiceId, res ? res.status === 200 : null);
  }

  async run(until: number) {
    if (!(await this.signIn())) return;
    const list = await this.get("/api/invoices", "/api/invoices");
    this.invoices = Array.isArray(list?.body) ? list.body.map((i: { id: string }) => i.id) : [];
    if (!this.invoices.length) return;
    while (Date.now() < until) {
      await this.lifecycle(until);
      await sleep(between(1000, 5000)); // on to the next invoice
      if (Math.random() < 0.05 && Date.now() < until) {
        await this.signOut(); // and, a little later, back
        await sleep(between(300, 1500));
        if (!(await this.signIn())) return;
      }
    }
    // No sign-out at the end: people leave tabs open, so abandoned leases are the sweep's.
  }

  private async lifecycle(until: number) {
    const invoiceId = pick(this.invoices);
    // Opening the invoice: the page itself now and then, its data always.
    if (Math.random() < 0.2) {
      await call(this.rec, this.base, "GET", "/invoices/:id (page)", `/invoices/${invoiceId}`, { cookie: this.cookie, expect: [200] });
      counts.pageViews++;
    }
    await this.get("/api/invoices/:id", `/api/invoices/${invoiceId}`);
    if (Math.random() < 0.15) await this.edit(invoiceId);
    if (Date.now() >= until) return;

    // Summarize.
    const opened = await call(this.rec, this.base, "POST", "/api/leases", "/api/leases", {
      cookie: this.cookie,
      json: { invoice_id: invoiceId, purpose: PURPOSE },
      expect: [200, 201],
    });
    if (!opened || (opened.status !== 200 && opened.status !== 201)) return;
    const openedAt = performance.now();
    const leaseId = opened.body.lease_id as string;
    const reopened = opened.status === 200; // the lease already in flight (abandoned earlier)
    if (reopened) counts.reopened++;
    const record = leases.get(leaseId) ?? { id: leaseId, invoiceId, actor: this.n, outcome: "pending" as ClientOutcome };
    record.outcome = "pending";
    leases.set(leaseId, record);
    counts.lifecycles++;

    const stream = await LeaseStream.open(this.rec, this.base, this.cookie, leaseId);
    if (typeof stream === "number") {
      anomalies.streamRefused.push(`${leaseId} (${stream})`);
      return;
    }
    counts.streamsOpened++;
    const lease = (l: string) => `/api/leases/${l}`;
    const apiLease = (suffix: string, expect: number[]) =>
      call(this.rec, this.base, "POST", `/api/leases/:id/${suffix}`, `${lease(leaseId)}/${suffix}`, { cookie: this.cookie, expect });

    try {
      const r = Math.random();
      if (!reopened && r < 0.07) {
        // Discard while it is still generating.
        await sleep(between(50, 400));
        const res = await apiLease("cancel", [200]);
        if (res?.status === 200) {
          record.outcome = "cancelled";
          counts.cancelledWhileGenerating++;
        }
        await this.expectStreamEnd(stream, leaseId, "cancelled while generating");
        return;
      }
      if (!reopened && r < 0.1) {
        // Sign out while it generates: the lease is revoked; then sign in again.
        await sleep(between(50, 400));
        const revoked = await this.signOut();
        if (revoked.includes(leaseId)) record.outcome = "revoked";
        counts.signedOutWhileGenerating++;
        await this.expectStreamEnd(stream, leaseId, "signed out while generating");
        await sleep(between(300, 1000));
        await this.signIn();
        return;
      }

      // Wait on the stream for the proposal (or an end), as the page does.
      const deadlineMs = Date.parse(opened.body.deadline_at) - Date.now();
      const seen = await stream.waitFor((l) => l.status !== "open", Math.max(deadlineMs, 0) + 5_000);
      if (!seen) {
        const now = await this.get("/api/leases/:id", lease(leaseId));
        const status = now?.body?.status as string | undefined;
        if (status === "open" || status === "expired") anomalies.stuckOpen.push(`${leaseId} (${status}, stream ${stream.ended ? "ended" : "open"})`);
        else anomalies.streamEndedEarly.push(`${leaseId} (${status ?? "?"})`);
        return;
      }
      if (!reopened) lifecycle.record("open → proposed (stream)", 200, performance.now() - openedAt);
      if (seen.status !== "proposed") {
        if (seen.status === "expired") {
          record.outcome = "expired";
          counts.expiredSeen++;
        } else anomalies.streamEndedEarly.push(`${leaseId} (${seen.status}/${seen.closed_reason})`);
        return;
      }
      await this.get("/api/leases/:id", lease(leaseId)); // the page's fallback read, now and then
      await sleep(between(500, 3000)); // reading the summary

      // A lease reopened near its deadline may run out while the actor reads: that is 409 lease_expired.
      const late = reopened ? [409] : [];
      const d = Math.random();
      if (d < 0.6) {
        const res = await apiLease("apply", [200, ...late]);
        bump(record.invoiceId, res ? res.status === 200 : null);
        if (res?.status === 200) {
          record.outcome = "applied";
          counts.applied++;
        } else if (res?.body?.detail === "lease_expired") record.outcome = "expired";
        else if (res?.body?.detail === "invoice_changed") record.outcome = "invoice_changed"; // edited before it was reopened
      } else if (d < 0.72) {
        // Edited in another tab meanwhile: the fence refuses the apply and closes the lease.
        await this.edit(record.invoiceId);
        const res = await apiLease("apply", [409]);
        if (res?.status === 409 && res.body?.detail === "invoice_changed") {
          record.outcome = "invoice_changed";
          counts.invoiceChanged++;
        } else if (res?.body?.detail === "lease_expired") record.outcome = "expired";
      } else if (d < 0.88) {
        const res = await apiLease("cancel", [200, ...late]);
        if (res?.status === 200) {
          record.outcome = "cancelled";
          counts.discarded++;
        }
      } else {
        // The tab is closed: the lease stays proposed until its deadline or the next visit.
        record.outcome = "abandoned";
        counts.abandoned++;
        return;
      }
      await this.expectStreamEnd(stream, leaseId, `after ${record.outcome}`);
    } finally {
      stream.close();
    }
  }

  /** One of each call, so that the measured phases do not pay for a fresh server's first compiles. */
  async warmUp() {
    if (!(await this.signIn())) throw new Error(`warm-up: ${this.email} could not sign in`);
    const list = await this.get("/api/invoices", "/api/invoices");
    const invoiceId = (list?.body as { id: string }[])[0]!.id;
    await call(this.rec, this.base, "GET", "/invoices/:id (page)", `/invoices/${invoiceId}`, { cookie: this.cookie, expect: [200] });
    await this.get("/api/invoices/:id", `/api/invoices/${invoiceId}`);
    await this.edit(invoiceId);
    for (const end of ["apply", "cancel"]) {
      const opened = await call(this.rec, this.base, "POST", "/api/leases", "/api/leases", { cookie: this.cookie, json: { invoice_id: invoiceId, purpose: PURPOSE }, expect: [201] });
      const leaseId = opened?.body?.lease_id as string;
      leases.set(leaseId, { id: leaseId, invoiceId, actor: this.n, outcome: "pending" });
      const stream = await LeaseStream.open(this.rec, this.base, this.cookie, leaseId);
      if (typeof stream !== "number") await stream.waitFor((l) => l.status !== "open", 30_000);
      await this.get("/api/leases/:id", `/api/leases/${leaseId}`);
      const res = await call(this.rec, this.base, "POST", `/api/leases/:id/${end}`, `/api/leases/${leaseId}/${end}`, { cookie: this.cookie, expect: [200] });
      if (end === "apply") bump(invoiceId, res ? res.status === 200 : null);
      if (res?.status === 200) leases.get(leaseId)!.outcome = end === "apply" ? "applied" : "cancelled";
      if (typeof stream !== "number") stream.close();
    }
    await this.signOut();
  }

  private async expectStreamEnd(stream: LeaseStream, leaseId: string, why: string) {
    if (!(await stream.endsWithin(STREAM_END_MS))) anomalies.streamNotClosed.push(`${leaseId} (${why}; the stream last sent ${stream.lease?.status ?? "nothing"})`);
  }
}

// ---------------------------------------------------------------------------------------
// Phase 1: many streams held open, and the API's latency meanwhile

async function probe(rec: Recorder, base: string, sessions: { cookie: string; invoices: string[]; leases: string[] }[], seconds: number) {
  const until = Date.now() + seconds * 1000;
  const workers = Array.from({ length: opts.probeClients }, async () => {
    while (Date.now() < until) {
      const s = pick(sessions);
      const r = Math.random();
      if (r < 0.2) await call(rec, base, "GET", "/api/session", "/api/session", { cookie: s.cookie, expect: [200] });
      else if (r < 0.45) await call(rec, base, "GET", "/api/invoices", "/api/invoices", { cookie: s.cookie, expect: [200] });
      else if (r < 0.75) await call(rec, base, "GET", "/api/invoices/:id", `/api/invoices/${pick(s.invoices)}`, { cookie: s.cookie, expect: [200] });
      else if (s.leases.length) await call(rec, base, "GET", "/api/leases/:id", `/api/leases/${pick(s.leases)}`, { cookie: s.cookie, expect: [200] });
      await sleep(between(20, 60));
    }
  });
  await Promise.all(workers);
}

async function streamsPhase(base: string, emails: string[], appPid: number | null) {
  const sessionsNeeded = Math.ceil(opts.streams / MAX_STREAMS_PER_SESSION);
  const rec = new Recorder();
  const sessions: { actor: Actor; cookie: string; invoices: string[]; leases: string[] }[] = [];
  for (let i = 0; i < sessionsNeeded; i++) {
    const actor = new Actor(i + 1, emails[i % emails.length]!, base, rec);
    if (!(await actor.signIn())) throw new Error(`streams phase: ${actor.email} could not sign in`);
    const list = await actor.get("/api/invoices", "/api/invoices");
    sessions.push({ actor, cookie: actor.cookie, invoices: (list?.body as { id: string }[]).map((x) => x.id), leases: [] });
  }

  await probe(new Recorder(), base, sessions, 3); // warm-up: the first calls of a fresh server compile code
  console.info(`[streams] API probe without streams, ${opts.probe} s...`);
  const cpu0 = cpuSeconds(appPid);
  const wait0 = runQueueSeconds(appPid);
  const quietStarted = Date.now();
  await probe(probeQuiet, base, sessions, opts.probe);
  const cpuQuiet = cpu0 === null ? null : round((cpuSeconds(appPid)! - cpu0) / opts.probe);
  const waitQuiet = waitedShare(appPid, wait0, quietStarted);

  // Each session opens a lease on each of its invoices (sessions of one actor share them).
  for (const s of sessions) {
    for (const invoiceId of s.invoices) {
      const res = await call(rec, base, "POST", "/api/leases", "/api/leases", { cookie: s.cookie, json: { invoice_id: invoiceId, purpose: PURPOSE }, expect: [200, 201] });
      if (res && (res.status === 200 || res.status === 201)) {
        s.leases.push(res.body.lease_id);
        if (!leases.has(res.body.lease_id)) leases.set(res.body.lease_id, { id: res.body.lease_id, invoiceId, actor: 0, outcome: "pending" });
      }
    }
  }
  const streams: LeaseStream[] = [];
  let refused = 0;
  const opening: Promise<void>[] = [];
  for (let k = 0; k < opts.streams; k++) {
    const s = sessions[k % sessions.length]!;
    const leaseId = s.leases[Math.floor(k / sessions.length) % s.leases.length]!;
    opening.push(
      LeaseStream.open(rec, base, s.cookie, leaseId).then((st) => {
        if (typeof st === "number") refused++;
        else streams.push(st);
      }),
    );
  }
  await Promise.all(opening);
  console.info(`[streams] ${streams.length} streams open (${refused} refused); waiting for their leases to be proposed...`);
  await Promise.all(streams.map((st) => st.waitFor((l) => l.status !== "open", 30_000)));
  // Opening a stream reads the lease twice and each proposal re-reads it on every stream that
  // follows it: let those reads drain, so the probe measures streams held, not streams opening.
  const settleStarted = cpuSeconds(appPid);
  await sleep(SETTLE_MS);
  const settleCpu = settleStarted === null ? null : round((cpuSeconds(appPid)! - settleStarted) / (SETTLE_MS / 1000));
  const openBefore = streams.filter((st) => !st.ended).length;

  console.info(`[streams] API probe with ${openBefore} streams open, ${opts.probe} s...`);
  const probeStarted = Date.now();
  const cpu1 = cpuSeconds(appPid);
  const wait1 = runQueueSeconds(appPid);
  await probe(probeStreams, base, sessions, opts.probe);
  const cpuStreams = cpu1 === null ? null : round((cpuSeconds(appPid)! - cpu1) / opts.probe);
  const waitStreams = waitedShare(appPid, wait1, probeStarted);
  const openAfter = streams.filter((st) => !st.ended).length;
  // A stream ends when its lease closes; one whose lease reached its deadline during the probe
  // says the lease TTL was too short for how long this machine took, not that the app dropped it.
  const endedExpired = streams.filter((st) => st.ended && st.lease?.status === "expired").length;

  // Discard them all: every stream must end once its lease is terminal.
  for (const s of sessions) {
    for (const leaseId of s.leases) {
      const res = await call(rec, base, "POST", "/api/leases/:id/cancel", `/api/leases/${leaseId}/cancel`, { cookie: s.cookie, expect: [200, 409] });
      if (res?.status === 200) leases.get(leaseId)!.outcome = "cancelled";
    }
  }
  const ended = await Promise.all(streams.map((st) => st.endsWithin(10_000)));
  const stillOpen = ended.filter((e) => !e).length;
  for (const st of streams) st.close();
  // Again without streams: the machine's load drifts, so bracket the measurement.
  console.info(`[streams] API probe after the streams ended, ${opts.probe} s...`);
  const probeAfter = new Recorder();
  const wait2 = runQueueSeconds(appPid);
  const afterStarted = Date.now();
  await probe(probeAfter, base, sessions, opts.probe);
  const waitAfter = waitedShare(appPid, wait2, afterStarted);
  for (const s of sessions) await s.actor.signOut();

  const result = {
    sessions: sessions.length,
    streams_requested: opts.streams,
    streams_opened: streams.length,
    streams_refused: refused,
    streams_open_during_probe: { at_start: openBefore, at_end: openAfter, ended_by_lease_deadline: endedExpired },
    probe_seconds: opts.probe,
    probe_ms: Date.now() - probeStarted,
    probe_clients: opts.probeClients,
    app_cpu_cores: { without_streams: cpuQuiet, settling_after_open: settleCpu, with_streams: cpuStreams },
    // Share of each probe's wall time the app's main thread spent runnable but waiting for a
    // CPU: a busy machine, not the app, when it is large (it sets a floor under the latencies).
    app_main_thread_runqueue_share: { without_streams: waitQuiet, with_streams: waitStreams, after_streams: waitAfter },
    api_without_streams: { ...percentiles(probeQuiet.all()), count: probeQuiet.all().length, per_second: round(probeQuiet.all().length / opts.probe) },
    api_with_streams: { ...percentiles(probeStreams.all()), count: probeStreams.all().length, per_second: round(probeStreams.all().length / opts.probe) },
    api_after_streams: { ...percentiles(probeAfter.all()), count: probeAfter.all().length, per_second: round(probeAfter.all().length / opts.probe) },
    api_with_streams_by_route: probeStreams.table(),
    streams_not_closed_after_cancel: stillOpen,
    setup_routes: rec.table(),
  };
  if (refused) failures.push(`streams phase: ${refused} of ${opts.streams} streams refused`);
  if (openAfter < openBefore) {
    failures.push(
      `streams phase: ${openBefore - openAfter} streams ended during the probe` +
        (endedExpired ? ` (${endedExpired} because their lease reached its deadline: the phase took longer than --lease-ttl ${opts.leaseTtl} s on this machine)` : ""),
    );
  }
  if (stillOpen) failures.push(`streams phase: ${stillOpen} streams still open 10 s after their lease was discarded`);
  const p95 = result.api_with_streams.p95 ?? Infinity;
  if (opts.p95Budget > 0 && p95 > opts.p95Budget) failures.push(`streams phase: API p95 ${p95} ms with ${openBefore} streams open, over the ${opts.p95Budget} ms budget`);
  return result;
}

// ---------------------------------------------------------------------------------------
// Setting up and checking

async function runTool(args: string[], env: Record<string, string>) {
  const tsx = path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, ...TSX_SERVER_FLAGS, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: "inherit" });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(" ")} exited with ${code}`))));
  });
}

/** Waits until the database clock is past `deadline`, then for a sweep run that began after it to finish. */
async function waitForSweep(app: AppServer, sql: postgres.Sql, deadline: Date): Promise<string> {
  for (;;) {
    const [row] = await sql<{ past: boolean }[]>`select now() > ${deadline} as past`;
    if (row?.past) break;
    await sleep(500);
  }
  const after = Date.now();
  const limit = after + 90_000;
  while (Date.now() < limit) {
    const sweep = app.inngest
      .runs()
      .find((r) => r.functionId.endsWith("expire-overdue-leases") && Date.parse(r.startedAt) >= after && r.status !== "running");
    if (sweep) return `${sweep.status} at ${sweep.endedAt} (${JSON.stringify(sweep.output ?? sweep.error ?? null)})`;
    await sleep(1000);
  }
  return "no sweep ran within 90 s";
}

/** The pid listening on `port` (the app's next-server), from ss; null where ss is missing. */
function listenerPid(port: string): number | null {
  try {
    const out = execFileSync("ss", ["-ltnpH", `sport = :${port}`], { encoding: "utf8" });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds a process has used so far (Linux /proc; 100 ticks a second). */
function cpuSeconds(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** The share of the wall time since `startedAt` the main thread spent waiting for a CPU. */
function waitedShare(pid: number | null, waitedBefore: number | null, startedAt: number): number | null {
  const now = runQueueSeconds(pid);
  if (now === null || waitedBefore === null) return null;
  return round((now - waitedBefore) / ((Date.now() - startedAt) / 1000));
}

/** Seconds the process's main thread has waited on a run queue so far (Linux /proc/<pid>/schedstat). */
function runQueueSeconds(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]) / 1e9;
  } catch {
    return null;
  }
}

function machine() {
  const [one, five, fifteen] = os.loadavg();
  return { loadavg: [one, five, fifteen].map((x) => Math.round(x! * 100) / 100), cpus: os.cpus().length, free_mem_mb: Math.round(os.freemem() / 2 ** 20) };
}

async function main() {
  const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `cc_load_${Date.now().toString(36)}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const machineBefore = machine();
  console.info(`[load] machine: load average ${machineBefore.loadavg.join(" ")} on ${machineBefore.cpus} cpus`);
  console.info(`[load] database ${name}: seeding ${opts.actors} actors...`);
  await admin.unsafe(`create database ${name}`);
  let app: AppServer | undefined;
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  try {
    await runTool(["tools/db-seed.ts", "--actors", String(opts.actors), "--invoices", String(INVOICES_EACH)], {
      DATABASE_URL: databaseUrl,
      SEED_PASSWORD,
    });
    const emails = (await sql<{ email: string }[]>`select email from app_user where email like 'load-%' order by email`).map((r) => r.email);
    for (const i of await sql<{ id: string; version: number }[]>`select id, version from invoice`) versions.set(i.id, i.version);

    const logDir = path.join(ROOT, "test-results", "load");
    app = await startAppServer({
      databaseUrl,
      name: "load",
      logDir,
      leaseTtlSeconds: opts.leaseTtl,
      model: { provider: "local", latencyMs: opts.latency },
    });
    console.info(`[load] app at ${app.url} (logs in ${path.relative(ROOT, logDir)}/), model latency ${opts.latency} ms, lease TTL ${opts.leaseTtl} s`);

    await new Actor(1, emails[0]!, app.url, new Recorder()).warmUp();
    const appPid = listenerPid(new URL(app.url).port);

    let streams: Awaited<ReturnType<typeof streamsPhase>> | null = null;
    if (opts.streams > 0) {
      if (opts.probe + 15 > opts.leaseTtl) console.warn(`[streams] --probe ${opts.probe} s is close to the lease TTL (${opts.leaseTtl} s): leases may expire and end streams mid-probe`);
      streams = await streamsPhase(app.url, emails, appPid);
      console.info(
        `[streams] API p95 ${streams.api_without_streams.p95} ms before the streams, ${streams.api_with_streams.p95} ms with ${streams.streams_open_during_probe.at_start} open, ${streams.api_after_streams.p95} ms after`,
      );
    }

    console.info(`[load] ${opts.actors} actors for ${opts.duration} s...`);
    const loadStarted = Date.now();
    const cpuBefore = { app: cpuSeconds(appPid), waited: runQueueSeconds(appPid), self: process.cpuUsage() };
    const until = loadStarted + opts.duration * 1000;
    const rampMs = Math.min(10_000, (opts.duration * 1000) / 6);
    await Promise.all(
      emails.slice(0, opts.actors).map(async (email, i) => {
        await sleep((rampMs * i) / opts.actors); // not all at the same millisecond
        await new Actor(i + 1, email, app!.url, load).run(until);
      }),
    );
    const loadMs = Date.now() - loadStarted;
    const machineAfterLoad = machine();
    const selfCpu = process.cpuUsage(cpuBefore.self);
    const appCpu = cpuSeconds(appPid);
    const appWaited = runQueueSeconds(appPid);
    // CPU seconds per second of load: 1 is one core's worth (the app's JavaScript runs on one).
    const cpu = {
      app_cores: appCpu !== null && cpuBefore.app !== null ? round((appCpu - cpuBefore.app) / (loadMs / 1000)) : null,
      load_generator_and_inngest_cores: round((selfCpu.user + selfCpu.system) / 1e6 / (loadMs / 1000)),
      // Seconds the app's main thread (its event loop) was ready to run but waited for a CPU:
      // high on a busy machine, and then it, not the app, sets the latencies.
      app_main_thread_runqueue_wait_s: appWaited !== null && cpuBefore.waited !== null ? round(appWaited - cpuBefore.waited) : null,
    };
    console.info(`[load] done in ${(loadMs / 1000).toFixed(1)} s; ${counts.lifecycles} lifecycles; waiting for the last deadline and a sweep...`);

    const [{ last } = { last: null }] = await sql<{ last: Date | null }[]>`select max(deadline_at) as last from inference_lease where status in ('open','proposed')`;
    const sweep = last ? await waitForSweep(app, sql, last) : "nothing in flight at the end: no sweep needed";
    console.info(`[load] sweep: ${sweep}`);

    // The checks.
    const expectedVersions = new Map([...versions].filter((e): e is [string, number] => e[1] !== undefined));
    const report: InvariantReport = await checkDatabase(sql, { expectedVersions });
    const dbLeases = new Map(
      (await sql<{ id: string; status: string; closed_reason: string | null }[]>`select id, status, closed_reason from inference_lease`).map((l) => [l.id, l]),
    );
    const lost: string[] = [];
    const misplaced: string[] = [];
    const allowed: Record<ClientOutcome, string[]> = {
      pending: ["applied", "rejected/cancelled", "rejected/signed_out", "rejected/invoice_changed", "expired/deadline_passed"],
      applied: ["applied"],
      cancelled: ["rejected/cancelled"],
      revoked: ["rejected/signed_out"],
      invoice_changed: ["rejected/invoice_changed"],
      // Left proposed: it runs out, unless its session ends or its invoice is edited first.
      abandoned: ["expired/deadline_passed", "rejected/signed_out", "rejected/invoice_changed"],
      expired: ["expired/deadline_passed"],
    };
    for (const r of leases.values()) {
      const row = dbLeases.get(r.id);
      if (!row) {
        lost.push(r.id);
        continue;
      }
      const got = `${row.status}${row.closed_reason ? `/${row.closed_reason}` : ""}`;
      if (!allowed[r.outcome].includes(got)) misplaced.push(`${r.id.slice(0, 8)}: client saw ${r.outcome}, database has ${got}`);
    }
    const unknownToClients = [...dbLeases.keys()].filter((id) => !leases.has(id));

    // Generations: every run finished, none failed.
    const runs = app.inngest.runs().filter((r) => r.functionId.endsWith("generate-lease-proposal"));
    const runStatuses: Record<string, number> = {};
    for (const r of runs) runStatuses[r.status] = (runStatuses[r.status] ?? 0) + 1;
    const appWarnings = app.appLogs().filter((l) => l.includes('"level":"warn"') || /\b(Error|error)\b/.test(l));

    if (serverErrors.length) failures.push(`${serverErrors.length} answers of 5xx`);
    if (timeouts.length) failures.push(`${timeouts.length} requests failed without an answer (timeout or connection error)`);
    if (unexpected.length) failures.push(`${unexpected.length} answers the scenario did not allow`);
    if (report.overdueInFlight.length) failures.push(`${report.overdueInFlight.length} leases still in flight past their deadline after a sweep`);
    if (report.violations.length) failures.push(`${report.violations.length} invariant violations`);
    if (lost.length) failures.push(`${lost.length} leases a client opened are not in the database`);
    if (misplaced.length) failures.push(`${misplaced.length} leases not where their client left them`);
    if (unknownToClients.length) failures.push(`${unknownToClients.length} leases in the database no client opened`);
    if (anomalies.stuckOpen.length) failures.push(`${anomalies.stuckOpen.length} leases never proposed before their deadline`);
    if (anomalies.streamEndedEarly.length) failures.push(`${anomalies.streamEndedEarly.length} streams ended before the lease changed`);
    if (anomalies.streamNotClosed.length) failures.push(`${anomalies.streamNotClosed.length} streams still open ${STREAM_END_MS / 1000} s after their lease closed`);
    if (anomalies.streamRefused.length) failures.push(`${anomalies.streamRefused.length} streams refused in the load phase`);
    if ((runStatuses.running ?? 0) > 0 || (runStatuses.failed ?? 0) > 0) {
      failures.push(`generation runs: ${JSON.stringify(runStatuses)} (none should be running or failed)`);
    }

    const table = load.table();
    const result = {
      at: new Date().toISOString(),
      node: process.version,
      options: opts,
      machine: { before: machineBefore, after_load: machineAfterLoad, after: machine() },
      load: {
        actors: opts.actors,
        invoices: opts.actors * INVOICES_EACH,
        seconds: Math.round(loadMs / 100) / 10,
        requests: load.all().length,
        requests_per_second: Math.round((load.all().length / (loadMs / 1000)) * 10) / 10,
        cpu,
        counts,
        open_to_proposed_ms: percentiles(lifecycle.all()),
        routes: table,
      },
      streams,
      checks: {
        server_errors: serverErrors.length,
        server_error_samples: serverErrors.slice(0, 10),
        client_timeouts: timeouts.slice(0, 10),
        client_timeout_count: timeouts.length,
        unexpected_answers: unexpected.length,
        unexpected_samples: unexpected.slice(0, 10),
        sweep,
        leases_in_database: report.leases,
        lease_outcomes: report.byOutcome,
        in_flight_before_deadline: report.inFlight,
        in_flight_past_deadline: report.overdueInFlight,
        invariant_violations: report.violations.slice(0, 50),
        lost_leases: lost,
        leases_not_where_left: misplaced.slice(0, 50),
        leases_unknown_to_clients: unknownToClients.length,
        anomalies,
        generation_runs: runStatuses,
        app_warning_lines: appWarnings.length,
        app_warning_samples: appWarnings.slice(0, 10),
      },
      failures,
      passed: failures.length === 0,
    };

    // Print.
    console.info(`\nLoad: ${opts.actors} actors, ${result.load.seconds} s, ${result.load.requests} requests (${result.load.requests_per_second}/s), model ${opts.latency} ms`);
    console.info(
      `lifecycles ${counts.lifecycles}: applied ${counts.applied}, discarded ${counts.discarded}, cancelled while generating ${counts.cancelledWhileGenerating}, ` +
        `signed out while generating ${counts.signedOutWhileGenerating}, invoice changed ${counts.invoiceChanged}, abandoned ${counts.abandoned} (reopened ${counts.reopened}), expired seen ${counts.expiredSeen}`,
    );
    const open = result.load.open_to_proposed_ms;
    console.info(`open → proposed on the stream: p50 ${open.p50} ms, p95 ${open.p95} ms, p99 ${open.p99} ms`);
    printTable(table);
    if (streams) {
      console.info(`\nStreams: ${streams.streams_opened} held by ${streams.sessions} sessions; API p50/p95/p99`);
      console.info(`  without streams: ${fmt(streams.api_without_streams)} (${streams.api_without_streams.count} calls, ${streams.api_without_streams.per_second}/s)`);
      console.info(`  with streams:    ${fmt(streams.api_with_streams)} (${streams.api_with_streams.count} calls, ${streams.api_with_streams.per_second}/s)`);
      console.info(`  after they end:  ${fmt(streams.api_after_streams)} (${streams.api_after_streams.count} calls, ${streams.api_after_streams.per_second}/s)`);
      const w = streams.app_main_thread_runqueue_share;
      const pct = (x: number | null) => (x === null ? "?" : `${Math.round(x * 100)} %`);
      console.info(`  the app's main thread waited for a CPU ${pct(w.without_streams)} / ${pct(w.with_streams)} / ${pct(w.after_streams)} of each probe's time`);
    }
    console.info(`\nDatabase: ${report.leases} leases ${JSON.stringify(report.byOutcome)}; in flight past the deadline after the sweep: ${report.overdueInFlight.length}`);
    console.info(`machine load average: before ${machineBefore.loadavg.join(" ")}, after the load ${machineAfterLoad.loadavg.join(" ")}`);
    console.info(
      `CPU during the load (cores): app ${cpu.app_cores ?? "?"}, this process (clients and the Inngest stand-in) ${cpu.load_generator_and_inngest_cores}; ` +
        `the app's main thread waited ${cpu.app_main_thread_runqueue_wait_s ?? "?"} s of ${round(loadMs / 1000)} s for a CPU`,
    );

    fs.mkdirSync(path.join(ROOT, "bench", "results"), { recursive: true });
    const out = path.join(ROOT, "bench", "results", `load-${result.at.slice(0, 10)}.json`);
    fs.writeFileSync(out, JSON.stringify(result, null, 2) + "\n");
    console.info(`wrote ${path.relative(ROOT, out)}`);
    if (failures.length) {
      console.error(`\nFAILED:\n  ${failures.join("\n  ")}`);
      for (const v of report.violations.slice(0, 20)) console.error(`  - ${v}`);
      for (const e of serverErrors.slice(0, 5)) console.error(`  - ${e.route} ${e.status} ${e.body}`);
      for (const e of unexpected.slice(0, 5)) console.error(`  - ${e.route} ${e.status} (allowed ${e.expected.join("/")}) ${e.body}`);
      for (const e of timeouts.slice(0, 5)) console.error(`  - ${e.route}: ${e.error}`);
      for (const m of misplaced.slice(0, 5)) console.error(`  - ${m}`);
      process.exitCode = 1;
    } else console.info("\nall checks passed");
  } finally {
    await app?.stop();
    await sql.end();
    if (opts.keepDb) console.info(`[load] kept database ${name}`);
    else await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

const fmt = (p: { p50: number | null; p95: number | null; p99: number | null }) => `${p.p50} / ${p.p95} / ${p.p99} ms`;

function printTable(rows: ReturnType<Recorder["table"]>) {
  const header = ["route", "count", "p50 ms", "p95 ms", "p99 ms", "max ms", "statuses"];
  const lines = rows.map((r) => [r.route, String(r.count), String(r.p50), String(r.p95), String(r.p99), String(r.max), Object.entries(r.statuses).map(([s, n]) => `${s}:${n}`).join(" ")]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) => cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  console.info(`\n${row(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${lines.map(row).join("\n")}`);
}

await main();
