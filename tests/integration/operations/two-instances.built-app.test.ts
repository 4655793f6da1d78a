// Two app instances (`next start` twice) on one PostgreSQL database and one Inngest server,
// the shape that scales out (docs/decisions/0012-several-app-instances.md): a lease opened through
// one is applied through the other, an event stream on one sees what the other did, a
// sign-out on one closes the other's view, and sweeps running on both at once expire each
// overdue lease exactly once.
//
// PostgreSQL only (two processes share the database).
import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { appSession, inferenceLease, invoice, leaseEvent } from "@/db/schema";
import { expireOverdue } from "@/lib/leases";
import { MAX_STREAMS_PER_SESSION } from "@/app/_lib/sse";
import { startInngestLocal, type InngestLocal } from "@claimcheck/inngest-local";
import { freePort, startAppInstance, startInngestServer, type AppInstance, type InngestServer } from "../../harness/app-server";
import { distribution, http, openEventStream, signIn, waitFor } from "../../harness/app-client";
import { eventKinds, invoiceRow, leaseRow, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { opened } from "../../harness/step-data";

if (inject("dbKind") !== "postgres") {
  throw new Error("two-instances.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

const BOOT_TIMEOUT = 300_000;
/** How soon a stream on one instance must see what the other did (asked of two instances, 2026-11-30). */
const PUSH_BOUND_MS = 250;

let t: TestDb;
let inngest: InngestServer;
let a: AppInstance;
let b: AppInstance;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  // The Inngest server must know both serve URLs, so the ports are chosen first.
  const [portA, portB] = [await freePort(), await freePort()];
  inngest = await startInngestServer({
    name: "shared",
    appUrls: [`http://127.0.0.1:${portA}/api/inngest`, `http://127.0.0.1:${portB}/api/inngest`],
  });
  const common = { databaseUrl: url.toString(), inngest, model: { provider: "local" as const } };
  [a, b] = await Promise.all([
    startAppInstance({ ...common, name: "a", port: portA }),
    startAppInstance({ ...common, name: "b", port: portB }),
  ]);
  await inngest.sync();
}, BOOT_TIMEOUT);
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await inngest?.stop();
  await t?.close();
});

async function actor(name: string) {
  const user = await makeUser(t.db, name);
  const inv = await makeInvoice(t.db, user.id, { counterparty: `${name} Holdings` });
  const cookie = await signIn(a.url, user.email); // the cookie is good on both: one SESSION_PASSWORD, one database
  return { user, inv, cookie };
}

