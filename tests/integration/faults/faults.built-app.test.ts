// Fault injection against the real processes: the built app under `next start`, the Inngest
// server (the stand-in, as a process of its own) and PostgreSQL. While clients run lease
// lifecycles through HTTP (open → wait for proposed → apply), the test kills the app with
// SIGKILL mid-open, mid-apply and mid-generation (and starts it again), kills the Inngest
// server mid-run (and starts it again), and terminates the app's database connections.
// Throughout and after:
//   - no lease stays in flight past its deadline plus one sweep period;
//   - no partial state: every status with its event, every invoice write with its applied
//     lease (the invariants of the model-based test, tests/model/invariants.ts);
//   - the app recovers without a restart from the faults that did not kill it;
//   - clients get an answer (2xx, 4xx or 503) within the timeouts, or a connection error
//     only while the app itself is down; never a 500, never a hang;
//   - a generation whose Inngest server died ends closed (`expired` or `generation_failed`).
//
// PostgreSQL only. About two minutes: the sweep runs once a minute, and the test waits for it.
import { performance } from "node:perf_hooks";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { STATEMENT_TIMEOUT_MS, CONNECT_TIMEOUT_S } from "@/db/client";
import { inferenceLease, leaseEvent } from "@/db/schema";
import type { LeaseStatus } from "@/lib/lease-codes";
import { SWEEP_CRON } from "@/inngest/expire-overdue-leases";
import { checkInvariants, type Ledger } from "../../model/invariants";
import { freePort, startAppInstance, startInngestServer, type AppInstance, type InngestServer } from "../../harness/app-server";
import { distribution, http, openEventStream, signIn, sleep, waitFor, type Res } from "../../harness/app-client";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

