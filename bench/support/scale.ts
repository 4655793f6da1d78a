// `npm run bench lifecycle -- --scale`: the same figures on a database with history. Seeds
// 1,000,000 closed leases and 5,000,000 events (generate_series, a few minutes) over 100,000
// invoices of 1,000 other users, then measures the HTTP lifecycle and GET /api/leases/:id at
// 8 workers on it and on a database without it, in alternating rounds, the sweep, the read of
// a lease with 200 events, and prints the EXPLAIN plans of the hot statements.
import { performance } from "node:perf_hooks";
import type postgres from "postgres";
import type { DbHandle } from "@/db/client";
import { expireOverdue, LEASE_EVENTS_PAGE, leaseReadStatement, readLease } from "@/lib/leases";
import { startAppServer } from "@/tests/harness/app-server";
import { distribution, http, signIn } from "@/tests/harness/app-client";
import { seedLongLease } from "./bench-db";
import { readLeasesFor } from "./read-load";

const HISTORY_USERS = 1_000;
const INVOICES_EACH = 100;
const LEASES_EACH = 10; // 1,000 × 100 × 10 = 1,000,000 closed leases
const EVENTS_EACH = 5; // 5,000,000 events
const LONG_TIMELINE = 200;
const SWEEP_OVERDUE = 5;
const SWEEP_REPEATS = 7;

type Worker = { n: number; email: string; actorId: string; invoiceId: string; sessionId: string };
type ScaleInput = {
  sql: postgres.Sql;
  handle: DbHandle;
  workers: Worker[];
  dbUrl: string;
  password: string;
  seconds: number;
  /** A second database made as the first (migrated, the same actors, their own ids). */
  makeTwin: () => Promise<ScaleSide & { close(): Promise<void> }>;
  /** Runs the HTTP lifecycle at 8 workers against `target` for `seconds`; the per-request latencies. */
  httpAt8: (
    target: { appUrl: string; cookies: Map<number, string>; side: ScaleSide },
    seconds: number,
  ) => Promise<{ lifecycles: number; seconds: number; open: number[]; apply: number[] }>;
};

export async function seedHistory(db: postgres.Sql) {
  const started = performance.now();
  // History is made consistent by construction, so the foreign-key and row triggers (the
  // fence's fill-in, the NOTIFY of each event) are skipped while it goes in: as replica
  // (superuser only), in one transaction. Without this the seed took over ten minutes here.
  await db.begin(async (sql) => {
    await sql`set local session_replication_role = replica`;
    await sql`insert into app_user (email, name, password_hash)
      select 'history-' || g || '@example.test', 'History ' || g, 'x' from generate_series(1, ${HISTORY_USERS}) g`;
    await sql`insert into invoice (owner_id, number, counterparty, currency, total_cents, issued_on, due_on)
      select u.id, 'H-' || g, 'History Co', 'EUR', 100, '2026-01-01', '2026-02-01'
      from app_user u cross join generate_series(1, ${INVOICES_EACH}) g where u.email like 'history-%'`;
    await sql`insert into inference_lease (actor_id, invoice_id, purpose, status, closed_reason, deadline_at, created_at, updated_at, invoice_version, run_nonce)
      select i.owner_id, i.id, 'summarize_invoice', (array['applied','expired','rejected'])[1 + g % 3],
             case g % 3 when 1 then 'deadline_passed' when 2 then 'cancelled' end,
             now() - make_interval(days => g), now() - make_interval(days => g, secs => 90), now() - make_interval(days => g), 1, 'history'
      from invoice i cross join generate_series(1, ${LEASES_EACH}) g where i.number like 'H-%'`;
    // Five events a lease.
    await sql`insert into lease_event (lease_id, at, kind, detail)
      select l.id, l.created_at + make_interval(secs => k.n), k.kind, '{"by":"history"}'::jsonb
      from inference_lease l
      cross join (values (1, 'opened'), (2, 'proposed'), (3, 'apply_refused'), (4, 'cancel_refused'), (5, 'applied')) k(n, kind)
      where l.run_nonce = 'history'`;
  });
  await db`vacuum analyze`;
  // Write the seed's dirty pages out now, so the checkpointer's write-back of the seed is not
  // part of the measurements that follow.
  await db`checkpoint`;
  const [counts] = await db<{ leases: string; events: string }[]>`select (select count(*) from inference_lease) as leases, (select count(*) from lease_event) as events`;
  const seeded = { seconds: Math.round((performance.now() - started) / 1000), leases: Number(counts!.leases), events: Number(counts!.events) };
  if (seeded.leases < HISTORY_USERS * INVOICES_EACH * LEASES_EACH || seeded.events < HISTORY_USERS * INVOICES_EACH * LEASES_EACH * EVENTS_EACH) {
    throw new Error(`history seeded short: ${JSON.stringify(seeded)}`);
  }
  return seeded;
}

