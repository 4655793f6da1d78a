// Close → model request dropped: how long after a lease is cancelled during its model call the
// OpenAI-compatible server sees the call's connection close (docs/decisions/0025). The built
// app under `next start` with the local Inngest stand-in (tests/harness/app-server.ts), on a
// PostgreSQL database of its own, the model faked at the network edge (tests/harness/fake-openai.ts)
// answering only after a minute, so the request ends early only if the app drops it.
//
// Each run: open a lease (POST /api/leases), wait until its model request has reached the fake,
// then POST /api/leases/:id/cancel, and time, to the moment the fake sees the connection close:
//   - from the close itself: the `cancelled` event's `at` (now() of the cancel's transaction,
//     read from the database's clock; the database must run on this machine, so that it and
//     this process read one system clock, as they do on the bench machine and in CI);
//   - from the moment the cancel is sent (an upper bound, the request's own work included);
//   - from the cancel's answer (negative when the drop came first).
//
//   npm run -s tsx:server -- bench/abort.ts [--runs N]     (DATABASE_URL: the server)
//
// `measureCloseToDrop` is exported for `npm run bench` (the lifecycle bench) to call.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openDb } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { hashPassword } from "@/lib/password";
import { ROOT, startAppServer } from "@/tests/harness/app-server";
import { startFakeOpenAI } from "@/tests/harness/fake-openai";

export type Distribution = { n: number; min: number; p50: number; p95: number; max: number };

export type CloseToDropResult = {
  runs: number;
  /** The cancel's transaction (its event's `at`, database clock) → dropped, ms. */
  close_to_dropped_ms: Distribution;
  /** Cancel request sent → the fake model saw the connection close, ms. */
  cancel_sent_to_dropped_ms: Distribution;
  /** Cancel answered (200) → dropped, ms; negative when the drop came before the answer. */
  cancel_answered_to_dropped_ms: Distribution;
  /** Runs whose request was not dropped within 10 s (the call ran on). */
  not_dropped: number;
};

const PASSWORD = "bench-abort-password";
const MODEL_DELAY_MS = 60_000;

function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const r = (x: number) => Math.round(x * 10) / 10;
  return { n: sorted.length, min: r(sorted[0] ?? NaN), p50: r(at(0.5)), p95: r(at(0.95)), max: r(sorted.at(-1) ?? NaN) };
}

async function call(base: string, method: string, urlPath: string, opts: { cookie?: string; json?: unknown } = {}) {
  const res = await fetch(`${base}${urlPath}`, {
    method,
    headers: { ...(opts.cookie ? { cookie: opts.cookie } : {}), ...(opts.json !== undefined ? { "content-type": "application/json" } : {}) },
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null, headers: res.headers };
}

/**
 * Runs `runs` cancels during a model call against a fresh database on the PostgreSQL server at
 * `adminUrl` (dropped afterwards) and returns the distributions. Starts and stops its own app,
 * stand-in and fake model.
 */
export async function measureCloseToDrop(opts: { adminUrl: string; runs?: number; log?: (line: string) => void }): Promise<CloseToDropResult> {
  const runs = opts.runs ?? 50;
  const log = opts.log ?? (() => {});
  const name = `cc_bench_abort_${Date.now().toString(36)}`;
  const url = new URL(opts.adminUrl);
  url.pathname = `/${name}`;
  const admin = postgres(opts.adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const fake = await startFakeOpenAI();
  fake.respondWith({ kind: "slow", delayMs: MODEL_DELAY_MS });
  let app: Awaited<ReturnType<typeof startAppServer>> | undefined;
  try {
    const handle = await openDb({ kind: "postgres", url: url.toString(), max: 2 });
    await migrateDb(handle);
    const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
    const [user] = await sql<{ id: string }[]>`
      insert into app_user (email, name, password_hash) values ('abort-bench@example.test', 'Abort Bench', ${await hashPassword(PASSWORD)})
      returning id`;
    const invoices = await sql<{ id: string }[]>`
      insert into invoice (owner_id, number, counterparty, currency, total_cents, issued_on, due_on)
      select ${user!.id}, 'AB-' || g, 'Abort Bench Co', 'EUR', 100, '2026-11-01', '2026-12-01' from generate_series(1, ${runs}::int) g
      returning id`;
    await handle.close();

    app = await startAppServer({
      databaseUrl: url.toString(),
      name: "abort-bench",
      model: { provider: "openai-compatible", baseUrl: fake.baseURL, apiKey: "sk-bench-not-a-real-key", name: "fake-model", timeoutMs: 120_000 },
    });
    const signedIn = await call(app.url, "POST", "/api/session", { json: { email: "abort-bench@example.test", password: PASSWORD } });
    if (signedIn.status !== 200) throw new Error(`sign-in answered ${signedIn.status}`);
    const cookie = signedIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");

    const fromClose: number[] = [];
    const fromSent: number[] = [];
    const fromAnswered: number[] = [];
    let notDropped = 0;
    for (const [i, invoice] of invoices.entries()) {
      const opened = await call(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: invoice.id, purpose: "summarize_invoice" } });
      if (opened.status !== 201) throw new Error(`open answered ${opened.status}: ${JSON.stringify(opened.body)}`);
      const leaseId = opened.body!.lease_id as string;
      const request = await fake.nextRequest((r) => r.body.includes(invoice.id));
      const sent = performance.now();
      const cancel = await call(app.url, "POST", `/api/leases/${leaseId}/cancel`, { cookie });
      const answered = performance.now();
      if (cancel.status !== 200) throw new Error(`cancel answered ${cancel.status}: ${JSON.stringify(cancel.body)}`);
      try {
        const dropped = await fake.dropped(request, 10_000);
        fromSent.push(dropped - sent);
        fromAnswered.push(dropped - answered);
        const [closed] = await sql<{ at_ms: number }[]>`
          select extract(epoch from at) * 1000 as at_ms from lease_event where lease_id = ${leaseId} and kind = 'cancelled'`;
        fromClose.push(performance.timeOrigin + dropped - Number(closed!.at_ms));
      } catch {
        notDropped++;
      }
      if ((i + 1) % 10 === 0) log(`${i + 1}/${runs} runs`);
    }
    await sql.end();
    return {
      runs,
      close_to_dropped_ms: distribution(fromClose),
      cancel_sent_to_dropped_ms: distribution(fromSent),
      cancel_answered_to_dropped_ms: distribution(fromAnswered),
      not_dropped: notDropped,
    };
  } finally {
    await app?.stop();
    await fake.close();
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

async function main() {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf("--runs");
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 50;
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error("usage: bench/abort.ts [--runs N] (N >= 1)");
  const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const loadBefore = os.loadavg();
  const result = await measureCloseToDrop({ adminUrl, runs, log: (line) => console.info(`[abort] ${line}`) });
  const out = {
    bench: "close → model request dropped (cancel during the model call)",
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg_before: loadBefore, loadavg_after: os.loadavg() },
    ...result,
  };
  console.table({
    "close (cancel's transaction) → dropped (ms)": result.close_to_dropped_ms,
    "cancel sent → dropped (ms)": result.cancel_sent_to_dropped_ms,
    "cancel answered → dropped (ms)": result.cancel_answered_to_dropped_ms,
  });
  console.info(`[abort] not dropped within 10 s: ${result.not_dropped} of ${result.runs}`);
  const file = path.join(ROOT, "bench", "results", `abort-${out.date.slice(0, 10)}.json`);
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.info(`[abort] wrote ${path.relative(ROOT, file)}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
