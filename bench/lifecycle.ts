// `npm run bench lifecycle [-- --seconds 8 --workers 1,8,32 --label before --scale]`
//
// What one lease lifecycle (open → proposed → applied) costs, in one run, on a fresh
// PostgreSQL database (DATABASE_URL, default the local server), each figure as a ratio to
// the floor measured in the same run:
//   raw      the floor: the lifecycle as 3 SQL transactions through postgres.js on the same
//            schema (open + event; propose + event; lock, invoice write, event, applied)
//   domain   the lib calls the app makes (openLease, the generation's reads and propose, the
//            local model at 0 ms, applyLease), no HTTP
//   http     the built app (`next start`) with the local Inngest stand-in: POST /api/leases,
//            the lease's event stream followed until `proposed` (as the page does), apply,
//            and the `applied` frame
// at 1, 8 and 32 workers, each worker its own actor, session and invoice. Then: click →
// proposed and click → applied percentiles; database transactions (pg_stat_database) and
// statements (a counting proxy, bench/support/pg-count-proxy.ts) per lifecycle; GET
// /api/leases/:id reads/s; apply → `applied` on the stream; a cancel answered during a 4 s
// generation; and how long after a cancel the model's HTTP request is dropped.
// With --scale: the same open/apply/read figures on 1,000,000 closed leases and 5,000,000
// events, the sweep's time, the EXPLAIN plans, and the read of a lease with 200 events.
//
// Results: bench/results/lifecycle-<date>-<label>.json and a table on stdout.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import postgres from "postgres";
import { eq, sql as dsql } from "drizzle-orm";
import { openDb, type Db, type DbHandle } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { seedActors, loadActorEmail } from "@/db/seed";
import { appSession, appUser, invoice } from "@/db/schema";
import { applyLease, openLease, type LeaseDispatch } from "@/lib/leases";
import { createLocalProvider } from "@/lib/model/local";
import { startAppServer, type AppServer } from "@/tests/harness/app-server";
import { distribution, http, openEventStream, signIn } from "@/tests/harness/app-client";
import { startCountProxy } from "./support/pg-count-proxy";
import { startFakeOpenAI } from "@/tests/harness/fake-openai";
import { generateInProcess } from "./support/generate-in-process";
import { scaleBench } from "./support/scale";
import { cpuProfEnv, printProfile, summarizeProfiles } from "./support/cpu-profile";
import { option } from "./support/bench-db";
import { cpuSnapshot, cpuSpent, type CpuSpent } from "./support/proc-cpu";
import { readLeasesFor } from "./support/read-load";

// ---------------------------------------------------------------------------------------
// Options

const args = process.argv.slice(3);
const SECONDS = Number(option("seconds", "8"));
const WORKERS = option("workers", "1,8,32").split(",").map(Number);
const LABEL = option("label", new Date().toISOString().slice(11, 16).replace(":", ""));
const SCALE = args.includes("--scale");
/** `--cpu-prof`: the app of the main runs writes CPU profiles (the inspector's), summed up at the end. */
const CPU_PROF = args.includes("--cpu-prof");
const PROFILE_DIR = path.join("test-results", "bench-cpu-prof");
const PASSWORD = "claimcheck-bench-password";
const PURPOSE = "summarize_invoice";
const MAX_WORKERS = Math.max(...WORKERS, 8);
const COUNT_LIFECYCLES = 20;
const CANCEL_GENERATION_MS = 4_000;
const CANCELS_PER_WORKER = 4;

const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const dbName = `cc_bench_lc_${Date.now().toString(36)}`;
const urlOf = (name: string) => {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
};
const dbUrl = urlOf(dbName);

type Worker = { n: number; email: string; actorId: string; invoiceId: string; sessionId: string };
type Dist = ReturnType<typeof distribution>;

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

// ---------------------------------------------------------------------------------------
// Database work, as PostgreSQL counts it