async function sweepTimes(handle: DbHandle, sql: postgres.Sql): Promise<number[]> {
  const samples: number[] = [];
  await expireOverdue(handle.db, 500);
  for (let i = 0; i < SWEEP_REPEATS; i++) {
    // A few abandoned leases on history invoices (none in flight there).
    await sql`insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at)
      select owner_id, id, 'summarize_invoice', 'open', now() - interval '1 second'
      from invoice where number = any(${Array.from({ length: SWEEP_OVERDUE }, (_, k) => `H-${i * SWEEP_OVERDUE + k + 1}`)}) limit ${SWEEP_OVERDUE}`;
    const t = performance.now();
    const { expired } = await expireOverdue(handle.db, 500);
    samples.push(performance.now() - t);
    if (expired.length === 0) throw new Error("sweep found nothing to expire");
  }
  return samples;
}

async function longTimeline(handle: DbHandle, w: Worker) {
  const leaseId = await seedLongLease(handle.db, w.actorId, w.invoiceId, LONG_TIMELINE);
  const domain: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    const view = await readLease(handle.db, w.actorId, leaseId);
    domain.push(performance.now() - t);
    // The latest page of the timeline, and a cursor for the rest (docs/decisions/0043).
    if (view?.events.length !== LEASE_EVENTS_PAGE || view.eventsBefore === null) throw new Error(`200-event lease read ${view?.events.length} events`);
  }
  return { leaseId, domain: distribution(domain) };
}

/** A drizzle statement as text, its parameters (ids and numbers only) written in, for EXPLAIN. */
function inlined(query: { sql: string; params: unknown[] }): string {
  return query.sql.replace(/\$(\d+)/g, (_, i: string) => {
    const value = query.params[Number(i) - 1];
    return typeof value === "number" ? String(value) : `'${String(value).replaceAll("'", "''")}'`;
  });
}

