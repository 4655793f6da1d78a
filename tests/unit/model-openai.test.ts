import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from "@/lib/model/openai-compatible";
import {
  ModelConfigError,
  ModelOutputError,
  ModelUnavailableError,
  SUMMARY_MAX_CHARS,
  type InvoiceForModel,
  type ModelRequest,
} from "@/lib/model/types";
import { FAKE_SUMMARY, startFakeOpenAI, type FakeOpenAI } from "../harness/fake-openai";

const ACTOR = "7b0c8d7e-1a52-4f43-9d7e-2f7f1f0a9c11";
const OTHER_ACTOR = "0f9e8d7c-6b5a-4f3e-8d2c-1b0a9f8e7d6c";
const API_KEY = "sk-test-claimcheck-secret-4242";
const MODEL = "fake-gpt";

const invoice: InvoiceForModel = {
  id: "5d0c1f5e-8a4e-4b1e-9a55-0c3e6a1f2b77",
  number: "INV-1042",
  counterparty: "Northwind Traders",
  currency: "EUR",
  totalCents: 1_234_500,
  issuedOn: "2026-11-01",
  dueOn: "2026-12-01",
  lines: [
    { description: "Consulting", quantity: 10, unitPriceCents: 100_000 },
    { description: "Travel", quantity: 1, unitPriceCents: 234_500 },
  ],
};

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  purpose: "summarize_invoice",
  actorId: ACTOR,
  invoice,
  ...overrides,
});

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.respondWith({ kind: "echo" });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const provider = (overrides: Partial<OpenAICompatibleOptions> = {}) =>
  createOpenAICompatibleProvider({ baseURL: fake.baseURL, apiKey: API_KEY, model: MODEL, timeoutMs: 5_000, ...overrides });

const failure = (promise: Promise<unknown>) =>
  promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error as Error,
  );

