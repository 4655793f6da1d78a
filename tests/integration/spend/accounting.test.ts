// Every model call's usage is recorded once, priced, in the transaction of the transition that
// ended it, and clears the lease's reservation: proposed, late (a model that ignores the abort),
// failed (the failure handler's close), aborted (a cancel mid-call, counted on its own). The real
// generate function (@inngest/test), the real lib/leases on a real database, the local lane priced
// by MODEL_PRICE_PER_MTOK, and the openai-compatible lane against tests/harness/fake-openai.ts
// priced by @pydantic/genai-prices.
import { InngestTestEngine } from "@inngest/test";
import { calcPrice } from "@pydantic/genai-prices";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { orgBudget } from "@/db/schema";
import { generateLeaseProposal, recordGenerationFailure } from "@/inngest/generate-lease-proposal";
import { cancelLease, loadForGeneration } from "@/lib/leases";
import { estimateTokens, LOCAL_MODEL_ID, userMessage } from "@/lib/model";
import { purposeOf } from "@/lib/purposes";
import { asMember, leaseRow, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { startFakeOpenAI, type FakeOpenAI } from "../../harness/fake-openai";
import { opened } from "../../harness/step-data";
import { openedLease, usageRows, withEnv, type Opened } from "./support";

let t: TestDb;
let fake: FakeOpenAI;
let restore: () => void = () => {};
beforeAll(async () => {
  t = await openTestDb();
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake?.close();
  await t?.close();
});
beforeEach(() => {
  fake.respondWith({ kind: "echo" });
  vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => {
  restore();
  restore = () => {};
  vi.restoreAllMocks();
});

// $1,000 / $2,000 per million tokens: a call costs a visible part of a cent.
const PRICE = "1000,2000";
const local = (extra: Record<string, string> = {}) =>
  (restore = withEnv({
    MODEL_PROVIDER: "local",
    MODEL_PRICE_PER_MTOK: PRICE,
    MODEL_LATENCY_MS: undefined,
    MODEL_IGNORE_ABORT: undefined,
    ...extra,
  }));
const priced = (input: number, output: number) => ((input * 1000 + output * 2000) / 1e6) * 100;

const engineFor = (data: Opened) =>
  new InngestTestEngine({ function: generateLeaseProposal, events: [{ name: "lease/opened", id: `lease-opened-${data.leaseId}`, data }] });

/** A user with an invoice, in an organization with a cap high enough to admit (so open reserves). */
async function setUp() {
  const alice = await makeUser(t.db, "Alice");
  const member = await asMember(t.db, alice);
  await t.db.insert(orgBudget).values({ orgId: member.orgId, organizationMonthlyCents: 1_000_000 });
  const inv = await makeInvoice(t.db, alice.id, { counterparty: "Northwind Traders" });
  return { alice, member, inv };
}

/** The prompt's tokens as the local lane and an aborted call count them: the instructions and the user message the generation builds. */
async function promptTokens(leaseId: string) {
  const input = await loadForGeneration(t.db, leaseId);
  if (!input.ok) throw new Error(`not loadable: ${input.reason}`);
  const request = { actorId: input.lease.actorId, invoice: input.invoice, context: input.context };
  return estimateTokens(purposeOf(input.lease.purpose).instructions) + estimateTokens(userMessage(request));
}

it("proposed: one row, the local lane's tokens at MODEL_PRICE_PER_MTOK, in propose's transaction, the reservation cleared", async () => {
  local();
  const { alice, member, inv } = await setUp();
  const { lease, data } = await openedLease(t.db, alice.id, inv.id);
  expect(lease.reservedCents).toBeGreaterThan(0);
  const prompt = await promptTokens(lease.id);

  const { result } = await engineFor(data).execute();
  expect(await opened(result)).toEqual({ leaseId: lease.id, outcome: "proposed" });

  const [row, ...more] = await usageRows(t.db, lease.id);
  expect(more).toEqual([]);
  expect(row).toMatchObject({
    orgId: member.orgId,
    actorId: alice.id,
    invoiceId: inv.id,
    purpose: "summarize_invoice",
    model: LOCAL_MODEL_ID,
    outcome: "proposed",
    estimated: true,
    callKey: `${lease.id}:0`,
  });
  expect(row!.inputTokens).toBe(prompt);
  expect(row!.outputTokens).toBeGreaterThan(0);
  expect(row!.costCents).toBeCloseTo(priced(row!.inputTokens, row!.outputTokens), 6);
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeNull();

  // The propose step run again (its answer lost), with the generate step's memoized completion: no second row.
  const proposed = (await leaseRow(t.db, lease.id)).proposal as { summary: string; model: string };
  const usage = { callKey: row!.callKey, model: row!.model, inputTokens: row!.inputTokens, outputTokens: row!.outputTokens };
  const generated = {
    ok: true,
    actorId: alice.id,
    output: { summary: proposed.summary },
    model: proposed.model,
    detail: { prompt_version: "summarize-2", summary_chars: proposed.summary.length },
    usage: { ...usage, estimated: true, costCents: row!.costCents },
  };
  const again = await engineFor(data).executeStep("propose", { steps: [{ id: "generate", handler: () => generated }] });
  expect(await opened(again.result)).toEqual({ leaseId: lease.id, outcome: "proposed" });
  expect(await usageRows(t.db, lease.id)).toHaveLength(1);
});

it("the openai-compatible lane: the tokens the model reported, priced by @pydantic/genai-prices for its model", async () => {
  restore = withEnv({
    MODEL_PROVIDER: "openai-compatible",
    MODEL_BASE_URL: fake.baseURL,
    MODEL_API_KEY: "test-key",
    MODEL_NAME: "gpt-4o-mini",
    MODEL_PRICE_PER_MTOK: undefined,
  });
  const { alice, inv } = await setUp();
  const { lease, data } = await openedLease(t.db, alice.id, inv.id);
  await engineFor(data).execute();
  const [row] = await usageRows(t.db, lease.id);
  // The fake server reports 1 prompt and 1 completion token.
  const expected = calcPrice({ input_tokens: 1, output_tokens: 1 }, "gpt-4o-mini")!.total_price * 100;
  expect(expected).toBeGreaterThan(0);
  expect(row).toMatchObject({ model: "gpt-4o-mini", inputTokens: 1, outputTokens: 1, estimated: false, outcome: "proposed" });
  expect(row!.costCents).toBeCloseTo(expected, 6);
});

it("late: a model that ignores the abort answers after a cancel; its usage recorded with the late completion", async () => {
  local({ MODEL_LATENCY_MS: "1500", MODEL_IGNORE_ABORT: "1" });
  const { alice, inv } = await setUp();
  const { lease, data } = await openedLease(t.db, alice.id, inv.id);
  const run = engineFor(data).execute();
  await new Promise((r) => setTimeout(r, 400));
  expect((await cancelLease(t.db, alice.id, lease.id, { async leaseOpened() {}, async leaseClosed() {} })).ok).toBe(true);
  const { result } = await run;
  expect(await opened(result)).toMatchObject({ outcome: "stopped", reason: "late_completion" });

  const rows = await usageRows(t.db, lease.id);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ outcome: "late", estimated: true });
  expect(rows[0]!.outputTokens).toBeGreaterThan(0);
  expect(rows[0]!.costCents).toBeCloseTo(priced(rows[0]!.inputTokens, rows[0]!.outputTokens), 6);
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeNull();
});