/** EXPLAIN (ANALYZE) of the statements on the hot path, with a worker's real ids. */
async function plans(sql: postgres.Sql, handle: DbHandle, w: Worker, leaseId: string, historyInvoice: string) {
  const statements: Record<string, string> = {
    // readLease's own statement, its parameters written in (they are ids and numbers).
    "read a lease (GET /api/leases/:id, each push; the 200-event lease)": inlined(leaseReadStatement(handle.db, w.actorId, leaseId).toSQL()),
    "open: expire the invoice's overdue lease in flight": `update inference_lease set status = 'expired' where invoice_id = '${w.invoiceId}' and purpose = 'summarize_invoice' and status in ('open','proposed') and deadline_at <= now()`,
    "apply: lock the lease": `select id, status from inference_lease where id = '${leaseId}' and actor_id = '${w.actorId}' for update`,
    "sweep: overdue leases in flight": `select id from inference_lease where status in ('open','proposed') and deadline_at <= now() order by deadline_at limit 500 for update skip locked`,
    "invoice page: the actor's latest lease on an invoice (10 in history)": `select id from inference_lease where invoice_id = '${historyInvoice}' order by created_at desc, id desc limit 1`,
    "invoice page: count of attempts": `select count(*) from inference_lease where invoice_id = '${historyInvoice}'`,
  };
  // The invoice page's statements once more without the history index (dropped inside the
  // transaction, rolled back): what migration 0003 buys.
  for (const name of Object.keys(statements).filter((n) => n.startsWith("invoice page"))) {
    statements[`${name}, without inference_lease_invoice_history_idx`] = `drop index inference_lease_invoice_history_idx; explain (analyze, costs off, timing on, summary on) ${statements[name]}`;
  }
  const out: Record<string, string> = {};
  for (const [name, text] of Object.entries(statements)) {
    // EXPLAIN ANALYZE runs the statement: each runs in a transaction that is rolled back.
    let rows: Record<string, string>[] = [];
    const rollback = new Error("rollback");
    try {
      await sql.begin(async (tx) => {
        const [drop, explained] = text.startsWith("drop index") ? text.split("; ") : [null, `explain (analyze, costs off, timing on, summary on) ${text}`];
        if (drop) await tx.unsafe(drop);
        rows = (await tx.unsafe(explained!)) as unknown as Record<string, string>[];
        throw rollback;
      });
    } catch (error) {
      if (error !== rollback) rows = [{ plan: `EXPLAIN failed: ${String(error)}` }];
    }
    out[name] = rows.map((r) => Object.values(r)[0]).join("\n");
  }
  return out;
}

/** One database the scale phase measures: its app, its actors, signed in. */
export type ScaleSide = { dbUrl: string; sql: postgres.Sql; handle: DbHandle; workers: Worker[] };
type Measured = { lifecycles: number; seconds: number; open: number[]; apply: number[]; reads: number; readSeconds: number; readMs: number[] };

const ROUNDS = 4;

