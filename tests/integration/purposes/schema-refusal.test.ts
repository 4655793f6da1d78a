// The purpose's schema decides what may be proposed and what may be applied, on a real database
// (PGlite or PostgreSQL, per run). A model answering an output its purpose's schema rejects: the
// real generate function (run by @inngest/test's engine, as generation-function.test.ts does)
// fails the run as `invalid_output`, and its failure handler's body closes the lease
// generation_failed; nothing is proposed, nothing written. The model is a provider of the seam's
// shape (lib/model/types.ts) answering what each test sets, in place of getModelProvider. And a
// proposal seeded by hand that its schema rejects is `proposal_unusable` at apply.
import { InngestTestEngine } from "@inngest/test";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { inferenceLease } from "@/db/schema";
import { generateLeaseProposal, recordGenerationFailure } from "@/inngest/generate-lease-proposal";
import { applyLease, openLease } from "@/lib/leases";
import type { ModelProvider, ModelRequest } from "@/lib/model";
import * as rows from "../../support/db";
import { makeUser, openTestDb, type TestDb } from "../../support/db";
import { opened } from "../../harness/step-data";
import { invoiceWith } from "./purpose-support";
import type { Purpose } from "@/lib/purposes";

const model = vi.hoisted(() => ({ answer: (_request: ModelRequest): unknown => ({}), calls: 0 }));
vi.mock("@/lib/model", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/model")>();
  const fake: ModelProvider = {
    name: "fake",
    timeLimitMs: 1000,
    async generate(request) {
      model.calls++;
      return {
        output: model.answer(request),
        actorId: request.actorId,
        model: "fake-model",
        usage: { inputTokens: 1, outputTokens: 1, estimated: true },
      };
    },
  };
  return { ...actual, getModelProvider: () => fake };
});

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb(); // also what getDb() answers in this file
});
afterAll(() => t?.close());
beforeEach(() => {
  // The SDK logs every failed run; the tests assert on the failures themselves.
  vi.spyOn(console, "error").mockImplementation(() => {});
});

async function openedLease(purpose: Purpose) {
  const alice = await makeUser(t.db, "Alice");
  const inv = await invoiceWith(t.db, alice.id, { issuedOn: "2026-01-01", dueOn: "2099-01-01" });
  let data: Record<string, string> | undefined;
  const result = await openLease(
    t.db,
    { actorId: alice.id, sessionId: null, invoiceId: inv.id, purpose, ttlSeconds: 60 },
    {
      async leaseOpened(lease) {
        data = { leaseId: lease.id, actorId: lease.actorId, invoiceId: lease.invoiceId, purpose: lease.purpose, runNonce: lease.runNonce };
      },
      async leaseClosed() {},
    },
  );
  if (!result.ok || !data) throw new Error(`open failed: ${JSON.stringify(result)}`);
  return { alice, inv, leaseId: result.lease.id, data };
}

const run = (data: Record<string, string>) =>
  new InngestTestEngine({
    function: generateLeaseProposal,
    events: [{ name: "lease/opened", id: `lease-opened-${data.leaseId}`, data }],
  }).execute();

// For each purpose, an answer of the right general shape that its schema refuses.
const REFUSED: Record<Purpose, (request: ModelRequest) => unknown> = {
  summarize_invoice: () => ({ summary: "   " }),
  review_invoice: () => ({ findings: [{ code: "looks_fishy", severity: "high", message: "Hmm.", fields: [] }] }),
  categorize_lines: (request) => ({
    lines: [
      { line_id: request.invoice.lines[0]!.id, category: "6000" },
      { line_id: request.invoice.lines[0]!.id, category: "6100" },
    ],
  }),
};

describe("a model's answer its purpose's schema rejects", () => {
  for (const purpose of Object.keys(REFUSED) as Purpose[]) {
    it(`${purpose}: generation_failed invalid_output, nothing proposed, nothing written`, async () => {
      const { inv, leaseId, data } = await openedLease(purpose);
      model.answer = REFUSED[purpose];
      const calls = model.calls;

      const { result, error } = await run(data);

      expect(model.calls).toBe(calls + 1);
      expect(result).toBeUndefined();
      expect(error).toMatchObject({
        name: "NonRetriableError",
        message: expect.stringMatching(new RegExp(`^ModelSchemaError: ${purpose} output rejected`)),
      });
      // Not proposed by the run itself: the lease is still open, with no proposal.
      expect(await rows.leaseRow(t.db, leaseId)).toMatchObject({ status: "open", proposal: null });

      // The failure handler's body, as the Inngest server runs it after a NonRetriableError.
      expect(await recordGenerationFailure(t.db, data, error as Error)).toEqual({ closed: true });
      expect(await rows.leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "generation_failed", proposal: null });
      expect((await rows.leaseEvents(t.db, leaseId)).map((e) => e.kind)).toEqual(["opened", "generation_failed"]);
      expect((await rows.leaseEvents(t.db, leaseId))[1]!.detail).toEqual({
        code: "invalid_output",
        message: "The model's answer was not in the form this task needs.",
        closed: true,
      });
      expect(await rows.invoiceRow(t.db, inv.id)).toEqual(inv);
    });
  }

  it("the same purposes with an answer their schema accepts: proposed, as a control", async () => {
    const { leaseId, data } = await openedLease("review_invoice");
    model.answer = () => ({ findings: [{ code: "due_soon", severity: "low", message: "Due in a while.", fields: ["due_on"] }] });
    const { result, error } = await run(data);
    expect(error).toBeUndefined();
    expect(await opened(result)).toEqual({ leaseId, outcome: "proposed" });
    expect((await rows.leaseRow(t.db, leaseId)).status).toBe("proposed");
  });
});

describe("a hand-seeded proposal its purpose's schema rejects", () => {
  const SEEDED: Record<Purpose, Record<string, unknown>> = {
    summarize_invoice: { summary: "" },
    review_invoice: { findings: "none" },
    categorize_lines: { lines: [{ line: 1, category: "6000" }] },
  };
  for (const purpose of Object.keys(SEEDED) as Purpose[]) {
    it(`${purpose}: proposal_unusable at apply, the lease closed with that reason, the invoice untouched`, async () => {
      const alice = await makeUser(t.db, "Alice");
      const inv = await invoiceWith(t.db, alice.id);
      const [lease] = await t.db
        .insert(inferenceLease)
        .values({
          actorId: alice.id,
          invoiceId: inv.id,
          purpose,
          status: "proposed",
          deadlineAt: sql`now() + interval '60 seconds'`,
          proposal: SEEDED[purpose],
        })
        .returning();
      expect(await applyLease(t.db, alice.id, lease!.id)).toEqual({ ok: false, code: "proposal_unusable" });
      expect(await rows.leaseRow(t.db, lease!.id)).toMatchObject({ status: "rejected", closedReason: "proposal_unusable" });
      expect(await rows.eventKinds(t.db, lease!.id)).toEqual(["proposal_unusable"]);
      expect(await rows.invoiceRow(t.db, inv.id)).toEqual(inv);
    });
  }
});
