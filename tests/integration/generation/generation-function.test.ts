// The generate function meets the lease domain without a build: the real Inngest function
// (run step by step by @inngest/test's InngestTestEngine), the real lib/leases on a real
// database (PGlite or PostgreSQL, per run), and the model faked at the network edge
// (tests/harness/fake-openai.ts). Its failure handler's body, recordGenerationFailure, runs
// on the same database. The SDK's wiring through a real Inngest server is in
// generation.built-app.test.ts.
import { InngestTestEngine } from "@inngest/test";
import { count, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { leaseEvent } from "@/db/schema";
import { cancelLease, openLease, type LeaseDispatch } from "@/lib/leases";
import { generateLeaseProposal, recordGenerationFailure } from "@/inngest/generate-lease-proposal";
import * as rows from "../../support/db";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { FAKE_SUMMARY, startFakeOpenAI, type FakeOpenAI } from "../../harness/fake-openai";
import { opened } from "../../harness/step-data";

let t: TestDb;
let model: FakeOpenAI;
const MODEL_ENV = ["MODEL_PROVIDER", "MODEL_BASE_URL", "MODEL_API_KEY", "MODEL_NAME"] as const;
const savedEnv = Object.fromEntries(MODEL_ENV.map((name) => [name, process.env[name]]));

beforeAll(async () => {
  t = await openTestDb(); // also what getDb() answers in this file
  model = await startFakeOpenAI();
  Object.assign(process.env, {
    MODEL_PROVIDER: "openai-compatible",
    MODEL_BASE_URL: model.baseURL,
    MODEL_API_KEY: "test-key",
    MODEL_NAME: "fake-model",
  });
});
afterAll(async () => {
  for (const name of MODEL_ENV) {
    if (savedEnv[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnv[name];
  }
  await model?.close();
  await t?.close();
});
beforeEach(() => {
  model.respondWith({ kind: "echo" });
  // The SDK logs every failed run; the tests assert on the failures themselves.
  vi.spyOn(console, "error").mockImplementation(() => {});
});

/** Opens a lease as the app does, keeping the lease/opened data the dispatch would send. */
async function openedLease() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id, { counterparty: "Northwind Traders" });
  let sent: { leaseId: string; actorId: string; invoiceId: string; purpose: string; runNonce: string } | undefined;
  const dispatch: LeaseDispatch = {
    async leaseOpened(lease) {
      sent = { leaseId: lease.id, actorId: lease.actorId, invoiceId: lease.invoiceId, purpose: lease.purpose, runNonce: lease.runNonce };
    },
    async leaseClosed() {},
  };
  const opened = await openLease(
    t.db,
    { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 60 },
    dispatch,
  );
  if (!opened.ok || !sent) throw new Error(`open failed: ${JSON.stringify(opened)}`);
  return { alice, inv, leaseId: opened.lease.id, data: sent };
}

function engineFor(data: Record<string, unknown>) {
  return new InngestTestEngine({
    function: generateLeaseProposal,
    events: [{ name: "lease/opened", id: `lease-opened-${String(data.leaseId)}`, data }],
  });
}

const leaseRow = (id: string) => rows.leaseRow(t.db, id);
const leaseEvents = (id: string) => rows.leaseEvents(t.db, id);
const allEvents = async () => (await t.db.select({ n: count() }).from(leaseEvent))[0]!.n;

describe("generate-lease-proposal on a real database", () => {
  it("loads the lease, asks the model for its actor and invoice, and proposes: the lease waits for review, the invoice untouched", async () => {
    const { alice, inv, leaseId, data } = await openedLease();

    const { result, error } = await engineFor(data).execute();

    expect(error).toBeUndefined();
    // The output as the Inngest server gets it: encrypted (inngest/encryption.ts).
    expect(result).toMatchObject({ __ENCRYPTED__: true });
    expect(await opened(result)).toEqual({ leaseId, outcome: "proposed" });
    expect(await leaseRow(leaseId)).toMatchObject({
      status: "proposed",
      closedReason: null,
      proposal: { summary: FAKE_SUMMARY, model: "fake-model" },
    });
    expect(await leaseEvents(leaseId)).toEqual([
      { kind: "opened", detail: { ttl_seconds: 60, invoice_version: inv.version } },
      { kind: "proposed", detail: { model: "fake-model", prompt_version: "summarize-2", summary_chars: FAKE_SUMMARY.length } },
    ]);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.actorId).toBe(alice.id);
    expect(JSON.stringify(model.requests[0]!.json)).toContain("Northwind Traders");
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBeNull();
  });

  it("a propose step retried after its propose committed (its answer lost) is the same proposal: no late_completion", async () => {
    const { leaseId, data } = await openedLease();
    const first = await engineFor(data).execute();
    expect(await opened(first.result)).toEqual({ leaseId, outcome: "proposed" });
    const proposedRow = await leaseRow(leaseId);

    // Inngest runs the step again with the generate step's memoized output, as when the
    // propose step's answer never reached it: the same run (nonce), the same completion.
    const generated = {
      ok: true,
      actorId: data.actorId,
      output: { summary: FAKE_SUMMARY },
      model: "fake-model",
      detail: { prompt_version: "summarize-2", summary_chars: FAKE_SUMMARY.length },
    };
    const retried = await engineFor(data).executeStep("propose", { steps: [{ id: "generate", handler: () => generated }] });

    expect(await opened(retried.result)).toEqual({ leaseId, outcome: "proposed" });
    expect(await leaseRow(leaseId)).toEqual(proposedRow);
    expect((await leaseEvents(leaseId)).map((e) => e.kind)).toEqual(["opened", "proposed"]);

    // Another completion under the same nonce is not that retry: still a late completion.
    const other = { ...generated, output: { summary: "A different summary" } };
    const late = await engineFor(data).executeStep("propose", { steps: [{ id: "generate", handler: () => other }] });
    expect(await opened(late.result)).toEqual({ leaseId, outcome: "stopped", reason: "late_completion", status: "proposed" });
    expect((await leaseEvents(leaseId)).map((e) => e.kind)).toEqual(["opened", "proposed", "late_completion"]);
  });

  it("a lease closed before the run starts: stops at its one read, never asks the model, writes nothing", async () => {
    const { leaseId, data } = await openedLease();
    await cancelLease(t.db, data.actorId, leaseId, { async leaseOpened() {}, async leaseClosed() {} });
    const requestsBefore = model.requests.length;

    const { result, error } = await engineFor(data).execute();

    expect(error).toBeUndefined();
    expect(await opened(result)).toEqual({ leaseId, outcome: "stopped", reason: "not_open", status: "rejected" });
    expect(model.requests.length).toBe(requestsBefore);
    expect((await leaseEvents(leaseId)).map((e) => e.kind)).toEqual(["opened", "cancelled"]);
  });

  it("an event with another nonce: the model's answer is refused as run_mismatch, the lease stays open and unproposed", async () => {
    const { leaseId, data } = await openedLease();
    const before = await leaseRow(leaseId);

    const { result } = await engineFor({ ...data, runNonce: "0".repeat(64) }).execute();

    expect(await opened(result)).toEqual({ leaseId, outcome: "stopped", reason: "run_mismatch", status: "open" });
    expect(await leaseRow(leaseId)).toEqual(before);
    expect((await leaseEvents(leaseId)).slice(1)).toEqual([{ kind: "run_mismatch", detail: { step: "propose", status: "open" } }]);
  });

  it("an event without a nonce fails validation before any step: no model call, nothing written", async () => {
    const { leaseId, data } = await openedLease();
    const { runNonce: _dropped, ...withoutNonce } = data;
    const requestsBefore = model.requests.length;
    const eventsBefore = await allEvents();

    const { result, error } = await engineFor(withoutNonce).execute();

    expect(result).toBeUndefined();
    expect(error).toMatchObject({ name: "EventValidationError", message: expect.stringContaining("runNonce") });
    expect(model.requests.length).toBe(requestsBefore);
    expect(await allEvents()).toBe(eventsBefore);
    expect((await leaseRow(leaseId)).status).toBe("open");
  });
});

