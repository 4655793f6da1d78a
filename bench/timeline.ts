// `npm run bench timeline [-- --lifecycles 40]`
//
// Where the wall time of one lease lifecycle goes, over HTTP, one lifecycle at a time: the
// built app (`next start`) with the local Inngest stand-in and the local model at 0 ms, its
// traces exported over OTLP to a collector in this process. For each lifecycle (POST
// /api/leases → the stream's `proposed` frame → apply → the `applied` frame) it lines up
// the client's marks with the app's spans (Next.js's request spans, its outgoing fetches, the
// lease transitions and Inngest steps of lib/tracing.ts) and prints the median lifecycle's
// timeline, then, over all lifecycles, the time inside the app's requests by route and the time
// in none of them (the stand-in, the SDK's round trips, the client). Then `--cancels` cancels
// (default 20), one at a time, each during a 4 s generation, and the median one's spans.
// Then the app's CPU by stage of a lifecycle (/proc, no tracing). The CPU side of the same
// question by function is `npm run bench lifecycle -- --cpu-prof`.
//
// Results: bench/results/timeline-<date>-<label>.json.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startAppServer } from "@/tests/harness/app-server";
import { option, withOneActorDb } from "./support/bench-db";
import { distribution, http, openEventStream, signIn } from "@/tests/harness/app-client";
import { startCollector, type ReceivedSpan as Span } from "@/tests/harness/otlp-collector";
import { ownCpuMs, processTreeCpuMs } from "./support/proc-cpu";

const LIFECYCLES = Number(option("lifecycles", "40"));
const CANCELS = Number(option("cancels", "20"));
const LABEL = option("label", new Date().toISOString().slice(11, 16).replace(":", ""));
const PASSWORD = "claimcheck-bench-password";

/** A span's label: the route of a request span, the URL path of a fetch, else its name. */
function label(s: Span): string {
  const a = s.attributes;
  const method = (a["http.method"] ?? a["http.request.method"]) as string | undefined;
  const route = (a["next.route"] ?? a["http.route"]) as string | undefined;
  const url = (a["http.url"] ?? a["url.full"]) as string | undefined;
  if (s.name.startsWith("fetch") && url) return `fetch ${method ?? ""} ${new URL(url).pathname.replace(/[0-9A-Z]{26}|[0-9a-f-]{36}/g, ":id")}`;
  if (route && method && !s.name.includes(" /")) return `${method} ${route}`;
  return s.name.replace(/[0-9a-f-]{36}/g, ":id");
}