if (inject("dbKind") !== "postgres") {
  throw new Error("faults.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

const BOOT_TIMEOUT = 300_000;
const LEASE_TTL_S = 4;
const MODEL_LATENCY_MS = 600; // a window to kill the app in mid-generation
/** The sweep's cron runs every minute. */
const SWEEP_PERIOD_MS = 60_000;
/** Room for the sweep run itself and for reading the result. */
const SETTLE_SLACK_MS = 10_000;
/**
 * The longest a client waits for any answer. The app's own bounds: connect 5 s and statement
 * 5 s (db/client.ts), a transaction retried once after a lost connection, an event send
 * retried for about 2 s: about 17 s at the very worst, far less in practice.
 */
const CLIENT_TIMEOUT_MS = 2 * (CONNECT_TIMEOUT_S * 1000 + STATEMENT_TIMEOUT_MS) + 3_000;
/** Longer than a client waits, so a request waiting on the frozen server shows up as a hang. */
const FREEZE_MS = CLIENT_TIMEOUT_MS + 2_000;
const WORKERS = 4;
const INVOICES_PER_WORKER = 40;
const APP_NAME = "claimcheck-faults-app";
const TEST_NAME = "claimcheck-faults-test";

let t: TestDb;
let admin: postgres.Sql;
let inngest: InngestServer;
let app: AppInstance;

beforeAll(async () => {
  expect(SWEEP_CRON).toBe("* * * * *");
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  admin = postgres(url.toString(), { max: 2, onnotice: () => {}, connection: { application_name: TEST_NAME } });
  const port = await freePort();
  // The real retry schedule at 1/15 (1 s, 2 s, 4 s, each plus up to 2 s): a run's four attempts
  // span 7 to 13 s, longer than the app takes to start again.
  inngest = await startInngestServer({ name: "faults", appUrls: [`http://127.0.0.1:${port}/api/inngest`], retryScale: 1 / 15 });
  app = await startAppInstance({
    databaseUrl: url.toString(),
    inngest,
    port,
    name: "faults",
    leaseTtlSeconds: LEASE_TTL_S,
    model: { provider: "local", latencyMs: MODEL_LATENCY_MS },
    // Its connections carry this name, so the test can terminate them and only them.
    env: { PGAPPNAME: APP_NAME },
  });
  await inngest.sync();
}, BOOT_TIMEOUT);
afterAll(async () => {
  await app?.stop();
  await inngest?.stop();
  await admin?.end();
  await t?.close();
});

// ---------------------------------------------------------------------------------------
// The clients

type Kind = "open" | "read" | "apply";
type Call = { kind: Kind; started: number; ended: number; status: number | "connection_error" | "timeout"; detail?: string };
const calls: Call[] = [];
/** When the app was down (killed until serving again), in performance.now() time. */
const downWindows: { from: number; to: number }[] = [];
/** A fault waiting for the next call of its kind to be in flight. */
let trap: { kind: Kind; fire: (invoiceId: string) => void } | null = null;
let stopping = false;

async function call(kind: Kind, invoiceId: string, method: string, path: string, cookie: string, json?: unknown): Promise<Res | null> {
  const started = performance.now();
  const pending = http(app.url, method, path, { cookie, json, timeoutMs: CLIENT_TIMEOUT_MS });
  if (trap?.kind === kind) {
    const { fire } = trap;
    trap = null;
    // Kill while the request is being handled (it is on the wire now).
    setTimeout(() => fire(invoiceId), Math.random() * 15);
  }
  try {
    const res = await pending;
    calls.push({ kind, started, ended: performance.now(), status: res.status, detail: typeof res.body === "object" ? res.body?.detail : undefined });
    return res;
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    calls.push({ kind, started, ended: performance.now(), status: timedOut ? "timeout" : "connection_error", detail: String(error) });
    return null;
  }
}

type Worker = { cookie: string; invoices: string[]; abandoned: number; lifecycles: number };

/** One client: lifecycles on its invoices; a connection error makes it walk away from that lease, as a closed tab would. */
async function runWorker(w: Worker) {
  let next = 0;
  while (!stopping) {
    const invoiceId = w.invoices[next++ % w.invoices.length]!;
    w.lifecycles++;
    const opened = await call("open", invoiceId, "POST", "/api/leases", w.cookie, { invoice_id: invoiceId, purpose: "summarize_invoice" });
    if (!opened) {
      w.abandoned++;
      w.invoices.splice(w.invoices.indexOf(invoiceId), 1); // left to the sweep
      await sleep(200);
      continue;
    }
    if (opened.status !== 201 && opened.status !== 200) {
      await sleep(100);
      continue;
    }
    const leaseId = opened.body.lease_id as string;
    let status = "open";
    const giveUpAt = Date.now() + (LEASE_TTL_S + 3) * 1000;
    while (status === "open" && Date.now() < giveUpAt) {
      await sleep(150);
      const read = await call("read", invoiceId, "GET", `/api/leases/${leaseId}`, w.cookie);
      if (!read) break;
      if (read.status === 200) status = read.body.status;
    }
    if (status === "open") {
      // Walked away mid-generation (the app went down, or never proposed): the sweep's.
      w.abandoned++;
      w.invoices.splice(w.invoices.indexOf(invoiceId), 1);
      continue;
    }
    if (status === "proposed") {
      const applied = await call("apply", invoiceId, "POST", `/api/leases/${leaseId}/apply`, w.cookie);
      if (!applied) {
        w.abandoned++;
        w.invoices.splice(w.invoices.indexOf(invoiceId), 1);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Checks on the database

/** In-flight leases past their deadline by more than one sweep period (plus slack). */
async function overstaying(): Promise<{ id: string; status: string; overdue_ms: number }[]> {
  return admin`
    select id, status, (extract(epoch from (now() - deadline_at)) * 1000)::int as overdue_ms
    from inference_lease
    where status in ('open', 'proposed') and deadline_at < now() - make_interval(secs => ${(SWEEP_PERIOD_MS + SETTLE_SLACK_MS) / 1000})`;
}

/** The model view the invariants compare with, derived from the applied leases' events. */
async function checkDbInvariants(invoiceIds: string[], initial: Map<string, number>, ledger: Ledger) {
  const leases = await t.db
    .select({ id: inferenceLease.id, status: inferenceLease.status, invoiceId: inferenceLease.invoiceId, proposal: inferenceLease.proposal })
    .from(inferenceLease)
    .where(inArray(inferenceLease.invoiceId, invoiceIds));
  const applied = await t.db
    .select({ leaseId: leaseEvent.leaseId })
    .from(leaseEvent)
    .where(and(eq(leaseEvent.kind, "applied"), inArray(leaseEvent.leaseId, leases.length ? leases.map((l) => l.id) : ["00000000-0000-4000-8000-000000000000"])))
    .orderBy(asc(leaseEvent.id));
  const invoices = invoiceIds.map((id) => ({ id, version: initial.get(id)!, summary: null as string | null }));
  for (const { leaseId } of applied) {
    const lease = leases.find((l) => l.id === leaseId)!;
    const inv = invoices.find((i) => i.id === lease.invoiceId)!;
    inv.version++;
    inv.summary = (lease.proposal as { summary: string }).summary;
  }
  await checkInvariants(t, { invoices, leases: leases.map((l) => ({ id: l.id, status: l.status as LeaseStatus })) }, ledger);
}

// ---------------------------------------------------------------------------------------
// The faults

const sinceStart = (() => {
  const t0 = performance.now();
  return () => Math.round(performance.now() - t0);
})();

/**
 * Waits while the next minute boundary (when the Inngest server fires the sweep) is close:
 * a process down at that moment would cost that minute's sweep, which the bound of "one
 * sweep period" does not allow for.
 */
async function awayFromSweepTick(forMs = 10_000) {
  for (;;) {
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 4_000 && intoMinute + forMs < 58_000) return;
    await sleep(500);
  }
}

type KillRecord = { fault: string; invoiceId?: string; leaseIds: string[]; downMs?: number; recoveryMs?: number; wallAt?: number };
const kills: KillRecord[] = [];

async function killAppAndRestart(fault: string, extra: Partial<KillRecord> = {}) {
  const from = performance.now();
  const wallAt = Date.now();
  await app.kill("SIGKILL");
  await app.start();
  const to = performance.now();
  downWindows.push({ from, to });
  kills.push({ fault, leaseIds: [], ...extra, downMs: Math.round(to - from), wallAt });
}

/** Arms a trap on the next call of `kind` and waits until it has fired and the app serves again. */
async function killAppMid(kind: Kind) {
  await awayFromSweepTick();
  await new Promise<void>((resolve, reject) => {
    trap = {
      kind,
      fire: (invoiceId) => void killAppAndRestart(`app SIGKILL mid-${kind}`, { invoiceId }).then(resolve, reject),
    };
  });
}

async function generatingRuns(): Promise<{ runId: string; leaseId: string }[]> {
  const runs = await inngest.runs();
  return runs
    .filter((r) => r.functionId === "claimcheck-generate-lease-proposal" && r.status === "running")
    // Its generate step (the read, then the model call) runs in the app's first request and
    // is recorded only when it ends: a running run without a propose step is generating.
    .filter((r) => !r.steps.some((s) => s.name === "propose") && !r.steps.some((s) => s.name === "generate" && s.status === "completed"))
    .map((r) => ({ runId: r.id, leaseId: (r.event.data as { leaseId: string }).leaseId }));
}

/** The first moment after a fault that the app answered a client with a 2xx. */
function firstSuccessAfter(at: number): number | undefined {
  const ok = calls.filter((c) => typeof c.status === "number" && c.status < 300 && c.started >= at).map((c) => c.ended);
  return ok.length ? Math.min(...ok) - at : undefined;
}

describe("the event streams' LISTEN connection terminated", () => {
  it("an open stream still sees a change committed while LISTEN was down (re-read once it listens again)", async () => {
    const user = await makeUser(t.db, "Listener");
    const cookie = await signIn(app.url, user.email);
    const MISSED_BY_DEADLINE_MS = 1500;
    const gaps: number[] = [];
    for (let round = 0; round < 3; round++) {
      const inv = await makeInvoice(t.db, user.id);
      // A lease with no run for it, so nothing but this test changes it; a long deadline, so
      // the stream's own re-read at the deadline cannot be what delivers the change.
      const [lease] = await t.db
        .insert(inferenceLease)
        .values({ actorId: user.id, invoiceId: inv.id, purpose: "summarize_invoice", status: "open", deadlineAt: sql`now() + interval '60 seconds'` })
        .returning();
      await t.db.insert(leaseEvent).values({ leaseId: lease!.id, kind: "opened" });
      const stream = await openEventStream(app.url, lease!.id, cookie);
      try {
        expect(stream.status).toBe(200);
        await stream.next((f) => f.lease.status === "open");
        await sleep(200); // subscribed
        // Terminate the LISTEN connection and, at once, commit a change (the sweep's kind of
        // write: the lease closed with its event), before the app can listen again.
        const at = performance.now();
        await admin.begin(async (tx) => {
          await tx`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${t.name} and application_name = ${APP_NAME} and query ilike 'listen%'`;
          await tx`update inference_lease set status = 'rejected', closed_reason = 'cancelled', updated_at = now() where id = ${lease!.id}`;
          await tx`insert into lease_event (lease_id, kind) values (${lease!.id}, 'cancelled')`;
        });
        const frame = await stream.next((f) => f.lease.status === "rejected", MISSED_BY_DEADLINE_MS);
        gaps.push(Math.round(frame.at - at));
      } finally {
        stream.close();
      }
    }
    console.info(`[faults] LISTEN terminated with a change committed at once: the stream had it after ${gaps.join(", ")} ms`);
  });
});

describe("faults while lease lifecycles run", () => {
  it(
    "SIGKILL of the app (mid-open, mid-apply, mid-generation), the Inngest server killed mid-run, database connections terminated: no stuck lease, no partial state, no 500, no hang",
    async () => {
      const workers: Worker[] = [];
      const initial = new Map<string, number>();
      for (let i = 0; i < WORKERS; i++) {
        const user = await makeUser(t.db, `Worker ${i}`);
        const invoices: string[] = [];
        for (let j = 0; j < INVOICES_PER_WORKER; j++) {
          const inv = await makeInvoice(t.db, user.id, { counterparty: `Fault Co ${i}-${j}` });
          invoices.push(inv.id);
          initial.set(inv.id, inv.version);
        }
        workers.push({ cookie: await signIn(app.url, user.email), invoices, abandoned: 0, lifecycles: 0 });
      }
      const allInvoices = [...initial.keys()];
      const ledger: Ledger = { statuses: new Map() };
      const violations: unknown[] = [];
      let monitoring = true;
      const monitor = (async () => {
        while (monitoring) {
          const late = await overstaying().catch(() => []);
          if (late.length) violations.push({ at: sinceStart(), late });
          await sleep(1000);
        }
      })();

      const running = workers.map((w) => runWorker(w));
      const phases: string[] = [];
      const phase = (what: string) => phases.push(`${sinceStart()} ms: ${what}`);
      await sleep(3000);

      // 1. The app, SIGKILLed while handling an open, an apply, and during a generation.
      phase("kill the app mid-open");
      await killAppMid("open");
      await sleep(2000);
      phase("kill the app mid-apply");
      await killAppMid("apply");
      await sleep(2000);
      phase("kill the app mid-generation");
      await awayFromSweepTick();
      const inGeneration = await waitFor("a generation in its model call", async () => {
        const runs = await generatingRuns();
        return runs.length ? runs : undefined;
      }, 20_000);
      await killAppAndRestart("app SIGKILL mid-generation", { leaseIds: inGeneration.map((r) => r.leaseId) });
      await sleep(3000);

      // 2. The Inngest server, killed while runs are in flight, and started again.
      phase("kill the Inngest server mid-run");
      await awayFromSweepTick();
      const orphaned = await waitFor("a generation in flight", async () => {
        const runs = await generatingRuns();
        return runs.length ? runs : undefined;
      }, 20_000);
      const inngestKilledAt = performance.now();
      await inngest.kill("SIGKILL");
      await sleep(1500); // opens meanwhile cannot dispatch: 503 dispatch_failed, lease closed
      await inngest.start();
      const inngestBack = performance.now();
      await waitFor("the Inngest server to have synced the app again", async () => (await fetch(`${inngest.url}/functions`, { headers: { authorization: `Bearer ${inngest.signingKey}` } })).json().then((f: unknown[]) => f.length > 0));
      kills.push({ fault: "Inngest server SIGKILL mid-run", leaseIds: orphaned.map((r) => r.leaseId), downMs: Math.round(inngestBack - inngestKilledAt) });
      // The app was not restarted: a lifecycle started now is proposed again.
      await sleep(3000);

      // 3. The Inngest server frozen (SIGSTOP): it accepts connections and answers nothing,
      // for longer than a client waits. Opens must not hang on it.
      phase("freeze the Inngest server");
      await awayFromSweepTick(FREEZE_MS + 2000);
      const frozenAt = performance.now();
      inngest.freeze();
      await sleep(FREEZE_MS);
      inngest.thaw();
      kills.push({ fault: `Inngest server frozen ${FREEZE_MS / 1000} s`, leaseIds: [] });
      await sleep(3000);

      // 4. The app's database connections, terminated under load, three times.
      phase("terminate the app's database connections");
      for (let i = 0; i < 3; i++) {
        const at = performance.now();
        const [row] = await admin<{ n: number }[]>`
          select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
          where datname = ${t.name} and application_name = ${APP_NAME}`;
        kills.push({ fault: `pg_terminate_backend (${row!.n} connections)`, leaseIds: [], recoveryMs: undefined });
        await sleep(1500);
        const recovered = firstSuccessAfter(at);
        kills.at(-1)!.recoveryMs = recovered === undefined ? undefined : Math.round(recovered);
      }
      await sleep(3000);
      phase("stop the clients");
      stopping = true;
      await Promise.all(running);
      phase("clients stopped");

      // The app was not restarted after the Inngest or database faults: it generates, and
      // pushes to an event stream (its LISTEN connection came back by itself).
      // (A few tries: on a loaded machine one generation may miss its 4 s deadline.)
      const probe = workers[0]!;
      const pushed: string[] = [];
      for (const invoiceId of probe.invoices.slice(-3)) {
        const opened = await http(app.url, "POST", "/api/leases", { cookie: probe.cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
        expect([200, 201], JSON.stringify(opened.body)).toContain(opened.status);
        const stream = await openEventStream(app.url, opened.body.lease_id, probe.cookie);
        try {
          expect(stream.status).toBe(200);
          const frame = await stream.next((f) => f.lease.status !== "open", (LEASE_TTL_S + 2) * 1000);
          pushed.push(frame.lease.status);
          if (frame.lease.status === "proposed") break;
        } finally {
          stream.close();
        }
      }
      expect(pushed).toContain("proposed");

      // Every lease closes, each by its deadline plus one sweep period at the latest.
      const [last] = await admin<{ latest: Date }[]>`select max(deadline_at) as latest from inference_lease`;
      const settleBy = last!.latest.getTime() + SWEEP_PERIOD_MS + SETTLE_SLACK_MS;
      phase(`settle (waiting up to ${Math.max(0, Math.round((settleBy - Date.now()) / 1000))} s for the sweep)`);
      await waitFor("every lease to close", async () => {
        const [row] = await admin<{ n: number }[]>`select count(*)::int as n from inference_lease where status in ('open','proposed')`;
        return row!.n === 0;
      }, Math.max(1000, settleBy - Date.now() + 2000)).catch(async (error: Error) => {
        const left = await admin`select id, status, deadline_at, now() as now from inference_lease where status in ('open','proposed')`;
        throw new Error(`${error.message}: ${JSON.stringify(left)}`);
      });
      monitoring = false;
      await monitor;
      phase("settled");

      await checkDbInvariants(allInvoices, initial, ledger);

      // What the clients saw.
      const byKind: Record<string, Record<string, number>> = {};
      for (const c of calls) {
        const key = typeof c.status === "number" ? `${c.status}${c.detail ? ` ${c.detail}` : ""}` : c.status;
        (byKind[c.kind] ??= {})[key] = (byKind[c.kind]![key] ?? 0) + 1;
      }
      const latency: Record<string, unknown> = {};
      for (const kind of ["open", "read", "apply"] as const) {
        latency[kind] = distribution(calls.filter((c) => c.kind === kind && typeof c.status === "number").map((c) => c.ended - c.started));
      }
      // The outcome of every lease, and of those a fault hit.
      const outcome = async (ids: string[]) => {
        if (!ids.length) return [];
        const rows = await admin<{ outcome: string }[]>`
          select l.status || coalesce('/' || l.closed_reason, '') || ' (' || string_agg(e.kind, ' > ' order by e.id) || ')' as outcome
          from inference_lease l join lease_event e on e.lease_id = l.id
          where l.id = any(${ids}::uuid[]) group by l.id`;
        return rows.map((r) => r.outcome);
      };
      for (const k of kills) {
        if (k.invoiceId) {
          // The lease the killed request was about, if it got as far as the database.
          const rows = await admin<{ id: string }[]>`
            select id from inference_lease where invoice_id = ${k.invoiceId} and created_at >= ${new Date(k.wallAt! - 10_000)}
            order by created_at desc limit 1`;
          k.leaseIds = rows.map((r) => r.id);
        }
      }
      const killed = await Promise.all(kills.map(async (k) => ({ ...k, leaseIds: undefined, invoiceId: undefined, wallAt: undefined, outcomes: await outcome(k.leaseIds) })));
      const [all] = [
        await admin<{ outcome: string; n: number }[]>`
          select status || coalesce('/' || closed_reason, '') as outcome, count(*)::int as n
          from inference_lease group by 1 order by 2 desc`,
      ];
      console.info(
        [
          `[faults] phases:\n  ${phases.join("\n  ")}`,
          `[faults] ${workers.reduce((n, w) => n + w.lifecycles, 0)} lifecycles by ${WORKERS} clients, ${workers.reduce((n, w) => n + w.abandoned, 0)} walked away from`,
          `[faults] answers: ${JSON.stringify(byKind)}`,
          `[faults] latency of answered calls (ms): ${JSON.stringify(latency)}`,
          `[faults] faults: ${JSON.stringify(killed, null, 1)}`,
          `[faults] leases: ${all.map((r) => `${r.outcome} ${r.n}`).join(", ")}`,
        ].join("\n"),
      );

      // No lease overstayed its deadline by more than a sweep period, at any check.
      expect(violations).toEqual([]);
      // Never a 500 (503 is the answer for a fault), never a hang.
      const bad = calls.filter((c) => c.status === "timeout" || (typeof c.status === "number" && c.status >= 500 && c.status !== 503));
      expect(bad).toEqual([]);
      // A connection error only while the app was down (killed until serving again).
      const unexplained = calls.filter((c) => c.status === "connection_error" && !downWindows.some((w) => c.ended >= w.from - 50 && c.started <= w.to + 50));
      expect(unexplained).toEqual([]);
      // The faults hit something: requests cut off by the kills, and runs orphaned.
      expect(calls.some((c) => c.status === "connection_error")).toBe(true);
      expect(killed.find((k) => k.fault === "Inngest server SIGKILL mid-run")!.outcomes.length).toBeGreaterThan(0);
      // A generation whose Inngest server died ends closed: expired or generation_failed
      // (or, had the app finished it in the same request, proposed and then applied).
      for (const o of killed.find((k) => k.fault === "Inngest server SIGKILL mid-run")!.outcomes) {
        expect(o).toMatch(/^(expired\/deadline_passed|rejected\/generation_failed|applied) /);
      }
      // While the Inngest server was frozen, opens were answered, without a hang.
      const opensWhileFrozen = calls.filter((c) => c.kind === "open" && c.started >= frozenAt && c.started < frozenAt + FREEZE_MS - CLIENT_TIMEOUT_MS / 2);
      console.info(`[faults] opens while the Inngest server was frozen: ${JSON.stringify(opensWhileFrozen.map((c) => ({ status: c.status, detail: c.detail, ms: Math.round(c.ended - c.started) })))}`);
      expect(opensWhileFrozen.length).toBeGreaterThan(0);
      for (const c of opensWhileFrozen) expect({ status: c.status, detail: c.detail }).toEqual({ status: 503, detail: "dispatch_failed" });
      // The app came back from each database fault by itself.
      for (const k of kills.filter((k) => k.fault.startsWith("pg_terminate_backend"))) expect(k.recoveryMs).toBeDefined();
    },
    6 * 60_000,
  );
});
