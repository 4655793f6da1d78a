// A close reaches the model call: when a lease closes while its model call runs (cancel,
// sign-out, an edit that withdraws it, the deadline passing), the call is aborted and its HTTP
// request to the OpenAI-compatible server dropped; the run ends without a retry and without
// a `generation_failed`. The built app under `next start`, its real /api/inngest route driven
// by the local Inngest stand-in, the model faked at the network edge (tests/harness/fake-openai.ts,
// which records a request whose client went away). How fast: bench/abort.ts, not these tests.
// (A model that cannot be stopped still ends as a late completion: generation.built-app.test.ts.)
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunSummary } from "@claimcheck/inngest-local";
import { startAppServer, type AppServer } from "../../harness/app-server";
import { http, signIn, sleep, waitFor } from "../../harness/app-client";
import * as rows from "../../support/db";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "../../harness/fake-openai";
import { opened } from "../../harness/step-data";

if (inject("dbKind") !== "postgres") {
  throw new Error("model-abort.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

const GENERATE = "claimcheck-generate-lease-proposal";
const GENERATE_FAILURE = "claimcheck-generate-lease-proposal-failure";
const BOOT_TIMEOUT = 300_000; // a cold `next build` takes a minute or two here
/** The fake model answers after this long: far beyond any test, so only a drop ends the request early. */
const MODEL_DELAY_MS = 60_000;

let t: TestDb;
let databaseUrl: string;
let fake: FakeOpenAI;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  databaseUrl = url.toString();
  fake = await startFakeOpenAI();
  fake.respondWith({ kind: "slow", delayMs: MODEL_DELAY_MS });
}, BOOT_TIMEOUT);
afterAll(async () => {
  await fake?.close();
  await t?.close();
});

function startApp(leaseTtlSeconds?: number): Promise<AppServer> {
  return startAppServer({
    databaseUrl,
    ...(leaseTtlSeconds ? { leaseTtlSeconds } : {}),
    // The provider's own time limit is longer than the fake's delay: nothing but the lease ends the call.
    model: { provider: "openai-compatible", baseUrl: fake.baseURL, apiKey: "sk-test-not-a-real-key", name: "fake-model", timeoutMs: 120_000 },
  });
}

function runsFor(app: AppServer, fnId: string, leaseId: string): RunSummary[] {
  return app.inngest.runs().filter((r) => {
    if (r.functionId !== fnId) return false;
    const data = r.event.data as { leaseId?: string; event?: { data?: { leaseId?: string } } };
    return data.leaseId === leaseId || data.event?.data?.leaseId === leaseId;
  });
}