const collector = await startCollector();
try {
  await withOneActorDb("cc_bench_tl", PASSWORD, async ({ url: dbUrl, email, invoiceId }) => {
    const app = await startAppServer({
      databaseUrl: dbUrl,
      name: "bench-timeline",
      model: { provider: "local", latencyMs: 0 },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_SCHEDULE_DELAY: "100" },
    });
    type Marks = { click: number; opened: number; streaming: number; proposed: number; applying: number; answered: number; applied: number };
    const lifecycles: Marks[] = [];
    try {
      const cookie = await signIn(app.url, email, PASSWORD);
      // performance.now() on the Unix clock, to line up with the spans.
      const now = () => performance.timeOrigin + performance.now();
      for (let i = 0; i < LIFECYCLES + 5; i++) {
        const m = { click: now() } as Marks;
        const open = await http(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
        if (open.status !== 201) throw new Error(`POST /api/leases: ${open.status} ${JSON.stringify(open.body)}`);
        m.opened = now();
        const stream = await openEventStream(app.url, open.body.lease_id as string, cookie);
        m.streaming = now();
        try {
          const proposed = await stream.next((f) => f.lease.status !== "open", 30_000);
          m.proposed = performance.timeOrigin + proposed.at;
          m.applying = now();
          const apply = await http(app.url, "POST", `/api/leases/${open.body.lease_id}/apply`, { cookie });
          if (apply.status !== 200) throw new Error(`apply: ${apply.status}`);
          m.answered = now();
          const applied = await stream.next((f) => f.lease.status === "applied", 30_000);
          m.applied = Math.max(m.answered, performance.timeOrigin + applied.at);
        } finally {
          stream.close();
        }
        // The first few warm the app's routes up; they are left out.
        if (i >= 5) lifecycles.push(m);
        await new Promise((r) => setTimeout(r, 30));
      }
      await new Promise((r) => setTimeout(r, 1500)); // the last spans' export
    } finally {
      await app.stop();
    }

    // Cancels, one at a time, each 150 ms into a 4 s generation (the local model, which the
    // close aborts): the cancel request's own spans.
    const slow = await startAppServer({
      databaseUrl: dbUrl,
      name: "bench-timeline-cancel",
      model: { provider: "local", latencyMs: 4_000 },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_SCHEDULE_DELAY: "100" },
    });
    const cancels: { start: number; end: number }[] = [];
    try {
      const cookie = await signIn(slow.url, email, PASSWORD);
      const now = () => performance.timeOrigin + performance.now();
      for (let i = 0; i < CANCELS + 3; i++) {
        const open = await http(slow.url, "POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
        if (open.status !== 201) throw new Error(`POST /api/leases: ${open.status} ${JSON.stringify(open.body)}`);
        await new Promise((r) => setTimeout(r, 150));
        const start = now();
        const res = await http(slow.url, "POST", `/api/leases/${open.body.lease_id}/cancel`, { cookie });
        const end = now();
        if (res.status !== 200) throw new Error(`cancel: ${res.status}`);
        if (i >= 3) cancels.push({ start, end });
        await new Promise((r) => setTimeout(r, 300)); // the run's end, before the next open
      }
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      await slow.stop();
    }

    // The app's CPU by stage (/proc; no tracing, so its export costs nothing here), one
    // lifecycle at a time with the local model at 300 ms, so that the stages do not overlap:
    // the open (with the run's start: the stand-in's call of /api/inngest, the generate step's
    // read, up to the model call), the stream's start and first frame, the generation after
    // the model's answer (the steps' checkpoints, propose, the `proposed` frame), apply to its
    // answer, and the `applied` frame with the stream's end. Ticks are 10 ms: each stage's figure is a mean over the lifecycles.
    const staged = await startAppServer({ databaseUrl: dbUrl, name: "bench-timeline-cpu", model: { provider: "local", latencyMs: 300 } });
    const stageNames = ["open_and_run_start", "stream_first_frame", "generation_after_model", "apply_answered", "applied_frame_and_stream_end"] as const;
    const stageCpu = Object.fromEntries(stageNames.map((k) => [k, { app: 0, bench: 0 }])) as Record<(typeof stageNames)[number], { app: number; bench: number }>;
    let stagedLifecycles = 0;
    try {
      const cookie = await signIn(staged.url, email, PASSWORD);
      const snap = () => ({ app: processTreeCpuMs(staged.pid!), bench: ownCpuMs() });
      for (let i = 0; i < LIFECYCLES + 5; i++) {
        const t0 = snap();
        const open = await http(staged.url, "POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
        if (open.status !== 201) throw new Error(`POST /api/leases: ${open.status} ${JSON.stringify(open.body)}`);
        await new Promise((r) => setTimeout(r, 100)); // the run reaches the model, which takes 300 ms
        const t1 = snap();
        const stream = await openEventStream(staged.url, open.body.lease_id as string, cookie);
        let t2, t3, t3a;
        try {
          await stream.next((f) => f.lease.status === "open", 10_000);
          t2 = snap();
          await stream.next((f) => f.lease.status !== "open", 30_000);
          t3 = snap();
          const apply = await http(staged.url, "POST", `/api/leases/${open.body.lease_id}/apply`, { cookie });
          if (apply.status !== 200) throw new Error(`apply: ${apply.status}`);
          t3a = snap();
          await stream.next((f) => f.lease.status === "applied", 30_000);
        } finally {
          stream.close();
        }
        await new Promise((r) => setTimeout(r, 30)); // the stream's end on the app's side
        const t4 = snap();
        if (i < 5) continue; // warm-up
        stagedLifecycles++;
        const points = [t0, t1, t2, t3, t3a, t4];
        stageNames.forEach((k, j) => {
          stageCpu[k].app += points[j + 1]!.app - points[j]!.app;
          stageCpu[k].bench += points[j + 1]!.bench - points[j]!.bench;
        });
      }
    } finally {
      await staged.stop();
    }
    const cpuByStage = Object.fromEntries(
      stageNames.map((k) => [k, { app_ms: Math.round((stageCpu[k].app / stagedLifecycles) * 10) / 10, bench_ms: Math.round((stageCpu[k].bench / stagedLifecycles) * 10) / 10 }]),
    );

    // Per lifecycle: the spans that started inside it, and the time covered by none of the
    // app's request spans.
    // Next.js names the span of a whole request "<METHOD> <route>" (BaseServer.handleRequest).
    const isRequest = (s: Span) => /^(GET|POST|PUT|PATCH|DELETE) \//.test(s.name);
    const rows = lifecycles.map((m) => {
      const inside = collector.spans.filter((s) => s.start >= m.click - 1 && s.start <= m.applied).sort((a, b) => a.start - b.start);
      const requests = inside.filter(isRequest);
      // Union of the request spans' intervals, clipped to the lifecycle.
      let covered = 0;
      let until = m.click;
      for (const r of [...requests].sort((a, b) => a.start - b.start)) {
        const s = Math.max(r.start, until);
        const e = Math.min(r.end, m.applied);
        if (e > s) covered += e - s;
        until = Math.max(until, r.end);
      }
      return { m, inside, requests, total: m.applied - m.click, covered };
    });
    const byTotal = [...rows].sort((a, b) => a.total - b.total);
    const median = byTotal[Math.floor(byTotal.length / 2)]!;
    const rel = (t: number) => (t - median.m.click).toFixed(1).padStart(7);
    console.info(`\nthe median lifecycle (${median.total.toFixed(1)} ms), times from the click in ms:`);
    const marks = Object.entries(median.m).map(([k, t]) => ({ at: t, line: `${rel(t)}            client: ${k}` }));
    const spanLines = median.inside.map((s) => ({ at: s.start, line: `${rel(s.start)} ${(s.end - s.start).toFixed(1).padStart(7)} ms  ${label(s)}` }));
    for (const { line } of [...marks, ...spanLines].sort((a, b) => a.at - b.at)) console.info(line);

    // Over all lifecycles: request time by route, and the time in no request.
    const byRoute = new Map<string, number[]>();
    for (const r of rows)
      for (const s of r.requests) {
        const k = label(s);
        byRoute.set(k, [...(byRoute.get(k) ?? []), s.end - s.start]);
      }
    const routes = [...byRoute].map(([route, ds]) => ({
      route,
      per_lifecycle: Math.round((ds.length / rows.length) * 100) / 100,
      ms_p50: distribution(ds).p50,
      ms_per_lifecycle: Math.round((ds.reduce((a, b) => a + b, 0) / rows.length) * 10) / 10,
    }));
    routes.sort((a, b) => b.ms_per_lifecycle - a.ms_per_lifecycle);
    const totals = distribution(rows.map((r) => r.total));
    const uncovered = distribution(rows.map((r) => r.total - r.covered));
    const phases = {
      click_to_opened: distribution(rows.map((r) => r.m.opened - r.m.click)),
      opened_to_streaming: distribution(rows.map((r) => r.m.streaming - r.m.opened)),
      streaming_to_proposed: distribution(rows.map((r) => r.m.proposed - r.m.streaming)),
      proposed_to_apply_answered: distribution(rows.map((r) => r.m.answered - r.m.proposed)),
      answered_to_applied_frame: distribution(rows.map((r) => r.m.applied - r.m.answered)),
    };
    console.info(`\n${rows.length} lifecycles, one at a time: total p50 ${totals.p50} ms (p95 ${totals.p95}); in no app request p50 ${uncovered.p50} ms`);
    for (const [k, d] of Object.entries(phases)) console.info(`  ${k.padEnd(28)} p50 ${String(d.p50).padStart(7)} ms  p95 ${String(d.p95).padStart(7)} ms`);
    console.info("\napp requests per lifecycle (Next.js request spans):");
    for (const r of routes) console.info(`  ${r.route.padEnd(48)} ${String(r.per_lifecycle).padStart(5)} × p50 ${String(r.ms_p50).padStart(6)} ms = ${String(r.ms_per_lifecycle).padStart(6)} ms`);

    const cancelMs = distribution(cancels.map((c) => c.end - c.start));
    const medianCancel = [...cancels].sort((a, b) => a.end - a.start - (b.end - b.start))[Math.floor(cancels.length / 2)]!;
    const cancelLines = collector.spans
      .filter((sp) => sp.start >= medianCancel.start - 1 && sp.start <= medianCancel.end)
      .sort((a, b) => a.start - b.start)
      .map((sp) => `${(sp.start - medianCancel.start).toFixed(1).padStart(7)} ${(sp.end - sp.start).toFixed(1).padStart(7)} ms  ${label(sp)}`);
    console.info(`\nCPU ms per lifecycle by stage, one at a time, the model at 300 ms (${stagedLifecycles} lifecycles; app = next start, bench = the clients and the Inngest stand-in):`);
    for (const [k, v] of Object.entries(cpuByStage)) console.info(`  ${k.padEnd(24)} app ${String(v.app_ms).padStart(6)}   bench ${String(v.bench_ms).padStart(6)}`);

    console.info(`\n${cancels.length} cancels one at a time during a 4 s generation: answered p50 ${cancelMs.p50} ms, p95 ${cancelMs.p95} ms; the median (${(medianCancel.end - medianCancel.start).toFixed(1)} ms):`);
    for (const line of cancelLines) console.info(line);

    const out = {
      at: new Date().toISOString(),
      label: LABEL,
      machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, node: process.version, loadavg: os.loadavg() },
      lifecycles: rows.length,
      total_ms: totals,
      in_no_request_ms: uncovered,
      phases_ms: phases,
      requests: routes,
      median_lifecycle: [...marks, ...spanLines].sort((a, b) => a.at - b.at).map((l) => l.line.trim()),
      cpu_ms_by_stage: cpuByStage,
      cancel_answered_ms: cancelMs,
      median_cancel: cancelLines.map((l) => l.trim()),
    };
    const file = path.join("bench", "results", `timeline-${out.at.slice(0, 10)}-${LABEL}.json`);
    fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
    console.info(`\nwrote ${file}`);
  });
} finally {
  await collector.close();
}
