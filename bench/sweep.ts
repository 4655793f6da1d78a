// `npm run bench sweep` (the default of `npm run bench`): what the expiry sweep's partial index buys, measured as a ratio in one run.
// Fills a fresh database with many closed leases and a few overdue ones, then times the
// sweep (lib/leases/close.ts expireOverdue) with the index and without it, on PostgreSQL when
// DATABASE_URL is set (else the local server at 127.0.0.1:5432) and on PGlite.
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { openDb, type DbHandle } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { expireOverdue } from "@/lib/leases";

const CLOSED = Number(process.env.BENCH_CLOSED ?? 200_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 2_000); // generations running, not yet due
const OVERDUE = 5; // a few abandoned leases per minute: the common case for the cron sweep
const REPEATS = 7;

async function fill(h: DbHandle) {
  await h.db.execute(sql`insert into app_user (id, email, name, password_hash) values
    ('00000000-0000-4000-8000-000000000001', 'bench@example.test', 'Bench', 'x')`);
  await h.db.execute(sql`insert into invoice (owner_id, number, counterparty, currency, total_cents, issued_on, due_on)
    select '00000000-0000-4000-8000-000000000001', 'B-' || g, 'Bench Co', 'EUR', 100, '2026-11-01', '2026-12-01'
    from generate_series(1, ${CLOSED + OVERDUE + IN_FLIGHT}::int) g`);
  // Closed history: the bulk of a real table.
  await h.db.execute(sql`insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at)
    select owner_id, id, 'summarize_invoice', (array['applied','expired','rejected'])[1 + (row_number() over () % 3)],
           now() - interval '1 day'
    from invoice where substr(number, 3)::int <= ${CLOSED}`);
  await h.db.execute(sql`insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at)
    select owner_id, id, 'summarize_invoice', 'open', now() + interval '1 hour'
    from invoice where substr(number, 3)::int > ${CLOSED + OVERDUE}`);
  await h.db.execute(sql`analyze`);
}

async function overdueBatch(h: DbHandle) {
  await h.db.execute(sql`insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at)
    select owner_id, id, 'summarize_invoice', 'open', now() - interval '1 second'
    from invoice where number in (select 'B-' || g from generate_series(${CLOSED + 1}::int, ${CLOSED + OVERDUE}::int) g)`);
}

async function timeSweep(h: DbHandle): Promise<number[]> {
  const samples: number[] = [];
  await expireOverdue(h.db, 500); // warm-up
  for (let i = 0; i < REPEATS; i++) {
    await overdueBatch(h);
    const started = performance.now();
    const { expired } = await expireOverdue(h.db, 500);
    samples.push(performance.now() - started);
    if (expired.length !== OVERDUE) throw new Error(`expected ${OVERDUE} expired, got ${expired.length}`);
  }
  return samples;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function benchOne(label: string, h: DbHandle) {
  await migrateDb(h);
  console.info(`[${label}] filling ${CLOSED} closed leases...`);
  await fill(h);
  const withIndex = await timeSweep(h);
  // Without the sweep index the planner still has the other partial indexes on in-flight
  // rows (one-in-flight, session); without any of them it must scan the table.
  await h.db.execute(sql`drop index inference_lease_sweep_idx`);
  await h.db.execute(sql`analyze inference_lease`);
  const otherPartials = await timeSweep(h);
  await h.db.execute(sql`drop index inference_lease_one_in_flight`);
  await h.db.execute(sql`drop index inference_lease_session_idx`);
  await h.db.execute(sql`analyze inference_lease`);
  const withoutIndex = await timeSweep(h);
  const result = {
    database: label,
    closed_leases: CLOSED,
    in_flight_not_due: IN_FLIGHT,
    overdue_per_sweep: OVERDUE,
    sweep_ms_median_with_index: Number(median(withIndex).toFixed(2)),
    sweep_ms_median_other_partial_indexes_only: Number(median(otherPartials).toFixed(2)),
    sweep_ms_median_without_index: Number(median(withoutIndex).toFixed(2)),
    ratio_other_partials_over_with: Number((median(otherPartials) / median(withIndex)).toFixed(1)),
    ratio_without_over_with: Number((median(withoutIndex) / median(withIndex)).toFixed(1)),
    samples_ms: {
      with_index: withIndex.map((x) => Number(x.toFixed(2))),
      other_partial_indexes_only: otherPartials.map((x) => Number(x.toFixed(2))),
      without_index: withoutIndex.map((x) => Number(x.toFixed(2))),
    },
  };
  console.info(
    `[${label}] sweep median: ${result.sweep_ms_median_with_index} ms with the sweep index, ` +
      `${result.sweep_ms_median_other_partial_indexes_only} ms with only the other partial indexes (${result.ratio_other_partials_over_with}x), ` +
      `${result.sweep_ms_median_without_index} ms with none (${result.ratio_without_over_with}x)`,
  );
  return result;
}

const results = [];
const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const name = `cc_bench_${Date.now().toString(36)}`;
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
try {
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pg = await openDb({ kind: "postgres", url: url.toString() });
  try {
    results.push(await benchOne("postgresql", pg));
  } finally {
    await pg.close();
    await admin.unsafe(`drop database if exists ${name} with (force)`);
  }
} catch (error) {
  console.warn(`PostgreSQL benchmark not run: ${error instanceof Error ? error.message : error}`);
} finally {
  await admin.end();
}
const lite = await openDb({ kind: "pglite", dataDir: null });
try {
  results.push(await benchOne("pglite", lite));
} finally {
  await lite.close();
}

const out = path.join("bench", "results", "sweep-index.json");
fs.writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), node: process.version, results }, null, 2) + "\n");
console.info(`wrote ${out}`);
