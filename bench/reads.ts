// `npm run bench reads [-- --requests 4000 --concurrency 8 --events 200 --cpu-prof --against-next-start --label x]`
//
// What one `GET /api/leases/:id` costs the app in CPU: the built app (`next start`) answers
// `--requests` requests of each of three kinds at `--concurrency` (after 300 each to warm up),
// in three rounds that take the kinds in turn:
//   no_session_401     no cookie: the proxy, the route's dispatch and a JSON 401 (the floor
//                      Next.js puts under every request to this route);
//   unknown_lease_404  the cookie unsealed and the one statement, for a lease not there;
//   read_200           the read of a real lease.
// The app's CPU for each comes from /proc/<pid>/stat (user + system, the process and its
// children), so startup and warm-up stay out of it. The ceiling this puts on reads/s is
// 1,000 ms ÷ (CPU ms per read) on the one core the app's event loop has, whatever the
// database does. `--cpu-prof` also profiles the app (bench/support/cpu-prof-preload.mjs; the
// profiler adds its own cost, so the CPU figures of a profiled run are a little higher), its
// shares covering the whole process life.
//
// `--events N` reads a closed lease with N events instead of a fresh one (the performance target "a lease
// with 200 events still reads in under 10 ms at p95"), without the scale phase's 1M-row seed:
// first the domain read (lib/leases readLease, in this process) one at a time, in turns with
// the read as it was before paging (the whole timeline, decision 0043), DOMAIN_READS each; the
// plan of readLease's statement; then over HTTP one at a time, in turns with a lease of
// SHORT_EVENTS events; then the three kinds above, with the long lease as the read.
//
// `--against-next-start` also starts the app with bare `next start` (no server.mjs gate, decision
// 0048) on the same database and measures the three kinds there too, `<kind>_next_start`, in
// the same rounds: what the gate costs a request, from one run.
//
// Results: bench/results/reads-<date>-<label>.json.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { eq, sql } from "drizzle-orm";
import { appUser } from "@/db/schema";
import type { Db } from "@/db/client";
import { leaseReadStatement, readLease } from "@/lib/leases";
import { startAppServer } from "@/tests/harness/app-server";
import { option, seedLongLease, withOneActorDb } from "./support/bench-db";
import { distribution, http, signIn } from "@/tests/harness/app-client";
import { cpuProfEnv, printProfile, summarizeProfiles } from "./support/cpu-profile";
import { processTreeCpuMs } from "./support/proc-cpu";

const REQUESTS = Number(option("requests", "4000"));
const CONCURRENCY = Number(option("concurrency", "8"));
const EVENTS = Number(option("events", "0"));
const DOMAIN_READS = 400;
const SHORT_EVENTS = 5;
const CPU_PROF = process.argv.includes("--cpu-prof");
const AGAINST_NEXT_START = process.argv.includes("--against-next-start");
const LABEL = option("label", new Date().toISOString().slice(11, 16).replace(":", ""));
const PASSWORD = "claimcheck-bench-password";
const PROFILE_DIR = path.join("test-results", "bench-reads-cpu-prof");
async function reads(url: string, path: string, cookie: string | undefined, n: number, expect: number) {
  const ms: number[] = [];
  let failures = 0;
  let left = n;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const t = performance.now();
        const res = await http(url, "GET", path, cookie ? { cookie } : {});
        ms.push(performance.now() - t);
        if (res.status !== expect) failures++;
      }
    }),
  );
  return { perSecond: Math.round((n / ((performance.now() - started) / 1000)) * 10) / 10, failures, latency: distribution(ms), ms };
}

/** A kind of request; `app`, when given, is the server it goes to (else measure()'s own). */
type Kind = { path: string; cookie: string | undefined; expect: number; app?: { url: string; pid?: number } };
const ROUNDS = 3;

/**
 * `--requests` of each kind, with the app's CPU for them, in ROUNDS rounds that take the
 * kinds in turn, so neither the JIT's warming nor a change in the machine's load favours one.
 */
