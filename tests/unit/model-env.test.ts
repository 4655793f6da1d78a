import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getModelProvider, invoiceForModel, modelTimeLimitMs, ModelUnavailableError, type InvoiceForModel } from "@/lib/model";
import { startFakeOpenAI, type FakeOpenAI } from "../harness/fake-openai";

const ACTOR = "7b0c8d7e-1a52-4f43-9d7e-2f7f1f0a9c11";
const KEY = "sk-env-test-secret-9876";

const invoice: InvoiceForModel = {
  id: "5d0c1f5e-8a4e-4b1e-9a55-0c3e6a1f2b77",
  number: "INV-7",
  counterparty: "Contoso",
  currency: "USD",
  totalCents: 10_000,
  issuedOn: "2026-11-01",
  dueOn: "2026-11-15",
  lines: [{ description: "Support", quantity: 1, unitPriceCents: 10_000 }],
};

const complete = { MODEL_PROVIDER: "openai-compatible", MODEL_BASE_URL: "http://127.0.0.1:9/v1", MODEL_API_KEY: KEY, MODEL_NAME: "m" };

describe("getModelProvider", () => {
  it("defaults to the local provider", () => {
    expect(getModelProvider({}).name).toBe("local");
    expect(getModelProvider({ MODEL_PROVIDER: "" }).name).toBe("local");
    expect(getModelProvider({ MODEL_PROVIDER: "local" }).name).toBe("local");
  });

  it("says how long one call can take, which a retry must still have time for (decision 0050)", () => {
    expect(getModelProvider(complete).timeLimitMs).toBe(30_000);
    expect(getModelProvider({ ...complete, MODEL_TIMEOUT_MS: "5000" }).timeLimitMs).toBe(5_000);
    expect(getModelProvider({}).timeLimitMs).toBe(0);
    expect(getModelProvider({ MODEL_LATENCY_MS: "120" }).timeLimitMs).toBe(120);
  });

  it("modelTimeLimitMs reads that limit without building the provider (lib/spend's grace after a deadline)", () => {
    for (const env of [{}, { MODEL_LATENCY_MS: "1500" }, complete, { ...complete, MODEL_TIMEOUT_MS: "5000" }]) {
      expect(modelTimeLimitMs(env), JSON.stringify(env)).toBe(getModelProvider(env).timeLimitMs);
    }
    expect(() => modelTimeLimitMs({ ...complete, MODEL_TIMEOUT_MS: "0" })).toThrow(/MODEL_TIMEOUT_MS/);
    expect(() => modelTimeLimitMs({ MODEL_PROVIDER: "gpt" })).toThrow(/MODEL_PROVIDER/);
  });

  it("ignores openai settings when local is chosen", () => {
    expect(getModelProvider({ MODEL_PROVIDER: "local", MODEL_BASE_URL: "not a url" }).name).toBe("local");
  });

  it("accepts MODEL_LATENCY_MS as an integer >= 0 and honours it (generous bounds)", async () => {
    expect(getModelProvider({ MODEL_LATENCY_MS: "0" }).name).toBe("local");
    const provider = getModelProvider({ MODEL_LATENCY_MS: "120" });
    const started = performance.now();
    const proposal = await provider.generate({ purpose: "summarize_invoice", actorId: ACTOR, invoice });
    expect(performance.now() - started).toBeGreaterThanOrEqual(80);
    expect(proposal.actorId).toBe(ACTOR);
    expect((proposal.output as { summary: string }).summary).toContain("Contoso");
  });

  it("a large MODEL_LATENCY_MS still yields to an abort", async () => {
    const provider = getModelProvider({ MODEL_LATENCY_MS: "60000" });
    const error = await provider
      .generate({ purpose: "summarize_invoice", actorId: ACTOR, invoice, signal: AbortSignal.timeout(20) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
  });

  it("MODEL_IGNORE_ABORT=1: the local model answers after its delay even though its call was aborted", async () => {
    const provider = getModelProvider({ MODEL_LATENCY_MS: "50", MODEL_IGNORE_ABORT: "1" });
    const signal = AbortSignal.abort(new Error("lease closed: cancelled"));
    const proposal = await provider.generate({ purpose: "summarize_invoice", actorId: ACTOR, invoice, signal });
    expect(proposal.actorId).toBe(ACTOR);
    expect((proposal.output as { summary: string }).summary).toContain("Contoso");
    // And "0" (the default) yields to the abort.
    const abortable = getModelProvider({ MODEL_LATENCY_MS: "50", MODEL_IGNORE_ABORT: "0" });
    await expect(abortable.generate({ purpose: "summarize_invoice", actorId: ACTOR, invoice, signal })).rejects.toBeInstanceOf(
      ModelUnavailableError,
    );
  });

  it.each(["yes", "true", "2"])("refuses MODEL_IGNORE_ABORT=%s, naming the variable", (value) => {
    expect(() => getModelProvider({ MODEL_IGNORE_ABORT: value })).toThrow(/MODEL_IGNORE_ABORT/);
  });

  it.each(["-1", "1.5", "abc", "10ms", "1e3"])("refuses MODEL_LATENCY_MS=%s, naming the variable", (value) => {
    expect(() => getModelProvider({ MODEL_LATENCY_MS: value })).toThrow(/MODEL_LATENCY_MS/);
  });

  it("refuses an unknown MODEL_PROVIDER, naming the variable", () => {
    expect(() => getModelProvider({ MODEL_PROVIDER: "gpt" })).toThrow(/MODEL_PROVIDER/);
  });

  it.each(["MODEL_BASE_URL", "MODEL_API_KEY", "MODEL_NAME"])("openai-compatible without %s throws an Error naming it", (missing) => {
    const env: Record<string, string | undefined> = { ...complete, [missing]: undefined };
    expect(() => getModelProvider(env)).toThrow(new RegExp(`${missing} is required`));
    const blank: Record<string, string | undefined> = { ...complete, [missing]: "  " };
    expect(() => getModelProvider(blank)).toThrow(new RegExp(`${missing} is required`));
  });

  it("names every missing variable at once and never echoes the key", () => {
    let message = "";
    try {
      getModelProvider({ MODEL_PROVIDER: "openai-compatible", MODEL_API_KEY: KEY });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/MODEL_BASE_URL/);
    expect(message).toMatch(/MODEL_NAME/);
    expect(message).not.toMatch(/MODEL_API_KEY is required/);
    expect(message).not.toContain(KEY);
  });

  it("refuses a MODEL_BASE_URL that is not http(s) and a bad MODEL_TIMEOUT_MS", () => {
    expect(() => getModelProvider({ ...complete, MODEL_BASE_URL: "ftp://example.com/v1" })).toThrow(/MODEL_BASE_URL/);
    expect(() => getModelProvider({ ...complete, MODEL_BASE_URL: "api.openai.com" })).toThrow(/MODEL_BASE_URL/);
    expect(() => getModelProvider({ ...complete, MODEL_TIMEOUT_MS: "0" })).toThrow(/MODEL_TIMEOUT_MS/);
  });

  it("builds the openai-compatible provider from a complete configuration", () => {
    expect(getModelProvider(complete).name).toBe("openai-compatible");
    expect(getModelProvider({ ...complete, MODEL_TIMEOUT_MS: "5000" }).name).toBe("openai-compatible");
  });

  describe("end to end against the fake server", () => {
    let fake: FakeOpenAI;
    beforeAll(async () => {
      fake = await startFakeOpenAI();
    });
    afterAll(async () => {
      await fake.close();
    });

    it("uses MODEL_BASE_URL, MODEL_API_KEY and MODEL_NAME", async () => {
      const provider = getModelProvider({ ...complete, MODEL_BASE_URL: fake.baseURL, MODEL_NAME: "fake-from-env" });
      const proposal = await provider.generate({ purpose: "summarize_invoice", actorId: ACTOR, invoice });
      expect(proposal.model).toBe("fake-from-env");
      expect(proposal.actorId).toBe(ACTOR);
      expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(fake.requests.at(-1)?.json).toMatchObject({ model: "fake-from-env" });
    });
  });
});

describe("invoiceForModel", () => {
  it("copies only the model's fields and orders lines by position", () => {
    const row = { ...invoice, ownerId: "owner", summary: "old", version: 3 };
    const lines = [
      { description: "B", quantity: 1, unitPriceCents: 2, position: 2, invoiceId: "x" },
      { description: "A", quantity: 1, unitPriceCents: 1, position: 1, invoiceId: "x" },
    ];
    const out = invoiceForModel(row, lines);
    expect(Object.keys(out).sort()).toEqual(["counterparty", "currency", "dueOn", "id", "issuedOn", "lines", "number", "totalCents"]);
    expect(out.lines).toEqual([
      { description: "A", quantity: 1, unitPriceCents: 1 },
      { description: "B", quantity: 1, unitPriceCents: 2 },
    ]);
  });
});