describe("openai-compatible model provider", () => {
  it("happy path: returns the validated summary, the actor the completion names, and the model", async () => {
    const p = provider();
    expect(p.name).toBe("openai-compatible");
    const proposal = await p.generate(request());
    expect(proposal).toEqual({
      output: { summary: FAKE_SUMMARY },
      actorId: ACTOR,
      model: MODEL,
      // The tokens the server reported, as it reported them.
      usage: { inputTokens: 1, outputTokens: 1, estimated: false },
    });
    expect(fake.requests).toHaveLength(1);
  });

  it("sends one POST to /v1/chat/completions with Bearer <key>, the model and the purpose's response_format json_schema", async () => {
    await provider().generate(request());
    const [sent] = fake.requests;
    expect(sent?.method).toBe("POST");
    expect(sent?.url).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    // Each purpose's schema: tests/unit/model-openai-purposes.test.ts.
    expect(sent?.json).toMatchObject({
      model: MODEL,
      response_format: { type: "json_schema", json_schema: { name: "summarize_invoice", strict: true } },
    });
  });

  it("also works against a base URL without /v1 (POST /chat/completions)", async () => {
    const proposal = await provider({ baseURL: fake.baseURL.replace(/\/v1$/, "") }).generate(request());
    expect((proposal.output as { summary: string }).summary).toBe(FAKE_SUMMARY);
    expect(fake.requests[0]?.url).toBe("/chat/completions");
  });

  it("prompt: a system message and a user message holding only the invoice data and the actor id", async () => {
    await provider().generate(request());
    const body = fake.requests[0]?.json as { messages: { role: string; content: string }[] };
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(body.messages[0]?.content).toMatch(/summar/i);
    expect(body.messages[0]?.content).toContain('"actor_id"');
    const user = JSON.parse(body.messages[1]?.content ?? "null") as Record<string, unknown>;
    expect(Object.keys(user).sort()).toEqual(["actor_id", "invoice"]);
    expect(user.actor_id).toBe(ACTOR);
    expect(user.invoice).toMatchObject({
      number: "INV-1042",
      counterparty: "Northwind Traders",
      currency: "EUR",
      total: "12345.00",
      issued_on: "2026-11-01",
      due_on: "2026-12-01",
    });
    expect(fake.requests[0]?.actorId).toBe(ACTOR);
    expect(fake.requests[0]?.body).toContain("Northwind Traders");
  });

  it("leaks no API key, cookie, session or env value into the request", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-env-openai-key-LEAK");
    vi.stubEnv("OPENAI_ORG_ID", "org-env-LEAK");
    vi.stubEnv("OPENAI_PROJECT_ID", "proj-env-LEAK");
    vi.stubEnv("SESSION_PASSWORD", "session-password-env-LEAK-0123456789abcdef");
    // A caller handing over more than InvoiceForModel (e.g. a whole row) must not leak it.
    const row = { ...invoice, ownerId: "owner-LEAK", sessionToken: "sess-LEAK", cookie: "sid=LEAK" } as InvoiceForModel;
    await provider().generate(request({ invoice: row }));

    const sent = fake.requests[0]!;
    expect(sent.body).not.toContain(API_KEY);
    expect(sent.body).not.toMatch(/cookie|session/i);
    expect(sent.body).not.toContain("LEAK");
    expect(sent.headers.cookie).toBeUndefined();
    const headerText = JSON.stringify(sent.headers);
    expect(headerText).not.toContain("LEAK");
    // The key travels only in the Authorization header.
    expect(headerText.split(API_KEY)).toHaveLength(2);
    expect(sent.headers["openai-organization"]).toBeUndefined();
    expect(sent.headers["openai-project"]).toBeUndefined();
  });

  it("returns the other actor when the completion names another actor (the caller refuses it)", async () => {
    fake.respondWith({ kind: "other-actor", actorId: OTHER_ACTOR });
    const proposal = await provider().generate(request());
    expect(proposal.actorId).toBe(OTHER_ACTOR);
    expect(proposal.actorId).not.toBe(ACTOR);
  });

  describe("unavailable (retriable): ModelUnavailableError", () => {
    it("slow beyond the timeout", async () => {
      fake.respondWith({ kind: "slow", delayMs: 10_000 });
      const started = performance.now();
      const error = await failure(provider({ timeoutMs: 200 }).generate(request()));
      expect(error).toBeInstanceOf(ModelUnavailableError);
      expect(error.message).toMatch(/within 200 ms/);
      expect(performance.now() - started).toBeLessThan(5_000);
    });

    it("a body that stalls after the headers is cut off by the same whole-call deadline", async () => {
      fake.respondWith({ kind: "slow-body", delayMs: 10_000 });
      const started = performance.now();
      const error = await failure(provider({ timeoutMs: 300 }).generate(request()));
      expect(error).toBeInstanceOf(ModelUnavailableError);
      expect(performance.now() - started).toBeLessThan(5_000);
    });

    it("slow but within the timeout succeeds", async () => {
      fake.respondWith({ kind: "slow", delayMs: 50 });
      const proposal = await provider({ timeoutMs: 5_000 }).generate(request());
      expect((proposal.output as { summary: string }).summary).toBe(FAKE_SUMMARY);
    });

    it("the caller's signal aborts a hanging call promptly", async () => {
      fake.respondWith({ kind: "hang" });
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error("lease expired")), 50);
      const started = performance.now();
      const error = await failure(provider({ timeoutMs: 30_000 }).generate(request({ signal: controller.signal })));
      expect(error).toBeInstanceOf(ModelUnavailableError);
      expect(error.message).toMatch(/aborted/);
      expect(performance.now() - started).toBeLessThan(5_000);
    });

    it("an already-aborted signal sends nothing", async () => {
      const error = await failure(provider().generate(request({ signal: AbortSignal.abort() })));
      expect(error).toBeInstanceOf(ModelUnavailableError);
      expect(fake.requests).toHaveLength(0);
    });

    it.each([500, 502, 503, 429, 408])("HTTP %i, with no retry by the client", async (status) => {
      fake.respondWith({ kind: "status", status });
      const error = await failure(provider().generate(request()));
      expect(error).toBeInstanceOf(ModelUnavailableError);
      expect(error).not.toBeInstanceOf(ModelOutputError);
      expect(error.message).toContain(String(status));
      expect(fake.requests).toHaveLength(1);
    });

    it("connection refused", async () => {
      const gone = await startFakeOpenAI();
      const baseURL = gone.baseURL;
      await gone.close();
      const error = await failure(provider({ baseURL }).generate(request()));
      expect(error).toBeInstanceOf(ModelUnavailableError);
    });
  });

  describe("refused (non-retriable): ModelOutputError", () => {
    it("malformed JSON content", async () => {
      fake.respondWith({ kind: "malformed" });
      const error = await failure(provider().generate(request()));
      expect(error).toBeInstanceOf(ModelOutputError);
      expect(error).not.toBeInstanceOf(ModelUnavailableError);
    });

    it("oversized summary", async () => {
      fake.respondWith({ kind: "oversized" });
      const error = await failure(provider().generate(request()));
      expect(error).toBeInstanceOf(ModelOutputError);
      expect(error.message).toContain(String(SUMMARY_MAX_CHARS));
    });

    it("a summary of exactly SUMMARY_MAX_CHARS is accepted", async () => {
      fake.respondWith({ kind: "oversized", length: SUMMARY_MAX_CHARS });
      const proposal = await provider().generate(request());
      expect((proposal.output as { summary: string }).summary).toHaveLength(SUMMARY_MAX_CHARS);
    });

    it.each([
      ["empty summary", JSON.stringify({ summary: "   ", actor_id: ACTOR })],
      ["missing summary", JSON.stringify({ actor_id: ACTOR })],
      ["missing actor_id", JSON.stringify({ summary: "ok" })],
      ["non-string actor_id", JSON.stringify({ summary: "ok", actor_id: 42 })],
      ["non-string summary", JSON.stringify({ summary: ["ok"], actor_id: ACTOR })],
      ["a JSON array", JSON.stringify([{ summary: "ok", actor_id: ACTOR }])],
      ["prose around the JSON", `Sure! ${JSON.stringify({ summary: "ok", actor_id: ACTOR })}`],
      ["empty content", ""],
    ])("%s", async (_label, content) => {
      fake.respondWith({ kind: "content", content });
      const error = await failure(provider().generate(request()));
      expect(error).toBeInstanceOf(ModelOutputError);
    });

    it("a non-JSON HTTP body (HTML with a 200)", async () => {
      fake.respondWith({ kind: "non-json-body" });
      const error = await failure(provider().generate(request()));
      expect(error).toBeInstanceOf(ModelOutputError);
    });

    it("a broken JSON HTTP body labelled application/json", async () => {
      fake.respondWith({ kind: "non-json-body", contentType: "application/json", body: "{not json" });
      const error = await failure(provider().generate(request()));
      expect(error).toBeInstanceOf(ModelOutputError);
    });

    it.each([400, 401, 403, 404, 422])("HTTP %i is a ModelConfigError (a ModelOutputError), not retried", async (status) => {
      fake.respondWith({ kind: "status", status });
      const error = await failure(provider().generate(request()));
      expect(error).toBeInstanceOf(ModelConfigError);
      expect(error).toBeInstanceOf(ModelOutputError);
      expect((error as ModelConfigError).status).toBe(status);
      expect(error.message).not.toContain(API_KEY);
      expect(fake.requests).toHaveLength(1);
    });
  });
});
