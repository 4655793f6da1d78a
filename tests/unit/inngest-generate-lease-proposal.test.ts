// The generate function's logic with @inngest/test: the domain (lib/leases), the database
// handle and the model provider are mocked; the function, its steps and the SDK are real.
import { InngestTestEngine, mockCtx } from "@inngest/test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { GenerationInput, ProposeResult } from "@/lib/leases";
import { ModelOutputError, ModelUnavailableError, type ModelProvider, type ModelRequest, type Proposal } from "@/lib/model";
// The function's output and step outputs leave the client encrypted (inngest/encryption.ts):
// the tests open them with the key the app runs with.
import { opened } from "../harness/step-data";

vi.mock("@/db/client", () => ({ getDb: vi.fn(async () => ({ fake: "db" })) }));
vi.mock("@/lib/leases", () => ({
  loadForGeneration: vi.fn(),
  proposeLease: vi.fn(),
  failGeneration: vi.fn(),
  // A call the model never answered is counted on a statement of its own.
  recordUsage: vi.fn(async () => true),
  // A run that calls nothing releases its lease's budget reservation.
  releaseReservation: vi.fn(async () => {}),
}));
vi.mock("@/lib/model", async (importOriginal) => ({
  ...(await importOriginal<typeof import("@/lib/model")>()),
  getModelProvider: vi.fn(),
}));
vi.mock("@/lib/log", () => ({ log: { info: vi.fn(), warn: vi.fn() } }));
// The lease's close, as the LISTEN connection would report it: a controller per watch, which
// a test aborts to close the lease while the model works.
vi.mock("@/inngest/lease-close-signal", () => ({ watchLeaseClose: vi.fn() }));

const leases = await import("@/lib/leases");
const model = await import("@/lib/model");
const closeSignal = await import("@/inngest/lease-close-signal");
const { generateLeaseProposal, failureCode, usageInMessage, GENERATION_RETRIES } = await import("@/inngest/generate-lease-proposal");

const loadForGeneration = vi.mocked(leases.loadForGeneration);
const proposeLease = vi.mocked(leases.proposeLease);
const failGeneration = vi.mocked(leases.failGeneration);
const getModelProvider = vi.mocked(model.getModelProvider);
const watchLeaseClose = vi.mocked(closeSignal.watchLeaseClose);
const recordUsage = vi.mocked(leases.recordUsage);
const releaseReservation = vi.mocked(leases.releaseReservation);

/** The watches the generate step took, newest last: abort one to close its lease. */
let watches: { controller: AbortController; release: ReturnType<typeof vi.fn> }[] = [];

const LEASE_ID = "6f1c1a52-6d55-4a0e-9a43-3f2f2b8f1a01";
const ACTOR_ID = "0b7e6a4c-2f0a-4c38-8a53-8f0c7d2b9e11";
const OTHER_ACTOR = "c3d4e5f6-0000-4000-8000-000000000002";
/** The lease's run nonce as lease/opened carries it; the function must hand back this one. */
const RUN_NONCE = "5b1e".repeat(16);

const INVOICE = {
  id: "9a8b7c6d-1111-4222-8333-444455556666",
  number: "INV-1",
  counterparty: "Northwind Traders",
  currency: "EUR",
  totalCents: 1234550,
  issuedOn: "2026-11-01",
  dueOn: "2026-12-01",
  lines: [{ id: "7d1f0c2e-3333-4444-8555-666677778888", description: "Consulting", quantity: 10, unitPriceCents: 120000 }],
};

function openInput(remainingMs = 60_000): GenerationInput {
  return {
    ok: true,
    lease: {
      id: LEASE_ID,
      actorId: ACTOR_ID,
      purpose: "summarize_invoice",
      deadlineAt: new Date("2026-11-29T10:00:00Z"),
      remainingMs,
    },
    orgId: "2e4f6a8c-0000-4000-8000-000000000003",
    invoice: INVOICE,
    context: { history: { count: 0 } },
  };
}

