// The openai-compatible lane for the purposes beyond the summary, through the real generate
// function (run by @inngest/test's InngestTestEngine) on a real database, with the model faked
// at the network edge (tests/harness/fake-openai.ts): categorize_lines is asked with the
// database's chart of accounts and its line numbers come back as the invoice's line ids; a
// review whose findings are not the purpose's form ends as generation_failed, invalid_output.
import { InngestTestEngine } from "@inngest/test";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { account, invoiceLine } from "@/db/schema";
import { generateLeaseProposal, recordGenerationFailure } from "@/inngest/generate-lease-proposal";
import { openLease, type LeaseDispatch } from "@/lib/leases";
import * as rows from "../../support/db";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { FAKE_CATEGORY, startFakeOpenAI, type FakeOpenAI } from "../../harness/fake-openai";
import { opened } from "../../harness/step-data";
import type { Purpose } from "@/lib/purposes";

let t: TestDb;
let model: FakeOpenAI;
const MODEL_ENV = ["MODEL_PROVIDER", "MODEL_BASE_URL", "MODEL_API_KEY", "MODEL_NAME"] as const;
const savedEnv = Object.fromEntries(MODEL_ENV.map((name) => [name, process.env[name]]));

beforeAll(async () => {
  t = await openTestDb();
  model = await startFakeOpenAI();
  Object.assign(process.env, {
    MODEL_PROVIDER: "openai-compatible",
    MODEL_BASE_URL: model.baseURL,
    MODEL_API_KEY: "k",
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
  model.requests.length = 0;
  model.respondWith({ kind: "echo" });
  vi.spyOn(console, "error").mockImplementation(() => {});
});

async function openedLease(purpose: Purpose) {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  let sent: Record<string, unknown> | undefined;
  const dispatch: LeaseDispatch = {
    async leaseOpened(lease) {
      sent = { leaseId: lease.id, actorId: lease.actorId, invoiceId: lease.invoiceId, purpose: lease.purpose, runNonce: lease.runNonce };
    },
    async leaseClosed() {},
  };
  const result = await openLease(t.db, { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose, ttlSeconds: 60 }, dispatch);
  if (!result.ok || !sent) throw new Error(`open failed: ${JSON.stringify(result)}`);
  const lines = await t.db.select().from(invoiceLine).where(eq(invoiceLine.invoiceId, inv.id)).orderBy(asc(invoiceLine.position));
  return { inv, lines, leaseId: result.lease.id, data: sent };
}

const run = (data: Record<string, unknown>) =>
  new InngestTestEngine({
    function: generateLeaseProposal,
    events: [{ name: "lease/opened", id: `lease-opened-${String(data.leaseId)}`, data }],
  }).execute();

type Sent = { response_format: { json_schema: { name: string; schema: { properties: Record<string, any> } } } };

describe("the openai-compatible lane through the generate function", () => {
  it("categorize_lines: asked with the database's chart, line numbers proposed as the invoice's line ids", async () => {
    const { lines, leaseId, data } = await openedLease("categorize_lines");
    // "Consulting, November" and "Travel expenses", answered in the other order.
    model.respondWith({
      kind: "json",
      value: {
        lines: [
          { line: 2, category: "6300" },
          { line: 1, category: "6000" },
        ],
      },
    });

    const { result, error } = await run(data);

    expect(error).toBeUndefined();
    expect(await opened(result)).toEqual({ leaseId, outcome: "proposed" });
    const chart = (await t.db.select({ code: account.code }).from(account).orderBy(asc(account.code))).map((a) => a.code);
    const sent = model.requests[0]!.json as Sent;
    expect(sent.response_format.json_schema.name).toBe("categorize_lines");
    expect(sent.response_format.json_schema.schema.properties.lines.items.properties.category.enum).toEqual(chart);
    expect((await rows.leaseRow(t.db, leaseId)).proposal).toEqual({
      lines: [
        { line_id: lines[1]!.id, category: "6300" },
        { line_id: lines[0]!.id, category: "6000" },
      ],
      model: "fake-model",
    });
  });

  it("categorize_lines: the fake's default answer proposes every line in its fallback account", async () => {
    const { lines, leaseId, data } = await openedLease("categorize_lines");
    await run(data);
    expect((await rows.leaseRow(t.db, leaseId)).proposal).toMatchObject({
      lines: lines.map((line) => ({ line_id: line.id, category: FAKE_CATEGORY })),
    });
  });

  it("categorize_lines: a line number the invoice lacks is invalid_output, nothing proposed", async () => {
    const { leaseId, data } = await openedLease("categorize_lines");
    model.respondWith({ kind: "json", value: { lines: [{ line: 3, category: "6000" }] } });
    const { error } = await run(data);
    expect(error).toMatchObject({ message: expect.stringMatching(/^ModelSchemaError: .*line 3 names no line/) });
    expect(await recordGenerationFailure(t.db, data, error as Error)).toEqual({ closed: true });
    expect(await rows.leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "generation_failed", proposal: null });
    expect((await rows.leaseEvents(t.db, leaseId)).at(-1)).toMatchObject({ kind: "generation_failed", detail: { code: "invalid_output" } });
  });

  it("review_invoice: findings proposed as answered; a finding code outside the registry is invalid_output", async () => {
    const good = await openedLease("review_invoice");
    const findings = [{ code: "due_soon", severity: "medium", message: "Due in 3 days.", fields: ["due_on"] }];
    model.respondWith({ kind: "json", value: { findings } });
    await run(good.data);
    expect((await rows.leaseRow(t.db, good.leaseId)).proposal).toEqual({ findings, model: "fake-model" });
    expect((model.requests[0]!.json as Sent).response_format.json_schema.name).toBe("review_invoice");

    const bad = await openedLease("review_invoice");
    model.respondWith({ kind: "json", value: { findings: [{ ...findings[0], code: "looks_fishy" }] } });
    const { error } = await run(bad.data);
    expect(await recordGenerationFailure(t.db, bad.data, error as Error)).toEqual({ closed: true });
    expect(await rows.leaseRow(t.db, bad.leaseId)).toMatchObject({ status: "rejected", proposal: null });
    expect((await rows.leaseEvents(t.db, bad.leaseId)).at(-1)).toMatchObject({
      kind: "generation_failed",
      detail: { code: "invalid_output" },
    });
  });
});
