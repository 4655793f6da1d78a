// `npm run bench reads [-- --requests 4000 --concurrency 8 --cpu-prof --label x]`
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
// Results: bench/results/reads-<date>-<label>.json.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startAppServer } from "@/tests/support/app-server";
import { option, withOneActorDb } from "./support/bench-db";
import { distribution, http, signIn } from "@/tests/support/app-client";
import { summarizeProfiles } from "./support/cpu-profile";
import { processTreeCpuMs } from "./support/proc-cpu";

const REQUESTS = Number(option("requests", "4000"));
const CONCURRENCY = Number(option("concurrency", "8"));
const CPU_PROF = process.argv.includes("--cpu-prof");
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

type Kind = { path: string; cookie: string | undefined; expect: number };
const ROUNDS = 3;

/**
 * `--requests` of each kind, with the app's CPU for them, in ROUNDS rounds that take the
 * kinds in turn, so neither the JIT's warming nor a change in the machine's load favours one.
 */
async function measure(app: { url: string; pid?: number }, kinds: Record<string, Kind>) {
  const totals = new Map<string, { cpu: number; seconds: number; failures: number; ms: number[] }>();
  for (const [name, k] of Object.entries(kinds)) {
    await reads(app.url, k.path, k.cookie, 300, k.expect); // warm-up: the route compiled, the pools full
    totals.set(name, { cpu: 0, seconds: 0, failures: 0, ms: [] });
  }
  const each = Math.ceil(REQUESTS / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, k] of Object.entries(kinds)) {
      const t = totals.get(name)!;
      const before = processTreeCpuMs(app.pid!);
      const started = performance.now();
      const measured = await reads(app.url, k.path, k.cookie, each, k.expect);
      t.seconds += (performance.now() - started) / 1000;
      t.cpu += processTreeCpuMs(app.pid!) - before;
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

await withOneActorDb("cc_bench_rd", PASSWORD, async ({ url: dbUrl, email, invoiceId }) => {
  fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
  const app = await startAppServer({
    databaseUrl: dbUrl,
    name: "bench-reads",
    model: { provider: "local", latencyMs: 0 },
    ...(CPU_PROF
      ? { env: { NODE_OPTIONS: `--import ${path.resolve("bench/support/cpu-prof-preload.mjs")}`, CPU_PROF_DIR: path.resolve(PROFILE_DIR) } }
      : {}),
  });
  let kinds: Awaited<ReturnType<typeof measure>>;
  try {
    const cookie = await signIn(app.url, email, PASSWORD);
    const opened = await http(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
    if (opened.status !== 201) throw new Error(`POST /api/leases: ${opened.status}`);
    const leaseId = opened.body.lease_id as string;
    kinds = await measure(app, {
      // Next.js's floor for this route: the proxy, the route's dispatch and a JSON 401, no cookie to unseal.
      no_session_401: { path: `/api/leases/${leaseId}`, cookie: undefined, expect: 401 },
      // The cookie unsealed and the one statement, for a lease that is not there.
      unknown_lease_404: { path: `/api/leases/${crypto.randomUUID()}`, cookie, expect: 404 },
      read_200: { path: `/api/leases/${leaseId}`, cookie, expect: 200 },
    });
  } finally {
    await app.stop();
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
  console.info(`app CPU ${measured.app_cpu_ms} ms: ${perRead} ms per read, so at most ${out.ceiling_reads_per_s_one_core} reads/s on one core`);
  for (const [kind, k] of Object.entries(kinds)) {
    console.info(`  ${kind.padEnd(18)} ${String(k.perSecond).padStart(7)}/s  p50 ${k.latency.p50} ms  app CPU ${k.app_cpu_ms_per_request} ms a request  (${k.failures} unexpected)`);
  }
  if (profile) {
    console.info(`profile (whole process, ${profile.busy_ms} ms busy): by package`);
    for (const r of profile.by_owner) console.info(`  ${String(r.share).padStart(5)} %  ${r.name}`);
    console.info("by function (self time)");
    for (const r of profile.by_function) console.info(`  ${String(r.share).padStart(5)} %  ${r.name}`);
  }
  const file = path.join("bench", "results", `reads-${out.at.slice(0, 10)}-${LABEL}.json`);
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.info(`wrote ${file}`);
});