/** A model that records its requests and answers with `answer` (or throws it). */
function fakeModel(answer: (req: ModelRequest) => Promise<Proposal>, timeLimitMs = 10_000) {
  const requests: ModelRequest[] = [];
  const provider: ModelProvider = {
    name: "fake",
    timeLimitMs,
    async generate(req) {
      requests.push(req);
      return answer(req);
    },
  };
  getModelProvider.mockReturnValue(provider);
  return requests;
}

const ok = (req: ModelRequest): Promise<Proposal> => Promise.resolve(answer(`Summary of ${req.invoice.counterparty}`, req.actorId));

/** A completion as the seam carries it: the purpose's output, the actor it names, the model and its usage. */
const answer = (summary: string, actorId: string): Proposal => ({
  output: { summary },
  actorId,
  model: "fake-1",
  usage: { inputTokens: 120, outputTokens: 30, estimated: false },
});
/** What the `proposed` event says of a summary besides the model: the prompt's version and its length. */
const detailOf = (summary: string) => ({ prompt_version: "summarize-2", summary_chars: summary.length });
/** The usage `answer` reports, as propose records it: the first attempt's call, at the local lane's price (0). */
const USAGE = { callKey: `${LEASE_ID}:0`, model: "fake-1", inputTokens: 120, outputTokens: 30, estimated: false, costCents: 0 };
/** A call the model never answered: its prompt counted by us, no output. */
const UNANSWERED = {
  callKey: `${LEASE_ID}:0`,
  model: "local-summary-v1",
  inputTokens: expect.any(Number),
  outputTokens: 0,
  estimated: true,
  costCents: 0,
};

function engine(attempt = 0) {
  // A fresh engine per test: an instance caches step results across executions.
  return new InngestTestEngine({
    function: generateLeaseProposal,
    // The step's attempt as the server numbers it (0 first), which picks the wait before a retry.
    transformCtx: (ctx) => ({ ...mockCtx(ctx), attempt }),
    events: [
      {
        name: "lease/opened",
        id: `lease-opened-${LEASE_ID}`,
        data: { leaseId: LEASE_ID, actorId: ACTOR_ID, invoiceId: INVOICE.id, purpose: "summarize_invoice", runNonce: RUN_NONCE },
      },
    ],
  });
}