async function xacts(sql: postgres.Sql): Promise<number> {
  // Backends report their counters when idle, at most once a second, and a backend that
  // reported less than a second ago waits for its 10 s idle timer (PGSTAT_IDLE_INTERVAL).
  await new Promise((r) => setTimeout(r, 11_000));
  const [row] = await sql<
    { n: string }[]
  >`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`;
  return Number(row!.n);
}

// ---------------------------------------------------------------------------------------
// Running a lifecycle in a loop on every worker for a while

type Loop = {
  lifecycles: number;
  failures: number;
  seconds: number;
  perSecond: number;
  xactsPerLifecycle: number;
  cpu: CpuSpent;
  errors: string[];
};

async function loop(
  sql: postgres.Sql,
  workers: Worker[],
  seconds: number,
  once: (w: Worker) => Promise<void>,
  appPid?: number,
): Promise<Loop> {
  const before = await xacts(sql);
  const cpuBefore = cpuSnapshot(appPid);
  let lifecycles = 0;
  let failures = 0;
  const errors: string[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    workers.map(async (w) => {
      while (performance.now() < until) {
        try {
          await once(w);
          lifecycles++;
        } catch (error) {
          failures++;
          if (errors.length < 5) errors.push(String(error).slice(0, 300));
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuSpent(cpuBefore, cpuSnapshot(appPid), lifecycles);
  const after = await xacts(sql);
  return {
    lifecycles,
    failures,
    seconds: round(elapsed, 2),
    perSecond: round(lifecycles / elapsed),
    xactsPerLifecycle: round((after - before - 1) / Math.max(1, lifecycles), 2),
    cpu,
    errors,
  };
}

// ---------------------------------------------------------------------------------------
// raw: the floor

function rawLifecycle(sql: postgres.Sql) {
  return async (w: Worker) => {
    const leaseId = await sql.begin(async (tx) => {
      const [lease] = await tx<{ id: string }[]>`
        insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at, session_id)
        values (${w.actorId}, ${w.invoiceId}, ${PURPOSE}, 'open', now() + interval '90 seconds', ${w.sessionId})
        returning id`;
      await tx`insert into lease_event (lease_id, kind, detail) values (${lease!.id}, 'opened', ${tx.json({ ttl_seconds: 90 })})`;
      return lease!.id;
    });
    await sql.begin(async (tx) => {
      const [row] = await tx`
        update inference_lease set status = 'proposed', proposal = ${tx.json({ summary: "Raw summary.", model: "raw" })}, updated_at = now()
        where id = ${leaseId} and status = 'open' and actor_id = ${w.actorId} and deadline_at > now() returning id`;
      if (!row) throw new Error("raw propose matched no lease");
      await tx`insert into lease_event (lease_id, kind, detail) values (${leaseId}, 'proposed', ${tx.json({ model: "raw" })})`;
    });
    await sql.begin(async (tx) => {
      const [lease] = await tx<{ invoice_version: number; proposal: { summary: string } }[]>`
        select invoice_version, proposal from inference_lease where id = ${leaseId} and actor_id = ${w.actorId} for update`;
      const [inv] = await tx<
        { version: number }[]
      >`select version from invoice where id = ${w.invoiceId} and owner_id = ${w.actorId} for update`;
      if (!lease || !inv || inv.version !== lease.invoice_version) throw new Error("raw apply: fenced out");
      const [written] = await tx<{ version: number }[]>`
        update invoice set summary = ${lease.proposal.summary}, version = version + 1, updated_at = now()
        where id = ${w.invoiceId} and version = ${inv.version} returning version`;
      await tx`update inference_lease set status = 'applied', updated_at = now() where id = ${leaseId} and status = 'proposed'`;
      // The applied event with its receipt, in one statement as the app writes them (decision 0079):
      // a commit that applies a lease without one is refused.
      await tx`
        with receipt as (
          insert into lease_receipt (lease_id, invoice_id, org_id, lane, purpose, model, requester_id, requester_session_id,
            proposal_sha256, written_invoice_version, written_invoice_sha256, written_at, written_keys)
          select l.id, l.invoice_id, i.org_id, 'self', l.purpose, 'raw', l.actor_id, l.session_id,
            audit_sha256(audit_jcs(l.proposal)), ${written!.version}::int, invoice_sha256(i.id), clock_timestamp(), array['summary']
          from inference_lease l join invoice i on i.id = l.invoice_id where l.id = ${leaseId}
          returning lease_id
        )
        insert into lease_event (lease_id, kind, detail)
        select lease_id, 'applied', ${tx.json({ invoice_version: written!.version })} from receipt`;
    });
  };
}

// ---------------------------------------------------------------------------------------
// domain: the lib calls

function domainLifecycle(db: Db) {
  const model = createLocalProvider({ latencyMs: 0 });
  return async (w: Worker) => {
    let runNonce = "";
    const dispatch: LeaseDispatch = {
      async leaseOpened(lease) {
        runNonce = lease.runNonce;
      },
      async leaseClosed() {},
    };
    const opened = await openLease(
      db,
      { actorId: w.actorId, sessionId: w.sessionId, invoiceId: w.invoiceId, purpose: PURPOSE, ttlSeconds: 90 },
      dispatch,
    );
    if (!opened.ok || !opened.created) throw new Error(`domain open: ${JSON.stringify(opened)}`);
    const outcome = await generateInProcess(db, opened.lease.id, runNonce, model);
    if (outcome !== "proposed") throw new Error(`domain generation: ${outcome}`);
    const applied = await applyLease(db, w.actorId, opened.lease.id);
    if (!applied.ok) throw new Error(`domain apply: ${applied.code}`);
  };
}

// ---------------------------------------------------------------------------------------
// http: through the built app

type HttpSamples = {
  clickToProposed: number[];
  clickToApplied: number[];
  applyToPushed: number[];
  open: number[];
  apply: number[];
  lastLease: Map<number, string>;
};
const noSamples = (): HttpSamples => ({
  clickToProposed: [],
  clickToApplied: [],
  applyToPushed: [],
  open: [],
  apply: [],
  lastLease: new Map(),
});

function httpLifecycle(app: AppServer, cookies: Map<number, string>, samples: HttpSamples) {
  return async (w: Worker) => {
    const cookie = cookies.get(w.n)!;
    const clicked = performance.now();
    const open = await http(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: w.invoiceId, purpose: PURPOSE } });
    if (open.status !== 201) throw new Error(`POST /api/leases: ${open.status} ${JSON.stringify(open.body)}`);
    samples.open.push(performance.now() - clicked);
    const leaseId = open.body.lease_id as string;
    samples.lastLease.set(w.n, leaseId);
    const stream = await openEventStream(app.url, leaseId, cookie);
    try {
      if (stream.status !== 200) throw new Error(`events: ${stream.status}`);
      const proposed = await stream.next((f) => f.lease.status !== "open", 30_000);
      if (proposed.lease.status !== "proposed") throw new Error(`lease went ${proposed.lease.status}`);
      const applying = performance.now();
      const apply = await http(app.url, "POST", `/api/leases/${leaseId}/apply`, { cookie });
      const answered = performance.now();
      if (apply.status !== 200) throw new Error(`apply: ${apply.status} ${JSON.stringify(apply.body)}`);
      const applied = await stream.next((f) => f.lease.status === "applied", 30_000);
      samples.apply.push(answered - applying);
      samples.clickToProposed.push(proposed.at - clicked);
      samples.clickToApplied.push(answered - clicked);
      // From the apply's answer to the frame; a frame that beat the answer counts as 0.
      samples.applyToPushed.push(Math.max(0, applied.at - answered));
    } finally {
      stream.close();
    }
  };
}

async function readsPerSecond(
  app: AppServer,
  workers: Worker[],
  cookies: Map<number, string>,
  leases: Map<number, string>,
  seconds: number,
) {
  const cpuBefore = cpuSnapshot(app.pid);
  const run = await readLeasesFor(
    app.url,
    workers.map((w) => ({ leaseId: leases.get(w.n)!, cookie: cookies.get(w.n)! })),
    seconds,
  );
  const cpu = cpuSpent(cpuBefore, cpuSnapshot(app.pid), run.reads);
  return { perSecond: round(run.reads / run.seconds), failures: run.failures, latency: distribution(run.ms), cpu };
}

// ---------------------------------------------------------------------------------------
// Cancels during a slow generation, and when the model's request is dropped

async function cancelDuringGeneration(databaseUrl: string, workers: Worker[]) {
  // The tests' OpenAI-compatible fake, answering after 4 s; it records when a client drops a request.
  const model = await startFakeOpenAI();
  model.respondWith({ kind: "slow", delayMs: CANCEL_GENERATION_MS });
  const app = await startAppServer({
    databaseUrl,
    name: "bench-cancel",
    model: { provider: "openai-compatible", baseUrl: model.baseURL, apiKey: "bench", name: "bench-model", timeoutMs: 30_000 },
  });
  const answered: number[] = [];
  const dropped: number[] = [];
  let notDropped = 0;
  let cpu: CpuSpent | undefined;
  try {
    const cookies = new Map<number, string>();
    for (const w of workers) cookies.set(w.n, await signIn(app.url, w.email, PASSWORD));
    const waits: Promise<void>[] = [];
    const cpuBefore = cpuSnapshot(app.pid);
    await Promise.all(
      workers.map(async (w) => {
        const cookie = cookies.get(w.n)!;
        for (let i = 0; i < CANCELS_PER_WORKER; i++) {
          const from = model.requests.length;
          const open = await http(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: w.invoiceId, purpose: PURPOSE } });
          if (open.status !== 201) throw new Error(`cancel phase: POST /api/leases ${open.status} ${JSON.stringify(open.body)}`);
          const call = await model.nextRequest((r) => r.actorId === w.actorId && model.requests.indexOf(r) >= from, 30_000);
          await new Promise((r) => setTimeout(r, 100)); // well inside the model's 4 s
          const t = performance.now();
          const res = await http(app.url, "POST", `/api/leases/${open.body.lease_id}/cancel`, { cookie });
          const done = performance.now();
          if (res.status !== 200) throw new Error(`cancel: ${res.status} ${JSON.stringify(res.body)}`);
          answered.push(done - t);
          waits.push(
            // Dropped, or answered after its 4 s (then never dropped).
            model.dropped(call, CANCEL_GENERATION_MS + 1_000).then(
              (droppedAt) => void dropped.push(droppedAt - done),
              () => void notDropped++,
            ),
          );
        }
      }),
    );
    await Promise.all(waits);
    // What one open → generation → cancel → abort costs, by process: 8 of them land together.
    cpu = cpuSpent(cpuBefore, cpuSnapshot(app.pid), answered.length);
  } finally {
    await app.stop();
    await model.close();
  }
  return { answered: distribution(answered), dropped: dropped.length ? distribution(dropped) : null, notDropped, cpu };
}

// ---------------------------------------------------------------------------------------
// Statements per lifecycle: domain and http, each through the counting proxy

async function countStatements(databaseUrl: string, workers: Worker[]) {
  const proxy = await startCountProxy(databaseUrl);
  const top = (byText: Map<string, number>, n: number) =>
    [...byText.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([text, count]) => ({ per_lifecycle: round(count / n, 2), text }));
  try {
    const handle = await openDb({ kind: "postgres", url: proxy.url });
    let domain;
    try {
      const once = domainLifecycle(handle.db);
      await once(workers[0]!); // warm: connections and prepared statements
      proxy.reset();
      for (let i = 0; i < COUNT_LIFECYCLES; i++) await once(workers[0]!);
      const c = proxy.counts();
      domain = { statements: round(c.total / COUNT_LIFECYCLES, 2), top: top(c.byText, COUNT_LIFECYCLES) };
    } finally {
      await handle.close();
    }
    const app = await startAppServer({ databaseUrl: proxy.url, name: "bench-count", model: { provider: "local", latencyMs: 0 } });
    let httpCounts;
    try {
      const cookies = new Map([[workers[0]!.n, await signIn(app.url, workers[0]!.email, PASSWORD)]]);
      const samples: HttpSamples = noSamples();
      const once = httpLifecycle(app, cookies, samples);
      await once(workers[0]!);
      await new Promise((r) => setTimeout(r, 500)); // the last stream's reads and the run's end
      proxy.reset();
      for (let i = 0; i < COUNT_LIFECYCLES; i++) await once(workers[0]!);
      await new Promise((r) => setTimeout(r, 500));
      const c = proxy.counts();
      httpCounts = { statements: round(c.total / COUNT_LIFECYCLES, 2), top: top(c.byText, COUNT_LIFECYCLES) };
    } finally {
      await app.stop();
    }
    return { domain, http: httpCounts };
  } finally {
    await proxy.close();
  }
}

// ---------------------------------------------------------------------------------------
// Main

function figuresOf(runs: Record<string, Record<number, Loop>>, httpSamples: Record<number, HttpSamples>) {
  return WORKERS.map((n) => ({
    workers: n,
    raw_per_s: runs.raw![n]!.perSecond,
    domain_per_s: runs.domain![n]!.perSecond,
    http_per_s: runs.http![n]!.perSecond,
    domain_ratio: round(runs.domain![n]!.perSecond / runs.raw![n]!.perSecond, 3),
    http_ratio: round(runs.http![n]!.perSecond / runs.raw![n]!.perSecond, 3),
    raw_xacts: runs.raw![n]!.xactsPerLifecycle,
    domain_xacts: runs.domain![n]!.xactsPerLifecycle,
    http_xacts: runs.http![n]!.xactsPerLifecycle,
    click_to_proposed: distribution(httpSamples[n]!.clickToProposed),
    click_to_applied: distribution(httpSamples[n]!.clickToApplied),
    apply_to_pushed: distribution(httpSamples[n]!.applyToPushed),
    http_failures: runs.http![n]!.failures,
  }));
}

async function seed(handle: DbHandle, sql: postgres.Sql): Promise<Worker[]> {
  await migrateDb(handle);
  await seedActors(handle.db, MAX_WORKERS, { password: PASSWORD, invoicesEach: 1 });
  const workers: Worker[] = [];
  for (let n = 1; n <= MAX_WORKERS; n++) {
    const email = loadActorEmail(n);
    const [user] = await handle.db.select({ id: appUser.id }).from(appUser).where(eq(appUser.email, email));
    const [inv] = await handle.db.select({ id: invoice.id }).from(invoice).where(eq(invoice.ownerId, user!.id));
    // raw and domain open leases under a live session, as the app does.
    const [session] = await handle.db
      .insert(appSession)
      .values({ userId: user!.id, expiresAt: dsql`now() + interval '1 day'` })
      .returning({ id: appSession.id });
    workers.push({ n, email, actorId: user!.id, invoiceId: inv!.id, sessionId: session!.id });
  }
  await sql`analyze`;
  return workers;
}

function machine() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpu_model: cpus[0]?.model ?? "?",
    memory_gb: round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadavg: os.loadavg().map((x) => round(x, 2)),
  };
}