export async function scaleBench(input: ScaleInput) {
  const { password, seconds } = input;
  // Two databases alike but for history: the run's own (empty tables but for its lifecycles)
  // and a twin seeded with 1M leases and 5M events, each with its own app process. They are
  // measured in alternating rounds (ABBA), so a change in the machine's load during the phase
  // falls on both sides alike, rather than on whichever was measured second.
  const twin = await input.makeTwin();
  const apps: { stop(): Promise<void> }[] = [];
  try {
    console.info("[bench] scale: seeding 1,000,000 closed leases and 5,000,000 events into a twin database...");
    const seeded = await seedHistory(twin.sql);
    console.info(`[bench] scale: seeded ${seeded.leases} leases, ${seeded.events} events in ${seeded.seconds} s`);
    const sides = { empty: { dbUrl: input.dbUrl, sql: input.sql, handle: input.handle, workers: input.workers }, history: twin };
    const targets = {} as Record<keyof typeof sides, { appUrl: string; cookies: Map<number, string>; side: ScaleSide }>;
    for (const name of ["empty", "history"] as const) {
      const side = sides[name];
      const app = await startAppServer({ databaseUrl: side.dbUrl, name: `bench-scale-${name}`, model: { provider: "local", latencyMs: 0 } });
      apps.push(app);
      const cookies = new Map<number, string>();
      for (const w of side.workers.slice(0, 8)) cookies.set(w.n, await signIn(app.url, w.email, password));
      targets[name] = { appUrl: app.url, cookies, side };
      await input.httpAt8(targets[name], seconds); // warm-up: routes compiled, pools full
    }
    const none = (): Measured => ({ lifecycles: 0, seconds: 0, open: [], apply: [], reads: 0, readSeconds: 0, readMs: [] });
    const measured: Record<keyof typeof sides, Measured> = { empty: none(), history: none() };
    const roundSeconds = Math.max(2, seconds / 2);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (["empty", "history"] as const) : (["history", "empty"] as const);
      for (const name of order) {
        const m = measured[name];
        const run = await input.httpAt8(targets[name], roundSeconds);
        m.lifecycles += run.lifecycles;
        m.seconds += run.seconds;
        m.open.push(...run.open);
        m.apply.push(...run.apply);
        const reads = await readsAt8(targets[name], roundSeconds);
        m.reads += reads.reads;
        m.readSeconds += reads.seconds;
        m.readMs.push(...reads.ms);
      }
    }
    const sweep = await sweepTimes(twin.handle, twin.sql);
    const historyInvoice = (await twin.sql<{ id: string }[]>`select id from invoice where number = 'H-50' limit 1`)[0]!.id;
    const h = targets.history;
    const long = await longTimeline(twin.handle, twin.workers[0]!);
    const longHttp: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      const res = await http(h.appUrl, "GET", `/api/leases/${long.leaseId}`, { cookie: h.cookies.get(twin.workers[0]!.n)! });
      longHttp.push(performance.now() - t);
      if (res.status !== 200) throw new Error(`GET the 200-event lease: ${res.status}`);
    }
    const explained = await plans(twin.sql, twin.handle, twin.workers[0]!, long.leaseId, historyInvoice);
    const r1 = (x: number) => Math.round(x * 10) / 10;
    const change = (a: number, b: number) => r1(((b - a) / a) * 100);
    const per = (m: Measured) => ({ lifecycles: r1(m.lifecycles / m.seconds), reads: r1(m.reads / m.readSeconds) });
    const e = per(measured.empty);
    const s = per(measured.history);
    const open = { empty: distribution(measured.empty.open), scale: distribution(measured.history.open) };
    const apply = { empty: distribution(measured.empty.apply), scale: distribution(measured.history.apply) };
    const reads = { empty: distribution(measured.empty.readMs), scale: distribution(measured.history.readMs) };
    const summary = {
      rounds: ROUNDS,
      lifecycles_per_s_8: { empty: e.lifecycles, scale: s.lifecycles, change_pct: change(e.lifecycles, s.lifecycles) },
      open_p50_ms: { empty: open.empty.p50, scale: open.scale.p50, change_pct: change(open.empty.p50, open.scale.p50) },
      apply_p50_ms: { empty: apply.empty.p50, scale: apply.scale.p50, change_pct: change(apply.empty.p50, apply.scale.p50) },
      get_reads_per_s_8: { empty: e.reads, scale: s.reads, change_pct: change(e.reads, s.reads) },
      get_p50_ms_8: { empty: reads.empty.p50, scale: reads.scale.p50, change_pct: change(reads.empty.p50, reads.scale.p50) },
      sweep_ms_median: [...sweep].sort((a, b) => a - b)[Math.floor(sweep.length / 2)],
      read_200_events_domain_p95_ms: long.domain.p95,
      read_200_events_http_p95_ms: distribution(longHttp).p95,
    };
    return { seeded, summary, open, apply, sweep_ms: sweep, long_timeline: { domain: long.domain, http: distribution(longHttp) }, reads_ms: reads, plans: explained };
  } finally {
    for (const app of apps) await app.stop();
    await twin.close();
  }
}

/** GET /api/leases/:id at 8 workers for `seconds`, each on its own latest applied lease. */
async function readsAt8(target: { appUrl: string; cookies: Map<number, string>; side: ScaleSide }, seconds: number) {
  const clients: { leaseId: string; cookie: string }[] = [];
  for (const w of target.side.workers.slice(0, 8)) {
    const [l] = await target.side.sql<{ id: string }[]>`select id from inference_lease where actor_id = ${w.actorId} and status = 'applied' order by created_at desc limit 1`;
    if (l) clients.push({ leaseId: l.id, cookie: target.cookies.get(w.n)! });
  }
  return readLeasesFor(target.appUrl, clients, seconds);
}