beforeEach(() => {
  vi.clearAllMocks();
  // clearAllMocks keeps queued mockResolvedValueOnce answers: one a test left unread must not leak.
  loadForGeneration.mockReset();
  watches = [];
  watchLeaseClose.mockImplementation(async () => {
    const watch = { controller: new AbortController(), release: vi.fn() };
    watches.push(watch);
    return { signal: watch.controller.signal, release: watch.release };
  });
  // The SDK logs every step error; the tests assert on the errors themselves.
  vi.spyOn(console, "error").mockImplementation(() => {});
  proposeLease.mockResolvedValue({ ok: true });
  failGeneration.mockResolvedValue({ closed: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("generate-lease-proposal: configuration", () => {
  it("is triggered by lease/opened, cancelled by a matching lease/closed, retried, with a failure handler", () => {
    const configs = (
      generateLeaseProposal as unknown as {
        getConfig(o: { baseUrl: URL; appPrefix: string }): Record<string, any>[];
      }
    ).getConfig({ baseUrl: new URL("http://127.0.0.1:3000/api/inngest"), appPrefix: "claimcheck" });
    const [main, failure] = configs;
    expect(main!.id).toBe("claimcheck-generate-lease-proposal");
    expect(main!.triggers).toEqual([{ event: "lease/opened" }]);
    expect(main!.cancel).toEqual([{ event: "lease/closed", if: "event.data.leaseId == async.data.leaseId" }]);
    expect(main!.steps.step.retries.attempts).toBe(GENERATION_RETRIES);
    expect(failure!.id).toBe("claimcheck-generate-lease-proposal-failure");
    expect(failure!.triggers[0].event).toBe("inngest/function.failed");
  });
});

describe("generate-lease-proposal: the run", () => {
  it("reads once, generates and proposes what the model answered, for the actor it named", async () => {
    loadForGeneration.mockResolvedValue(openInput());
    const requests = fakeModel(ok);

    const { result, error, ctx } = await engine().execute();

    expect(error).toBeUndefined();
    // What the Inngest server keeps is ciphertext (docs/decisions/0049).
    expect(result).toMatchObject({ __ENCRYPTED__: true });
    expect(await opened(result)).toEqual({ leaseId: LEASE_ID, outcome: "proposed" });
    expect(vi.mocked(ctx.step.run).mock.calls.map(([id]) => id)).toEqual(["generate", "propose"]);
    // One read of the lease per generation, before the model: no re-read after it.
    expect(loadForGeneration).toHaveBeenCalledTimes(1);
    expect(requests).toHaveLength(1);
    expect(proposeLease).toHaveBeenCalledTimes(1);
    expect(proposeLease).toHaveBeenCalledWith(expect.anything(), {
      leaseId: LEASE_ID,
      actorId: ACTOR_ID,
      runNonce: RUN_NONCE,
      proposal: { summary: "Summary of Northwind Traders", model: "fake-1" },
      detail: detailOf("Summary of Northwind Traders"),
      usage: USAGE,
    });
    expect(failGeneration).not.toHaveBeenCalled();
  });

  it("sends the model only the purpose, the invoice and the actor id, bounded by the lease's close or remaining time", async () => {
    loadForGeneration.mockResolvedValue(openInput(42_000));
    const requests = fakeModel(ok);

    await engine().execute();

    expect(requests).toHaveLength(1);
    const req = requests[0]!;
    expect(Object.keys(req).sort()).toEqual(["actorId", "context", "invoice", "purpose", "signal"]);
    // The purpose's context as the generate step's one read returned it, nothing added.
    expect(req.context).toEqual({ history: { count: 0 } });
    expect(req.purpose).toBe("summarize_invoice");
    expect(req.actorId).toBe(ACTOR_ID);
    expect(req.invoice).toEqual(INVOICE);
    expect(req.signal).toBeInstanceOf(AbortSignal);
    expect(JSON.stringify(req)).not.toMatch(/cookie|session|password|secret/i);
    // The remaining time is the one read in the generate step itself, when it runs.
    expect(watchLeaseClose).toHaveBeenCalledTimes(1);
    expect(watchLeaseClose).toHaveBeenCalledWith(LEASE_ID, 42_000);
    expect(req.signal).toBe(watches[0]!.controller.signal);
    // The watch ends with the call: no listener or timer outlives the step.
    expect(watches[0]!.release).toHaveBeenCalledTimes(1);
  });

  it("keeps step state small and JSON-safe: generate carries the completion, not the invoice", async () => {
    loadForGeneration.mockResolvedValue(openInput());
    fakeModel(ok);

    const { result } = await engine().executeStep("generate");

    expect(await opened(result)).toEqual({
      ok: true,
      actorId: ACTOR_ID,
      output: { summary: "Summary of Northwind Traders" },
      model: "fake-1",
      detail: detailOf("Summary of Northwind Traders"),
      usage: USAGE,
    });
  });

  it.each([
    ["not_open", "rejected"],
    ["expired", "expired"],
    ["lease_not_found", undefined],
  ] as const)("stops before the model when the lease is %s", async (reason, status) => {
    loadForGeneration.mockResolvedValue({ ok: false, reason, status });
    const requests = fakeModel(ok);

    const { result, ctx } = await engine().execute();

    expect(await opened(result)).toEqual({ leaseId: LEASE_ID, outcome: "stopped", reason, status: status ?? null });
    expect(ctx.step.run).not.toHaveBeenCalledWith("propose", expect.any(Function));
    expect(requests).toHaveLength(0);
    expect(proposeLease).not.toHaveBeenCalled();
    // No call of this lease will run: what it reserved goes.
    expect(releaseReservation).toHaveBeenCalledWith(expect.anything(), LEASE_ID);
  });

  it("fails without retry when the lease's invoice is not the actor's (the failure handler closes it)", async () => {
    loadForGeneration.mockResolvedValue({ ok: false, reason: "invoice_not_found" });
    fakeModel(ok);

    const { result } = await engine().executeStep("generate");

    expect(result).toMatchObject({ name: "NonRetriableError", message: expect.stringContaining("invoice_not_found") });
  });
});

describe("generate-lease-proposal: model errors", () => {
  it("lets a ModelUnavailableError fail the step as retriable (StepError, retried with backoff)", async () => {
    loadForGeneration.mockResolvedValue(openInput());
    fakeModel(() => Promise.reject(new ModelUnavailableError("HTTP 503 from the model")));

    const out = await engine().executeStep("generate");

    expect(out.step.op).toBe("StepError");
    expect(out.step.error).toMatchObject({ name: "ModelUnavailableError", message: "HTTP 503 from the model" });
    expect(proposeLease).not.toHaveBeenCalled();
    // The retried attempt's call is counted before the step fails, drawn from the reservation (not
    // final): the next attempt is another call, which what is left of it covers.
    expect(recordUsage).toHaveBeenCalledWith(expect.anything(), LEASE_ID, UNANSWERED, "failed", false);
  });

  it("does not retry when the server's next call could not finish before the deadline: NonRetriableError, model_unavailable", async () => {
    // After attempt 0 the server waits at least 15 s (plus up to 30 s of jitter), then the model
    // may take its 10 s: 40 s left by the database clock, read again after the failure, is too little.
    loadForGeneration.mockResolvedValueOnce(openInput(60_000)).mockResolvedValueOnce(openInput(40_000));
    fakeModel(() => Promise.reject(new ModelUnavailableError("HTTP 503 from the model")));

    const out = await engine().executeStep("generate");

    expect(out.step.op).toBe("StepFailed");
    expect(out.result).toMatchObject({
      name: "NonRetriableError",
      message: expect.stringMatching(/^ModelUnavailableError: HTTP 503 from the model \(no retry could finish/),
    });
    expect(failureCode(out.result as Error)).toBe("model_unavailable");
    expect(loadForGeneration).toHaveBeenCalledTimes(2);
    expect(proposeLease).not.toHaveBeenCalled();
  });

  it.each([
    { attempt: 0, remainingMs: 45_001, timeLimitMs: 10_000, retried: true }, // 15 s + 30 s of jitter
    { attempt: 0, remainingMs: 45_000, timeLimitMs: 10_000, retried: false },
    { attempt: 1, remainingMs: 60_001, timeLimitMs: 10_000, retried: true }, // 30 s + 30 s
    { attempt: 1, remainingMs: 59_000, timeLimitMs: 10_000, retried: false },
    { attempt: 2, remainingMs: 89_000, timeLimitMs: 10_000, retried: false }, // 1 min + 30 s
    { attempt: 0, remainingMs: 60_000, timeLimitMs: 50_000, retried: false }, // 15 s + a 50 s model call
    { attempt: 0, remainingMs: 65_001, timeLimitMs: 50_000, retried: true },
  ])(
    "attempt $attempt with $remainingMs ms left and a $timeLimitMs ms model: retried $retried",
    async ({ attempt, remainingMs, timeLimitMs, retried }) => {
      loadForGeneration.mockResolvedValueOnce(openInput(90_000)).mockResolvedValueOnce(openInput(remainingMs));
      fakeModel(() => Promise.reject(new ModelUnavailableError("connection refused")), timeLimitMs);

      const out = await engine(attempt).executeStep("generate");

      expect(out.step.op).toBe(retried ? "StepError" : "StepFailed");
    },
  );

  it("a lease that closed or ran out while the model failed: the run stops at the re-read, no failure recorded", async () => {
    loadForGeneration.mockResolvedValueOnce(openInput(60_000)).mockResolvedValueOnce({ ok: false, reason: "expired", status: "expired" });
    fakeModel(() => Promise.reject(new ModelUnavailableError("HTTP 502")));

    const { result, error } = await engine().execute();

    expect(error).toBeUndefined();
    expect(await opened(result)).toEqual({ leaseId: LEASE_ID, outcome: "stopped", reason: "expired", status: "expired" });
    expect(failGeneration).not.toHaveBeenCalled();
  });

  it("turns a ModelOutputError into a NonRetriableError (StepFailed, no retry)", async () => {
    loadForGeneration.mockResolvedValue(openInput());
    fakeModel(() => Promise.reject(new ModelOutputError("summary is not JSON")));

    const out = await engine().executeStep("generate");

    expect(out.step.op).toBe("StepFailed");
    expect(out.result).toMatchObject({
      name: "NonRetriableError",
      message: expect.stringMatching(/^ModelOutputError: summary is not JSON \[usage:/),
    });
    // The failed call's usage rides with the error to the failure handler, which records it as it closes the lease.
    expect(usageInMessage((out.result as Error).message)).toEqual(UNANSWERED);
    expect(recordUsage).not.toHaveBeenCalled();
    expect(proposeLease).not.toHaveBeenCalled();
  });

  it("fails without retry when the model is misconfigured", async () => {
    loadForGeneration.mockResolvedValue(openInput());
    getModelProvider.mockImplementation(() => {
      throw new Error("Invalid model configuration:\n  MODEL_BASE_URL is required");
    });

    const out = await engine().executeStep("generate");

    expect(out.step.op).toBe("StepFailed");
    expect(out.result).toMatchObject({ name: "NonRetriableError", message: expect.stringMatching(/^ModelConfigError: .*MODEL_BASE_URL/s) });
  });

  it("stops without retry when the lease's time ran out during the model call, recording expired", async () => {
    watchLeaseClose.mockImplementation(async () => ({ signal: AbortSignal.abort(new Error("lease closed: deadline")), release: vi.fn() }));
    loadForGeneration.mockResolvedValueOnce(openInput(1_000)).mockResolvedValue({ ok: false, reason: "expired", status: "expired" });
    fakeModel((req) => Promise.reject(new ModelUnavailableError(`aborted: ${String(req.signal?.aborted)}`)));

    const { result } = await engine().execute();

    expect(await opened(result)).toEqual({ leaseId: LEASE_ID, outcome: "stopped", reason: "expired", status: "expired" });
    expect(loadForGeneration).toHaveBeenCalledTimes(2); // before the model, and the re-read that expires it
    expect(proposeLease).not.toHaveBeenCalled();
  });
});

describe("generate-lease-proposal: a lease closed during the model call", () => {
  it("aborts the call, and the run ends stopped: no retry, no failure, no late completion", async () => {
    loadForGeneration.mockResolvedValueOnce(openInput()).mockResolvedValue({ ok: false, reason: "not_open", status: "rejected" });
    // A model that answers only when aborted, as the providers do: with the abort's error.
    const requests = fakeModel(
      (req) =>
        new Promise((_, reject) => {
          req.signal!.addEventListener("abort", () =>
            reject(new ModelUnavailableError("model call aborted", { cause: req.signal!.reason })),
          );
          // The lease is cancelled once the model is working.
          queueMicrotask(() => watches.at(-1)!.controller.abort(new Error("lease closed: cancelled")));
        }),
    );

    const { result, ctx } = await engine().execute();

    expect(requests).toHaveLength(1);
    expect(requests[0]!.signal!.aborted).toBe(true);
    // The generate step returned (it did not throw, so no retry and no failure handler): the
    // run ends as stopped, with what the lease became.
    expect(await opened(result)).toEqual({ leaseId: LEASE_ID, outcome: "stopped", reason: "not_open", status: "rejected" });
    expect(ctx.step.run).not.toHaveBeenCalledWith("propose", expect.any(Function));
    expect(loadForGeneration).toHaveBeenCalledTimes(2); // before the model, and the re-read after the abort
    expect(proposeLease).not.toHaveBeenCalled(); // nothing answered, so no late completion
    expect(failGeneration).not.toHaveBeenCalled();
    // The aborted call is counted all the same: its prompt, no answer.
    expect(recordUsage).toHaveBeenCalledTimes(1);
    expect(recordUsage).toHaveBeenCalledWith(expect.anything(), LEASE_ID, UNANSWERED, "aborted");
    expect(watches[0]!.release).toHaveBeenCalledTimes(1);
  });
});

describe("generate-lease-proposal: completions that come too late or for someone else", () => {
  it("records a late completion from the generate step when the lease closed while a model that ignores its signal ran", async () => {
    loadForGeneration.mockResolvedValueOnce(openInput()).mockResolvedValue({ ok: false, reason: "not_open", status: "rejected" });
    proposeLease.mockResolvedValue({ ok: false, code: "late_completion", status: "rejected" });
    // The lease closes during the call (the signal fires), but this model cannot be aborted.
    fakeModel(async (req) => {
      watches.at(-1)!.controller.abort(new Error("lease closed: cancelled"));
      expect(req.signal!.aborted).toBe(true);
      return ok(req);
    });

    const { result, ctx } = await engine().execute();

    // The executor may already have dropped a cancelled run, so propose would never run:
    // the late completion is recorded (as an event only) by the generate step.
    expect(proposeLease).toHaveBeenCalledTimes(1);
    expect(proposeLease).toHaveBeenCalledWith(expect.anything(), {
      leaseId: LEASE_ID,
      actorId: ACTOR_ID,
      runNonce: RUN_NONCE,
      proposal: { summary: "Summary of Northwind Traders", model: "fake-1" },
      detail: detailOf("Summary of Northwind Traders"),
      usage: USAGE,
    });
    expect(ctx.step.run).not.toHaveBeenCalledWith("propose", expect.any(Function));
    // What propose said is the run's outcome; the lease was not read again to learn it.
    expect(await opened(result)).toEqual({ leaseId: LEASE_ID, outcome: "stopped", reason: "late_completion", status: "rejected" });
    expect(loadForGeneration).toHaveBeenCalledTimes(1);
  });

  it("reports what propose refused: a completion past the deadline", async () => {
    loadForGeneration.mockResolvedValue(openInput());
    proposeLease.mockResolvedValue({ ok: false, code: "late_completion", status: "expired" } satisfies ProposeResult);
    fakeModel(ok);

    const { result } = await engine().execute();

    expect(await opened(result)).toEqual({ leaseId: LEASE_ID, outcome: "stopped", reason: "late_completion", status: "expired" });
  });

  it("proposes as the actor the completion names, so a completion for someone else fails closed", async () => {
    loadForGeneration.mockResolvedValue(openInput());
    proposeLease.mockResolvedValue({ ok: false, code: "actor_mismatch", status: "rejected" });
    fakeModel(() => Promise.resolve(answer("For someone else", OTHER_ACTOR)));

    const { result } = await engine().execute();

    expect(proposeLease).toHaveBeenCalledWith(expect.anything(), expect.objectContaining({ actorId: OTHER_ACTOR }));
    expect(await opened(result)).toEqual({ leaseId: LEASE_ID, outcome: "stopped", reason: "actor_mismatch", status: "rejected" });
  });
});

// The failure handler's body, recordGenerationFailure, runs on a real database in
// tests/integration/generation/generation-function.test.ts.

describe("failureCode", () => {
  it.each([
    [{ name: "ModelUnavailableError", message: "HTTP 503 from the model" }, "model_unavailable"],
    [{ name: "NonRetriableError", message: "ModelOutputError: summary is not JSON" }, "model_output_invalid"],
    [{ name: "NonRetriableError", message: "ModelConfigError: MODEL_BASE_URL is required" }, "model_not_configured"],
    [{ name: "NonRetriableError", message: "invoice_not_found: the lease's invoice is not readable as its actor" }, "invoice_not_found"],
    [{ name: "PostgresError", message: 'relation "inference_lease" does not exist' }, "internal_error"],
    [{ name: "Error", message: "select * from invoice where id = $1" }, "internal_error"],
    [{}, "internal_error"],
  ] as const)("%o -> %s", (error, code) => {
    expect(failureCode(error)).toBe(code);
  });
});