async function measure(app: { url: string; pid?: number }, kinds: Record<string, Kind>) {
  const totals = new Map<string, { cpu: number; seconds: number; failures: number; ms: number[] }>();
  for (const [name, k] of Object.entries(kinds)) {
    await reads((k.app ?? app).url, k.path, k.cookie, 300, k.expect); // warm-up: the route compiled, the pools full
    totals.set(name, { cpu: 0, seconds: 0, failures: 0, ms: [] });
  }
  const each = Math.ceil(REQUESTS / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, k] of Object.entries(kinds)) {
      const t = totals.get(name)!;
      const to = k.app ?? app;
      const before = processTreeCpuMs(to.pid!);
      const started = performance.now();
      const measured = await reads(to.url, k.path, k.cookie, each, k.expect);
      t.seconds += (performance.now() - started) / 1000;
      t.cpu += processTreeCpuMs(to.pid!) - before;
      t.failures += measured.failures;
      t.ms.push(...measured.ms);
    }
  }
  return Object.fromEntries(
    [...totals].map(([name, t]) => {
      const n = each * ROUNDS;
      const perRequest = Math.round((t.cpu / n) * 100) / 100;
      return [
        name,
        {
          requests: n,
          perSecond: Math.round((n / t.seconds) * 10) / 10,
          failures: t.failures,
          latency: distribution(t.ms),
          app_cpu_ms: Math.round(t.cpu),
          app_cpu_ms_per_request: perRequest,
          ceiling_per_s_one_core: Math.round(1000 / perRequest),
        },
      ];
    }),
  );
}

/** A closed lease of the actor's with `events` events (bench-db's seedLongLease, as scale.ts seeds one). */
async function longLease(db: Db, email: string, invoiceId: string, events: number) {
  const [user] = await db.select({ id: appUser.id }).from(appUser).where(eq(appUser.email, email));
  return { leaseId: await seedLongLease(db, user!.id, invoiceId, events), actorId: user!.id };
}

/** EXPLAIN ANALYZE of readLease's own statement (leaseReadStatement) on the lease: how many events it touches. */
async function readPlan(db: Db, actorId: string, leaseId: string): Promise<string> {
  const rows = await db.execute(sql`explain (analyze, costs off, timing off, summary off) ${leaseReadStatement(db, actorId, leaseId)}`);
  return [...(rows as unknown as Record<string, string>[])].map((r) => Object.values(r)[0]).join("\n");
}

/**
 * The domain read of the lease, one at a time, taking turns with the read as it was before
 * paging (decision 0043: the whole timeline in one json_agg, mapped as readLease mapped it), so
 * the two are compared in one run, on the same machine load.
 */
async function domainReads(db: Db, actorId: string, leaseId: string) {
  const paged: number[] = [];
  const whole: number[] = [];
  let returned = 0;
  let wholeReturned = 0;
  for (let i = 0; i < DOMAIN_READS + 50; i++) {
    let t = performance.now();
    const view = await readLease(db, actorId, leaseId);
    if (i >= 50) paged.push(performance.now() - t); // the first 50 warm the pool and the plans
    if (!view) throw new Error("the long lease did not read");
    returned = view.events.length;
    t = performance.now();
    const rows = await db.execute(sql`select l.*, now() as now, coalesce((select json_agg(json_build_object('id', e.id, 'at', e.at, 'kind', e.kind, 'detail', e.detail) order by e.id)
      from lease_event e where e.lease_id = l.id), '[]'::json) as events from inference_lease l where l.id = ${leaseId} and l.actor_id = ${actorId}`);
    const [row] = [...(rows as unknown as { events: { id: number; at: string; kind: string; detail: unknown }[] }[])];
    const events = row!.events.map((e) => ({ id: Number(e.id), at: new Date(e.at), kind: e.kind, detail: e.detail }));
    if (i >= 50) whole.push(performance.now() - t);
    wholeReturned = events.length;
  }
  return { latency: distribution(paged), eventsReturned: returned, whole: { latency: distribution(whole), eventsReturned: wholeReturned } };
}