const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${dbName}`);
const sql = postgres(dbUrl, { max: MAX_WORKERS + 2, onnotice: () => {} });
const handle = await openDb({ kind: "postgres", url: dbUrl });
const result: Record<string, unknown> = { at: new Date().toISOString(), label: LABEL, seconds_per_run: SECONDS, machine_before: machine() };
try {
  const [pg] = await sql<{ version: string }[]>`select version()`;
  result.postgres = pg?.version;
  console.info(`[bench] database ${dbName}, ${MAX_WORKERS} actors`);
  const workers = await seed(handle, sql);

  const runs: Record<string, Record<number, Loop>> = { raw: {}, domain: {}, http: {} };
  if (CPU_PROF) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  const app = await startAppServer({
    databaseUrl: dbUrl,
    name: "bench",
    model: { provider: "local", latencyMs: 0 },
    // node refuses --cpu-prof in NODE_OPTIONS; a preloaded script profiles through the inspector.
    ...(CPU_PROF ? { env: cpuProfEnv(PROFILE_DIR) } : {}),
  });
  const httpSamples: Record<number, HttpSamples> = {};
  let reads: Awaited<ReturnType<typeof readsPerSecond>> | undefined;
  try {
    const cookies = new Map<number, string>();
    for (const w of workers) cookies.set(w.n, await signIn(app.url, w.email, PASSWORD));
    const warm: HttpSamples = noSamples();
    await loop(sql, workers.slice(0, 2), 2, httpLifecycle(app, cookies, warm));
    // The three kinds one after another at each level, so a change in the machine's load
    // between levels does not enter the ratios.
    for (const n of WORKERS) {
      runs.raw![n] = await loop(sql, workers.slice(0, n), SECONDS, rawLifecycle(sql), app.pid);
      runs.domain![n] = await loop(sql, workers.slice(0, n), SECONDS, domainLifecycle(handle.db), app.pid);
      const samples: HttpSamples = noSamples();
      runs.http![n] = await loop(sql, workers.slice(0, n), SECONDS, httpLifecycle(app, cookies, samples), app.pid);
      httpSamples[n] = samples;
      for (const kind of ["raw", "domain", "http"]) {
        const r = runs[kind]![n]!;
        const c = r.cpu.per_unit_ms;
        console.info(
          `[bench] ${kind.padEnd(6)} x${n}: ${r.perSecond}/s (${r.xactsPerLifecycle} xacts each, ${r.failures} failed; CPU ms each: app ${c.app}, bench ${c.bench}, postgres ${c.postgres}, other ${c.other}; machine ${Math.round(r.cpu.machine_busy * 100)} % busy)`,
        );
      }
    }
    const eight = workers.slice(0, 8);
    const last = httpSamples[8]?.lastLease ?? httpSamples[WORKERS.at(-1)!]!.lastLease;
    reads = await readsPerSecond(
      app,
      eight.filter((w) => last.has(w.n)),
      cookies,
      last,
      SECONDS,
    );
    console.info(`[bench] GET /api/leases/:id x8: ${reads.perSecond}/s`);
  } finally {
    await app.stop();
  }

  const profile = CPU_PROF ? summarizeProfiles(PROFILE_DIR) : undefined;
  const statements = await countStatements(dbUrl, workers);
  console.info(`[bench] statements per lifecycle: domain ${statements.domain.statements}, http ${statements.http.statements}`);
  const cancel = await cancelDuringGeneration(dbUrl, workers.slice(0, 8));
  console.info(`[bench] cancel during a ${CANCEL_GENERATION_MS} ms generation x8: p95 ${cancel.answered.p95} ms`);

  const out = path.join("bench", "results", `lifecycle-${new Date().toISOString().slice(0, 10)}-${LABEL}.json`);
  const write = () => fs.writeFileSync(out, JSON.stringify(result, null, 2) + "\n");
  const figuresNow = () => figuresOf(runs, httpSamples);
  Object.assign(result, { figures: figuresNow(), runs, reads_8_workers: reads, statements, cancel, app_cpu_profile: profile });
  write(); // before the long scale phase, so its figures are kept whatever happens there
  let scale;
  if (SCALE) {
    const httpAt8: Parameters<typeof scaleBench>[0]["httpAt8"] = async (target, seconds) => {
      const samples = noSamples();
      const run = await loop(
        target.side.sql,
        target.side.workers.slice(0, 8),
        seconds,
        httpLifecycle({ url: target.appUrl } as AppServer, target.cookies, samples),
      );
      return { lifecycles: run.lifecycles, seconds: run.seconds, open: samples.open, apply: samples.apply };
    };
    const makeTwin = async () => {
      const twinName = `${dbName}_h`;
      await admin.unsafe(`create database ${twinName}`);
      const twinUrl = urlOf(twinName);
      const twinSql = postgres(twinUrl, { max: MAX_WORKERS + 2, onnotice: () => {} });
      const twinHandle = await openDb({ kind: "postgres", url: twinUrl });
      const twinWorkers = await seed(twinHandle, twinSql);
      return {
        dbUrl: twinUrl,
        sql: twinSql,
        handle: twinHandle,
        workers: twinWorkers,
        async close() {
          await twinHandle.close();
          await twinSql.end();
          if (!args.includes("--keep-db")) await admin.unsafe(`drop database if exists ${twinName} with (force)`);
        },
      };
    };
    scale = await scaleBench({ sql, handle, workers, dbUrl, password: PASSWORD, seconds: SECONDS, httpAt8, makeTwin });
  }

  const figures = figuresNow();
  Object.assign(result, {
    figures,
    runs,
    reads_8_workers: reads,
    statements,
    cancel,
    scale,
    app_cpu_profile: profile,
    machine_after: machine(),
  });

  console.info(
    "\n| workers | raw/s | domain/s (ratio) | http/s (ratio) | xacts raw/domain/http | click→proposed p50/p95 | click→applied p50/p95 | apply→pushed p50/p95 |",
  );
  console.info("|---|---|---|---|---|---|---|---|");
  for (const f of figures) {
    const d = (x: Dist) => `${x.p50} / ${x.p95} ms`;
    console.info(
      `| ${f.workers} | ${f.raw_per_s} | ${f.domain_per_s} (${f.domain_ratio}) | ${f.http_per_s} (${f.http_ratio}) | ${f.raw_xacts} / ${f.domain_xacts} / ${f.http_xacts} | ${d(f.click_to_proposed)} | ${d(f.click_to_applied)} | ${d(f.apply_to_pushed)} |`,
    );
  }
  console.info(
    `machine: ${os.cpus().length} cpus, load average ${(result.machine_before as { loadavg: number[] }).loadavg.join(" ")} before, ${os
      .loadavg()
      .map((x) => round(x, 2))
      .join(" ")} after`,
  );
  console.info(
    `\nstatements per lifecycle (counting proxy, ${COUNT_LIFECYCLES} in a row): domain ${statements.domain.statements}, http ${statements.http.statements}`,
  );
  console.info(
    `GET /api/leases/:id at 8 workers: ${reads.perSecond}/s (p50 ${reads.latency.p50} ms, p95 ${reads.latency.p95} ms; CPU ms a read: app ${reads.cpu.per_unit_ms.app}, postgres ${reads.cpu.per_unit_ms.postgres}, bench ${reads.cpu.per_unit_ms.bench})`,
  );
  console.info("\nCPU ms per lifecycle, by process (/proc), and how busy the 2 cores were:");
  console.info("| kind | workers | app | bench (clients + Inngest stand-in) | postgres | other | total | machine busy |");
  console.info("|---|---|---|---|---|---|---|---|");
  for (const kind of ["raw", "domain", "http"]) {
    for (const n of WORKERS) {
      const r = runs[kind]?.[n];
      if (!r) continue;
      const c = r.cpu.per_unit_ms;
      console.info(
        `| ${kind} | ${n} | ${c.app} | ${c.bench} | ${c.postgres} | ${c.other} | ${c.total} | ${Math.round(r.cpu.machine_busy * 100)} % |`,
      );
    }
  }
  console.info(
    `cancel answered during a ${CANCEL_GENERATION_MS / 1000} s generation (8 workers): p50 ${cancel.answered.p50} ms, p95 ${cancel.answered.p95} ms`,
  );
  if (cancel.cpu)
    console.info(
      `  CPU ms per open → cancel (the generation started and aborted): app ${cancel.cpu.per_unit_ms.app}, bench ${cancel.cpu.per_unit_ms.bench}, postgres ${cancel.cpu.per_unit_ms.postgres}`,
    );
  console.info(
    `cancel → model request dropped: ${cancel.dropped ? `p50 ${cancel.dropped.p50} ms, p95 ${cancel.dropped.p95} ms (${cancel.notDropped} not dropped)` : "n/a (not implemented: the model call runs to its end)"}`,
  );
  if (scale) console.info(`scale: ${JSON.stringify(scale.summary, null, 1)}`);
  if (profile) printProfile(profile);

  write();
  console.info(`wrote ${out}`);
} finally {
  await handle.close();
  await sql.end();
  if (!args.includes("--keep-db")) await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