/** A signed-in actor with an invoice, a lease on it, and that lease's model request in flight at the fake. */
async function generating(app: AppServer, name: string) {
  const user = await makeUser(t.db, name);
  const inv = await makeInvoice(t.db, user.id, { counterparty: `${name} Ltd` });
  const cookie = await signIn(app.url, user.email);
  const opened = await http(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
  expect(opened.status, JSON.stringify(opened.body)).toBe(201);
  const leaseId = opened.body.lease_id as string;
  const request = await fake.nextRequest((r) => r.actorId === user.id);
  expect(request.droppedAt).toBeUndefined(); // in flight: the model is still "thinking"
  return { user, inv, cookie, leaseId, request };
}

/**
 * What every close must lead to: the fake saw the connection dropped, long before it would
 * have answered; the run ended (cancelled by its `lease/closed`, or on its own as stopped)
 * after one attempt, no failure handler ran, and no second model request was ever made.
 */
async function expectDroppedWithoutRetry(app: AppServer, leaseId: string, request: RecordedRequest, stoppedAs: { reason: string; status: string }) {
  await fake.dropped(request, 15_000);
  expect(request.droppedAt! - request.receivedAt).toBeLessThan(MODEL_DELAY_MS);

  const run = await waitFor("the generate run to end", () => runsFor(app, GENERATE, leaseId).find((r) => r.status !== "running"));
  if (run.status === "cancelled") {
    expect(run.cancelledBy).toContain("lease/closed");
  } else {
    expect(run.status).toBe("completed");
    expect(await opened(run.output)).toEqual({ leaseId, outcome: "stopped", ...stoppedAs });
  }
  // No request of the run needed a second attempt (a run cancelled mid-step counts none).
  expect(run.attempts).toBeLessThanOrEqual(1);
  expect(run.steps.map((s) => s.name)).not.toContain("propose");
  for (const step of run.steps) expect(step.attempts, `attempts of ${step.name}`).toBeLessThanOrEqual(1);
  // The stand-in retries within 450 ms here (scale 0.01); give a retry (were there one) time to show.
  await sleep(1_000);
  expect(runsFor(app, GENERATE_FAILURE, leaseId)).toHaveLength(0);
  expect(fake.requests.filter((r) => r.actorId === request.actorId)).toHaveLength(1);
  // The app logged the stop in the generate step (the step runs to its end even when the
  // stand-in has already cancelled the run).
  await waitFor("the generate step's stop in the log", () =>
    app.appLogs().some((l) => l.includes('"generation stopped"') && l.includes(leaseId) && l.includes('"generate"')),
  );
}

describe("a close during the model call, with an OpenAI-compatible model", () => {
  let app: AppServer;
  beforeAll(async () => {
    app = await startApp();
  }, BOOT_TIMEOUT);
  afterAll(() => app?.stop());

  it("cancel: the model request is dropped, the run ends without retry, the lease is rejected with no late completion", async () => {
    const { inv, cookie, leaseId, request } = await generating(app, "Cancelling Carrier");

    const cancel = await http(app.url, "POST", `/api/leases/${leaseId}/cancel`, { cookie });
    expect(cancel.status).toBe(200);
    await expectDroppedWithoutRetry(app, leaseId, request, { reason: "not_open", status: "rejected" });

    expect(await rows.leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "cancelled", proposal: null });
    expect(await rows.eventKinds(t.db, leaseId)).toEqual(["opened", "cancelled"]);
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBeNull();
  });

  it("sign-out: the model request is dropped, the run ends without retry, the lease is revoked with no late completion", async () => {
    const { inv, cookie, leaseId, request } = await generating(app, "Departing Dealer");

    const out = await http(app.url, "DELETE", "/api/session", { cookie });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ status: "signed_out", revoked: [leaseId] });
    await expectDroppedWithoutRetry(app, leaseId, request, { reason: "not_open", status: "rejected" });

    expect(await rows.leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "signed_out", proposal: null });
    expect(await rows.eventKinds(t.db, leaseId)).toEqual(["opened", "revoked"]);
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBeNull();
  });

  it("an edit of the invoice: the model request is dropped, the run ends without retry, the lease is withdrawn with no late completion", async () => {
    const { inv, cookie, leaseId, request } = await generating(app, "Edited Exporter");

    const edit = await http(app.url, "PATCH", `/api/invoices/${inv.id}`, { cookie, json: { counterparty: "Renamed Exporter Ltd" } });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    await expectDroppedWithoutRetry(app, leaseId, request, { reason: "not_open", status: "rejected" });

    expect(await rows.leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "invoice_changed", proposal: null });
    expect(await rows.eventKinds(t.db, leaseId)).toEqual(["opened", "invoice_changed"]);
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBeNull();
  });

  it("an event that leaves the lease open (a refused apply) does not abort the call", async () => {
    const { cookie, leaseId, request } = await generating(app, "Impatient Importer");

    const apply = await http(app.url, "POST", `/api/leases/${leaseId}/apply`, { cookie });
    expect(apply.status).toBe(409);
    expect(apply.body).toEqual({ detail: "lease_open" });
    expect(await rows.eventKinds(t.db, leaseId)).toEqual(["opened", "apply_refused"]);
    // Well past the time a close takes to drop the request (see bench/abort.ts): still in flight.
    await sleep(1_500);
    expect(request.droppedAt).toBeUndefined();
    expect(runsFor(app, GENERATE, leaseId)[0]!.status).toBe("running");

    // Then the cancel still reaches it.
    expect((await http(app.url, "POST", `/api/leases/${leaseId}/cancel`, { cookie })).status).toBe(200);
    await expectDroppedWithoutRetry(app, leaseId, request, { reason: "not_open", status: "rejected" });
    expect(await rows.eventKinds(t.db, leaseId)).toEqual(["opened", "apply_refused", "cancelled"]);
  });
});

describe("the deadline passing during the model call, with an OpenAI-compatible model", () => {
  const TTL_SECONDS = 4;
  let app: AppServer;
  beforeAll(async () => {
    app = await startApp(TTL_SECONDS);
  }, BOOT_TIMEOUT);
  afterAll(() => app?.stop());

  it("the model request is dropped at the deadline, the run ends as stopped without retry, the lease expired with no late completion", async () => {
    const { inv, cookie, leaseId, request } = await generating(app, "Overdue Outfitter");

    // Nothing is sent: only the deadline, measured by the database, closes this lease.
    await expectDroppedWithoutRetry(app, leaseId, request, { reason: "expired", status: "expired" });
    const run = runsFor(app, GENERATE, leaseId)[0]!;
    expect(run.status).toBe("completed"); // no lease/closed is sent for a deadline: the run ends itself

    const lease = await rows.leaseRow(t.db, leaseId);
    expect(lease).toMatchObject({ status: "expired", closedReason: "deadline_passed", proposal: null });
    // Expired no earlier than the deadline, by the database clock: the timer did not cut the call short.
    const [row] = (await t.db.execute(sql`
      select e.at >= l.deadline_at as late
      from inference_lease l join lease_event e on e.lease_id = l.id and e.kind = 'expired'
      where l.id = ${leaseId}`)) as unknown as { late: boolean }[];
    expect(row?.late).toBe(true);
    expect(await rows.leaseEvents(t.db, leaseId)).toEqual([
      expect.objectContaining({ kind: "opened" }),
      { kind: "expired", detail: { by: "generate" } },
    ]);
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBeNull();
    const api = await http(app.url, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.body.status).toBe("expired");
  });
});