describe("recordGenerationFailure (the failure handler's body) on a real database", () => {
  it("closes the lease as generation_failed with the code and plain words, so the user learns at once", async () => {
    const { leaseId, data } = await openedLease();

    const result = await recordGenerationFailure(t.db, data, { name: "NonRetriableError", message: "ModelOutputError: bad JSON" });

    expect(result).toEqual({ closed: true });
    expect(await leaseRow(leaseId)).toMatchObject({ status: "rejected", closedReason: "generation_failed", proposal: null });
    expect((await leaseEvents(leaseId)).slice(1)).toEqual([
      {
        kind: "generation_failed",
        detail: { code: "model_output_invalid", message: "The model's answer could not be used.", closed: true },
      },
    ]);
  });

  it("a database fault reaches the actor as internal_error; its SQL text stays out of the event", async () => {
    const { leaseId, data } = await openedLease();
    const sqlError = {
      name: "PostgresError",
      message:
        'duplicate key value violates unique constraint "lease_event_pkey": insert into "lease_event" ("lease_id", "kind") values ($1, $2)',
    };

    expect(await recordGenerationFailure(t.db, data, sqlError)).toEqual({ closed: true });

    const [, failed] = await leaseEvents(leaseId);
    expect(failed).toEqual({
      kind: "generation_failed",
      detail: { code: "internal_error", message: "Something went wrong on our side.", closed: true },
    });
  });

  it("an overdue lease is recorded expired, not failed", async () => {
    const { leaseId, data } = await openedLease();
    await t.db.execute(sql`update inference_lease set deadline_at = now() - interval '1 second' where id = ${leaseId}`);

    expect(await recordGenerationFailure(t.db, data, { name: "ModelUnavailableError", message: "HTTP 503" })).toEqual({ closed: false });

    expect(await leaseRow(leaseId)).toMatchObject({ status: "expired", closedReason: "deadline_passed" });
    expect((await leaseEvents(leaseId)).map((e) => e.kind)).toEqual(["opened", "expired", "generation_failed"]);
  });

  it("a failed run whose event carried no nonce (it failed validation) records run_mismatch and leaves the lease open", async () => {
    const { leaseId, data } = await openedLease();
    const before = await leaseRow(leaseId);
    const { runNonce: _dropped, ...withoutNonce } = data;

    expect(await recordGenerationFailure(t.db, withoutNonce, { name: "EventValidationError", message: "runNonce: Invalid input" })).toEqual(
      {
        closed: false,
        refused: "run_mismatch",
      },
    );

    expect(await leaseRow(leaseId)).toEqual(before);
    expect((await leaseEvents(leaseId)).slice(1)).toEqual([{ kind: "run_mismatch", detail: { step: "fail", status: "open" } }]);
  });

  it("a failed run whose event failed its schema but carried the right nonce records run_mismatch and leaves the lease open", async () => {
    const { leaseId, data } = await openedLease();
    const before = await leaseRow(leaseId);
    const { purpose: _dropped, ...withoutPurpose } = data;

    for (const misshapen of [withoutPurpose, { ...data, purpose: 7 }, { ...data, actorId: null }]) {
      expect(await recordGenerationFailure(t.db, misshapen, { name: "EventValidationError", message: "purpose: Invalid input" })).toEqual({
        closed: false,
        refused: "run_mismatch",
      });
    }

    expect(await leaseRow(leaseId)).toEqual(before);
    expect((await leaseEvents(leaseId)).slice(1).map((e) => e.kind)).toEqual(["run_mismatch", "run_mismatch", "run_mismatch"]);
  });

  it("event data that names no lease writes nothing at all", async () => {
    const eventsBefore = await allEvents();
    for (const data of [null, "lease", { leaseId: 42 }, { leaseId: "not-a-uuid", runNonce: "x" }]) {
      expect(await recordGenerationFailure(t.db, data, { name: "Error", message: "boom" })).toEqual({ closed: false });
    }
    expect(await allEvents()).toBe(eventsBefore);
  });
});