async function open(app: AppInstance, cookie: string, invoiceId: string): Promise<string> {
  const res = await http(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.lease_id as string;
}

async function proposed(app: AppInstance, cookie: string, leaseId: string) {
  return waitFor(`lease ${leaseId} proposed (read on ${app.name})`, async () => {
    const res = await http(app.url, "GET", `/api/leases/${leaseId}`, { cookie });
    return res.body?.status === "proposed" ? res.body : undefined;
  });
}

describe("two app instances, one database, one Inngest server", () => {
  it("a lease opened through A is applied through B", async () => {
    const { inv, cookie } = await actor("Crossover");
    const leaseId = await open(a, cookie, inv.id);
    const lease = await proposed(b, cookie, leaseId);
    expect(lease.proposal.summary).toContain("Crossover Holdings");

    const apply = await http(b.url, "POST", `/api/leases/${leaseId}/apply`, { cookie });
    expect(apply.status, JSON.stringify(apply.body)).toBe(200);
    expect((await leaseRow(t.db, leaseId)).status).toBe("applied");
    expect(await eventKinds(t.db, leaseId)).toEqual(["opened", "proposed", "applied"]);
    const row = await invoiceRow(t.db, inv.id);
    expect(row.summary).toBe(lease.proposal.summary);
    expect(row.version).toBe(inv.version + 1);
    // Both read the same state.
    for (const app of [a, b]) {
      const res = await http(app.url, "GET", `/api/leases/${leaseId}`, { cookie });
      expect(res.body.status).toBe("applied");
    }
    // The generation ran on one of the two (the one the Inngest server synced last).
    const run = (await inngest.runs()).find((r) => (r.event.data as { leaseId?: string }).leaseId === leaseId);
    expect(run?.status).toBe("completed");
  });

  it("an event stream on B sees what A did (LISTEN/NOTIFY through the database)", async () => {
    const { inv, cookie } = await actor("Pusher");
    const ROUNDS = 12;
    const latencies: number[] = [];
    const fromRequest: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const leaseId = await open(a, cookie, inv.id);
      const stream = await openEventStream(b.url, leaseId, cookie);
      expect(stream.status).toBe(200);
      try {
        // The generation's proposal (recorded by whichever instance ran it) reaches B's stream.
        await stream.next((f) => f.lease.status === "proposed");
        const sent = performance.now();
        const res = await http(a.url, "POST", `/api/leases/${leaseId}/${i % 2 ? "cancel" : "apply"}`, { cookie });
        const answered = performance.now();
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const want = i % 2 ? "rejected" : "applied";
        const frame = await stream.next((f) => f.lease.status === want, 5_000);
        latencies.push(Math.max(0, frame.at - answered));
        fromRequest.push(frame.at - sent);
        // A terminal state ends the stream.
        await stream.ended(5_000);
      } finally {
        stream.close();
      }
    }
    const afterAnswer = distribution(latencies);
    const afterRequest = distribution(fromRequest);
    console.info(
      `[two-instances] A's apply/cancel -> B's stream frame, ms after A answered: ${JSON.stringify(afterAnswer)}; ` +
        `after A's request was sent: ${JSON.stringify(afterRequest)}`,
    );
    // The 250 ms bound, held by the median: a single slow frame on a loaded two-core CI
    // machine is not a broken push, a median past it would be.
    expect(afterAnswer.p50).toBeLessThanOrEqual(PUSH_BOUND_MS);
  });

  it("too_many_streams is counted per app process: a session at its cap on A still opens a stream on B", async () => {
    const { inv, cookie } = await actor("Streamer");
    const leaseId = await open(a, cookie, inv.id);
    const streams = [];
    try {
      for (let i = 0; i < MAX_STREAMS_PER_SESSION; i++) {
        streams.push(await openEventStream(a.url, leaseId, cookie));
        expect(streams.at(-1)!.status).toBe(200);
      }
      const refused = await http(a.url, "GET", `/api/leases/${leaseId}/events`, { cookie });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ detail: "too_many_streams" });
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      streams.push(await openEventStream(b.url, leaseId, cookie));
      expect(streams.at(-1)!.status).toBe(200);
    } finally {
      for (const s of streams) s.close();
    }
  });

  it("a sign-out on A closes B's view: B's stream ends and the cookie gets 401 on B", async () => {
    const { inv, cookie } = await actor("Leaver");
    const leaseId = await open(a, cookie, inv.id);
    await proposed(a, cookie, leaseId);
    const stream = await openEventStream(b.url, leaseId, cookie);
    expect(stream.status).toBe(200);
    await stream.next((f) => f.lease.status === "proposed");

    const out = await http(a.url, "DELETE", "/api/session", { cookie });
    const answered = performance.now();
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ status: "signed_out", revoked: [leaseId] });
    const ended = await stream.ended(5_000);
    console.info(`[two-instances] sign-out on A -> B's stream ended ${Math.round(ended - answered)} ms after A answered`);
    // It ended without showing a lease to a session that no longer exists.
    expect(stream.frames.map((f) => f.lease.status)).toEqual(["proposed"]);

    for (const path of ["/api/session", "/api/invoices", `/api/leases/${leaseId}`, `/api/leases/${leaseId}/events`]) {
      const res = await http(b.url, "GET", path, { cookie });
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
    }
    const apply = await http(b.url, "POST", `/api/leases/${leaseId}/apply`, { cookie });
    expect(apply.status).toBe(401);
    const row = await leaseRow(t.db, leaseId);
    expect(row.status).toBe("rejected");
    expect(row.closedReason).toBe("signed_out");
    expect((await invoiceRow(t.db, inv.id)).summary).toBeNull();
  });

  it("sweeps on both instances at once, with reads expiring too: each overdue lease is expired exactly once", async () => {
    const N = 600; // three of the sweep's batches of 200, so the two runs' batches overlap
    const user = await makeUser(t.db, "Sweeper");
    const cookie = await signIn(b.url, user.email);
    const invoices = await t.db
      .insert(invoice)
      .values(
        Array.from({ length: N }, (_, i) => ({
          ownerId: user.id,
          number: `SW-${i}`,
          counterparty: "Sweep Co",
          currency: "EUR",
          totalCents: 100,
          issuedOn: "2026-01-01",
          dueOn: "2026-02-01",
        })),
      )
      .returning({ id: invoice.id });
    // Abandoned leases: past their deadline, no run for them.
    const leases = await t.db
      .insert(inferenceLease)
      .values(invoices.map((inv) => ({ actorId: user.id, invoiceId: inv.id, purpose: "summarize_invoice", status: "open" as const, deadlineAt: sql`now() - interval '1 second'` })))
      .returning({ id: inferenceLease.id });
    const ids = leases.map((l) => l.id);

    // A sweep driver per instance: the stand-in, in this process, with the shared server's
    // keys and synced to that instance only, so the real cron function runs on each at once.
    const drivers: InngestLocal[] = [];
    try {
      for (const app of [a, b]) {
        const driver = await startInngestLocal({ port: 0, appUrls: [app.serveUrl], signingKey: inngest.signingKey, eventKeys: [inngest.eventKey], retryScale: 0.01, syncRetryMs: 250, log: () => {} });
        drivers.push(driver);
        await driver.sync();
      }
      const reads = async (app: AppInstance, slice: string[]) => {
        for (const id of slice) {
          const res = await http(app.url, "GET", `/api/leases/${id}`, { cookie });
          expect(res.status).toBe(200);
          expect(res.body.status).toBe("expired");
        }
      };
      const invoked = await Promise.all(
        drivers.map(async (d) => {
          const res = await fetch(`${d.url}/fn/expire-overdue-leases/invoke`, { method: "POST", headers: { authorization: `Bearer ${inngest.signingKey}` }, body: "{}" });
          return ((await res.json()) as { runId: string }).runId;
        }),
      );
      const direct = Array.from({ length: 3 }, async () => {
        let n = 0;
        for (let r; (r = await expireOverdue(t.db, 50)).expired.length; ) n += r.expired.length;
        return n;
      });
      await Promise.all([
        reads(a, ids.filter((_, i) => i % 7 === 0)),
        reads(b, ids.filter((_, i) => i % 7 === 3)),
        ...direct,
      ]);
      const runs = await Promise.all(
        drivers.map((d, i) => waitFor(`the sweep run on ${i ? "b" : "a"}`, () => d.runs().find((r) => r.id === invoked[i] && r.status !== "running"), 60_000)),
      );
      for (const run of runs) expect(run.status, JSON.stringify(run.error)).toBe("completed");

      const counts = await t.db
        .select({ leaseId: leaseEvent.leaseId, n: sql<number>`count(*)::int`, by: sql<string>`min(${leaseEvent.detail}->>'by')` })
        .from(leaseEvent)
        .where(sql`${leaseEvent.kind} = 'expired' and ${leaseEvent.leaseId} in (select id from inference_lease where actor_id = ${user.id})`)
        .groupBy(leaseEvent.leaseId);
      expect(counts).toHaveLength(N);
      expect(counts.filter((c) => c.n !== 1)).toEqual([]);
      const statuses = await t.db
        .select({ status: inferenceLease.status, n: sql<number>`count(*)::int` })
        .from(inferenceLease)
        .where(sql`${inferenceLease.actorId} = ${user.id}`)
        .groupBy(inferenceLease.status);
      expect(statuses).toEqual([{ status: "expired", n: N }]);
      const by: Record<string, number> = {};
      for (const c of counts) by[c.by] = (by[c.by] ?? 0) + 1;
      const perRun = await Promise.all(runs.map(async (r) => (await opened<{ expired: number }>(r.output)).expired));
      console.info(`[two-instances] ${N} overdue leases, each expired once; by: ${JSON.stringify(by)}; sweep on a expired ${perRun[0]}, on b ${perRun[1]}`);
      // The sweeps' own counts agree with the events they wrote (the shared server's cron may have sweeped some too).
      expect(perRun[0]! + perRun[1]!).toBeLessThanOrEqual(by.sweep ?? 0);
    } finally {
      for (const d of drivers) await d.close();
    }
    // The session is untouched by all that.
    const [session] = await t.db.select({ revokedAt: appSession.revokedAt }).from(appSession).where(sql`${appSession.userId} = ${user.id}`);
    expect(session?.revokedAt).toBeNull();
  });
});