it("aborted: a cancel mid-call counts the prompt (instructions + user message), no output, on its own statement", async () => {
  local({ MODEL_LATENCY_MS: "5000" });
  const { alice, inv } = await setUp();
  const { lease, data } = await openedLease(t.db, alice.id, inv.id);
  const prompt = await promptTokens(lease.id);
  const run = engineFor(data).execute();
  await new Promise((r) => setTimeout(r, 400));
  expect((await cancelLease(t.db, alice.id, lease.id, { async leaseOpened() {}, async leaseClosed() {} })).ok).toBe(true);
  const { result } = await run;
  expect(await opened(result)).toMatchObject({ outcome: "stopped", reason: "not_open" });

  const rows = await usageRows(t.db, lease.id);
  expect(rows).toHaveLength(1);
  const row = rows[0]!;
  expect(row).toMatchObject({ outcome: "aborted", estimated: true, outputTokens: 0, model: LOCAL_MODEL_ID, callKey: `${lease.id}:0` });
  expect(row.inputTokens).toBe(prompt);
  expect(row.costCents).toBeCloseTo(priced(row.inputTokens, 0), 6);
  expect((await leaseRow(t.db, lease.id)).reservedCents).toBeNull();
});

it("failed: the model's unusable answer closes the lease in the failure handler, which records the call in its transaction", async () => {
  restore = withEnv({
    MODEL_PROVIDER: "openai-compatible",
    MODEL_BASE_URL: fake.baseURL,
    MODEL_API_KEY: "test-key",
    MODEL_NAME: "fake-model",
    MODEL_PRICE_PER_MTOK: PRICE,
  });
  fake.respondWith({ kind: "malformed" });
  const { alice, inv } = await setUp();
  const { lease, data } = await openedLease(t.db, alice.id, inv.id);
  const step = await engineFor(data).executeStep("generate");
  expect(step.step.op).toBe("StepFailed");
  // Nothing recorded yet: the failing step leaves it to the transition that closes the lease.
  expect(await usageRows(t.db, lease.id)).toEqual([]);

  // What onFailure runs, with the error as the SDK hands it over (name and message).
  const error = step.result as { name: string; message: string };
  expect(await recordGenerationFailure(t.db, data, { name: error.name, message: error.message })).toEqual({ closed: true });
  const [row, ...more] = await usageRows(t.db, lease.id);
  expect(more).toEqual([]);
  // The server answered (and billed) an unusable completion: counted at the tokens it reported
  // (the fake reports 1 and 1), not at our estimate of the prompt.
  expect(row).toMatchObject({
    outcome: "failed",
    estimated: false,
    inputTokens: 1,
    outputTokens: 1,
    model: "fake-model",
    callKey: `${lease.id}:0`,
  });
  expect(row!.costCents).toBeCloseTo(priced(1, 1), 6);
  expect(await leaseRow(t.db, lease.id)).toMatchObject({ status: "rejected", closedReason: "generation_failed", reservedCents: null });
  // The handler run again (a retried step) records nothing more.
  await recordGenerationFailure(t.db, data, { name: error.name, message: error.message });
  expect(await usageRows(t.db, lease.id)).toHaveLength(1);
});