await withOneActorDb("cc_bench_rd", PASSWORD, async ({ url: dbUrl, handle, email, invoiceId }) => {
  fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  const long = EVENTS > 0 ? await longLease(handle.db, email, invoiceId, EVENTS) : null;
  // A lease with a lifecycle's handful of events, read in turns with the long one over HTTP.
  const short = EVENTS > 0 ? await longLease(handle.db, email, invoiceId, SHORT_EVENTS) : null;
  const domain = long ? await domainReads(handle.db, long.actorId, long.leaseId) : null;
  const plan = long ? await readPlan(handle.db, long.actorId, long.leaseId) : null;
  if (plan) console.info(`the read's plan:\n${plan}`);
  if (domain) {
    console.info(`domain read of a ${EVENTS}-event lease (${domain.eventsReturned} events returned): p50 ${domain.latency.p50} ms, p95 ${domain.latency.p95} ms`);
    console.info(`  in turns with the read before paging (${domain.whole.eventsReturned} events): p50 ${domain.whole.latency.p50} ms, p95 ${domain.whole.latency.p95} ms`);
  }
  const app = await startAppServer({
    databaseUrl: dbUrl,
    name: "bench-reads",
    model: { provider: "local", latencyMs: 0 },
    ...(CPU_PROF
      ? { env: cpuProfEnv(PROFILE_DIR) }
      : {}),
  });
  let bare: Awaited<ReturnType<typeof startAppServer>> | undefined;
  let kinds: Awaited<ReturnType<typeof measure>>;
  let single: { long: number[]; short: number[] } | null = null;
  try {
    if (AGAINST_NEXT_START) {
      bare = await startAppServer({ databaseUrl: dbUrl, name: "bench-reads-next-start", model: { provider: "local", latencyMs: 0 }, bareNextStart: true });
    }
    const cookie = await signIn(app.url, email, PASSWORD);
    let leaseId = long?.leaseId;
    if (!leaseId) {
      const opened = await http(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
      if (opened.status !== 201) throw new Error(`POST /api/leases: ${opened.status}`);
      leaseId = opened.body.lease_id as string;
    }
    // The long lease one at a time (as scale.ts measures the 200-event read), in turns with a short one.
    if (long && short) {
      await reads(app.url, `/api/leases/${long.leaseId}`, cookie, 100, 200); // warm-up
      single = { long: [], short: [] };
      for (let i = 0; i < 200; i++) {
        for (const [id, into] of [[long.leaseId, single.long], [short.leaseId, single.short]] as const) {
          const t = performance.now();
          const res = await http(app.url, "GET", `/api/leases/${id}`, { cookie });
          into.push(performance.now() - t);
          if (res.status !== 200) throw new Error(`GET /api/leases/:id: ${res.status}`);
        }
      }
    }
    const three: Record<string, Kind> = {
      // Next.js's floor for this route: the proxy, the route's dispatch and a JSON 401, no cookie to unseal.
      no_session_401: { path: `/api/leases/${leaseId}`, cookie: undefined, expect: 401 },
      // The cookie unsealed and the one statement, for a lease that is not there.
      unknown_lease_404: { path: `/api/leases/${crypto.randomUUID()}`, cookie, expect: 404 },
      read_200: { path: `/api/leases/${leaseId}`, cookie, expect: 200 },
    };
    // The same three on `next start` without server.mjs's gate, in the same rounds (decision 0048).
    if (bare) for (const [name, k] of Object.entries({ ...three })) three[`${name}_next_start`] = { ...k, app: bare };
    kinds = await measure(app, three);
  } finally {
    await app.stop();
    await bare?.stop();
  }
  const profile = CPU_PROF ? summarizeProfiles(PROFILE_DIR, 20) : undefined;
  const measured = kinds.read_200!;
  const perRead = measured.app_cpu_ms_per_request;
  const out = {
    at: new Date().toISOString(),
    label: LABEL,
    machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, node: process.version, loadavg: os.loadavg() },
    requests: REQUESTS,
    concurrency: CONCURRENCY,
    lease_events: EVENTS > 0 ? EVENTS : null,
    events_returned: domain?.eventsReturned ?? null,
    domain_read_ms: domain?.latency ?? null,
    domain_read_before_paging_ms: domain?.whole.latency ?? null,
    http_read_ms_one_at_a_time: single ? distribution(single.long) : null,
    http_read_ms_one_at_a_time_short_lease: single ? { events: SHORT_EVENTS, ...distribution(single.short) } : null,
    read_plan: plan,
    reads_per_s: measured.perSecond,
    failures: measured.failures,
    latency_ms: measured.latency,
    app_cpu_ms: measured.app_cpu_ms,
    app_cpu_ms_per_read: perRead,
    ceiling_reads_per_s_one_core: Math.round(1000 / perRead),
    profiled: CPU_PROF,
    kinds,
    profile,
  };
  console.info(`${REQUESTS} reads at ${CONCURRENCY}: ${measured.perSecond}/s (p50 ${measured.latency.p50} ms, p95 ${measured.latency.p95} ms, ${measured.failures} failed)`);
  if (single) {
    const [l, sh] = [distribution(single.long), distribution(single.short)];
    console.info(`one at a time: p50 ${l.p50} ms, p95 ${l.p95} ms; in turns, a ${SHORT_EVENTS}-event lease: p50 ${sh.p50} ms, p95 ${sh.p95} ms`);
  }
  console.info(`app CPU ${measured.app_cpu_ms} ms: ${perRead} ms per read, so at most ${out.ceiling_reads_per_s_one_core} reads/s on one core`);
  for (const [kind, k] of Object.entries(kinds)) {
    console.info(`  ${kind.padEnd(18)} ${String(k.perSecond).padStart(7)}/s  p50 ${k.latency.p50} ms  app CPU ${k.app_cpu_ms_per_request} ms a request  (${k.failures} unexpected)`);
  }
  if (profile) printProfile(profile);
  const file = path.join("bench", "results", `reads-${out.at.slice(0, 10)}-${LABEL}.json`);
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.info(`wrote ${file}`);
});
