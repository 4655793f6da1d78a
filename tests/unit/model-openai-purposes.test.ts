// The openai-compatible lane for every purpose of the registry (lib/purposes), against the fake
// OpenAI-compatible server: what it asks for (structured output with the purpose's schema, the
// purpose's instructions, the user message), how it reads each purpose's answer (categorize_lines
// answers line numbers, mapped to the invoice's line ids), what it refuses as not the purpose's
// form (ModelSchemaError: invalid_output), and the tokens it counts, aborted calls included.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { FINDING_CODES } from "@/lib/lease-codes";
import { estimateTokens, userMessage } from "@/lib/model/internal";
import { createOpenAICompatibleProvider, promptUsage, usageOfError } from "@/lib/model/openai-compatible";
import { ModelOutputError, ModelSchemaError, ModelUnavailableError, type ModelRequest } from "@/lib/model/types";
import { PURPOSE_DEFINITIONS } from "@/lib/purposes";
import { FAKE_CATEGORY, FAKE_SUMMARY, startFakeOpenAI, type FakeOpenAI } from "../harness/fake-openai";
import { type Purpose, PURPOSES } from "@/lib/purposes";

const ACTOR = "7b0c8d7e-1a52-4f43-9d7e-2f7f1f0a9c11";
const MODEL = "fake-gpt";

const invoice: ModelRequest["invoice"] = {
  id: "5d0c1f5e-8a4e-4b1e-9a55-0c3e6a1f2b77",
  number: "INV-1042",
  counterparty: "Northwind Traders",
  currency: "EUR",
  totalCents: 1_234_500,
  issuedOn: "2026-11-01",
  dueOn: "2026-12-01",
  lines: [
    { id: "line-a", description: "Software licence", quantity: 10, unitPriceCents: 100_000 },
    { id: "line-b", description: "Travel", quantity: 1, unitPriceCents: 234_500 },
  ],
};

const CONTEXTS: Record<Purpose, Record<string, unknown>> = {
  summarize_invoice: { history: { count: 2, average_cents: 1_000_000, last_issued_on: "2026-10-01", last_total_cents: 900_000 } },
  review_invoice: { today: "2026-11-28", status: "open", duplicates: [], counterparty: { count: 0, median_cents: null } },
  categorize_lines: {
    accounts: [
      { code: "6100", name: "Software", keywords: ["licence"] },
      { code: "6400", name: "Travel", keywords: ["travel"] },
      { code: FAKE_CATEGORY, name: "Other expenses", keywords: [] },
    ],
  },
};

const request = (purpose: Purpose, overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  purpose,
  actorId: ACTOR,
  invoice,
  context: CONTEXTS[purpose],
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

const provider = (timeoutMs = 5_000) =>
  createOpenAICompatibleProvider({ baseURL: fake.baseURL, apiKey: "sk-test", model: MODEL, timeoutMs });

const failure = (promise: Promise<unknown>) =>
  promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error as Error,
  );

type Body = {
  messages: { role: string; content: string }[];
  response_format: { type: string; json_schema: { name: string; strict: boolean; schema: Record<string, unknown> } };
};
const sentBody = () => fake.requests[0]?.json as Body;

/**
 * The purpose's output as JSON Schema, less what OpenAI's strict subset does not accept (string
 * lengths, the `$schema` tag, zod's safe-integer bound): the purpose's schema checks those after
 * the answer. Plus `actor_id`, required like every field.
 */
function strictSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (typeof node !== "object" || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "$schema" || key === "minLength" || key === "maxLength") continue;
      if ((key === "maximum" || key === "minimum") && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
      out[key] = strip(value);
    }
    return out;
  };
  const json = strip(z.toJSONSchema(schema)) as { properties: Record<string, unknown>; required: string[] };
  return { ...json, properties: { ...json.properties, actor_id: { type: "string" } }, required: [...json.required, "actor_id"] };
}

describe("the request: structured output with the purpose's schema", () => {
  it.each(PURPOSES)(
    "%s: response_format json_schema (strict, named for the purpose), its instructions, the user message",
    async (purpose) => {
      await provider().generate(request(purpose));
      const body = sentBody();
      expect(body.response_format.type).toBe("json_schema");
      expect(body.response_format.json_schema.name).toBe(purpose);
      expect(body.response_format.json_schema.strict).toBe(true);
      expect(body.messages).toEqual([
        { role: "system", content: PURPOSE_DEFINITIONS[purpose].instructions },
        { role: "user", content: userMessage(request(purpose)) },
      ]);
    },
  );

  it.each(["summarize_invoice", "review_invoice"] as const)("%s: the schema is the purpose's output plus actor_id", async (purpose) => {
    await provider().generate(request(purpose));
    expect(sentBody().response_format.json_schema.schema).toEqual(strictSchemaOf(PURPOSE_DEFINITIONS[purpose].output));
  });

  it("review_invoice: the finding codes are the schema's enum", async () => {
    await provider().generate(request("review_invoice"));
    const schema = sentBody().response_format.json_schema.schema as {
      properties: { findings: { items: { properties: { code: { enum: string[] } } } } };
    };
    expect(schema.properties.findings.items.properties.code.enum).toEqual([...FINDING_CODES]);
  });

  it("categorize_lines: the model answers a line number and a code from the chart it was given", async () => {
    await provider().generate(request("categorize_lines"));
    expect(sentBody().response_format.json_schema.schema).toEqual({
      type: "object",
      properties: {
        lines: {
          type: "array",
          maxItems: 1000,
          items: {
            type: "object",
            properties: { line: { type: "integer", minimum: 1 }, category: { type: "string", enum: ["6100", "6400", FAKE_CATEGORY] } },
            required: ["line", "category"],
            additionalProperties: false,
          },
        },
        actor_id: { type: "string" },
      },
      required: ["lines", "actor_id"],
      additionalProperties: false,
    });
  });

  it("no strict-mode keyword OpenAI refuses is sent, for any purpose", async () => {
    for (const purpose of PURPOSES) await provider().generate(request(purpose));
    for (const sent of fake.requests) {
      const schema = JSON.stringify((sent.json as Body).response_format.json_schema.schema);
      expect(schema).not.toMatch(/"(minLength|maxLength|\$schema)"/);
      expect(schema).not.toContain(String(Number.MAX_SAFE_INTEGER));
    }
  });
});

describe("the answer, parsed per purpose", () => {
  it("summarize_invoice: {summary}, the actor the completion names", async () => {
    fake.respondWith({ kind: "json", value: { summary: "  Twice the usual total.  " }, actorId: "someone-else" });
    const proposal = await provider().generate(request("summarize_invoice"));
    // Trimmed by the purpose's own schema, as the generate step would.
    expect(proposal.output).toEqual({ summary: "Twice the usual total." });
    expect(proposal.actorId).toBe("someone-else");
    expect(proposal.model).toBe(MODEL);
  });

  it("review_invoice: the findings, without actor_id", async () => {
    const findings = [
      { code: "due_soon", severity: "medium", message: "Due in 3 days.", fields: ["due_on"] },
      { code: "lines_do_not_add_up", severity: "high", message: "Lines are 100.00 short.", fields: ["total_cents", "lines"] },
    ];
    fake.respondWith({ kind: "json", value: { findings } });
    const proposal = await provider().generate(request("review_invoice"));
    expect(proposal.output).toEqual({ findings });
    expect(proposal.actorId).toBe(ACTOR);
  });

  it("categorize_lines: each line number (from 1) becomes that line's id, in the model's order", async () => {
    fake.respondWith({
      kind: "json",
      value: {
        lines: [
          { line: 2, category: "6400" },
          { line: 1, category: "6100" },
        ],
      },
    });
    const proposal = await provider().generate(request("categorize_lines"));
    expect(proposal.output).toEqual({
      lines: [
        { line_id: "line-b", category: "6400" },
        { line_id: "line-a", category: "6100" },
      ],
    });
    expect(PURPOSE_DEFINITIONS.categorize_lines.output.safeParse(proposal.output).success).toBe(true);
  });

  it("categorize_lines: lines without ids (an older caller) are named by their number, as the local model does", async () => {
    const bare = { ...invoice, lines: invoice.lines.map(({ id: _id, ...line }) => line) };
    fake.respondWith({ kind: "json", value: { lines: [{ line: 2, category: "6400" }] } });
    const proposal = await provider().generate(request("categorize_lines", { invoice: bare }));
    expect(proposal.output).toEqual({ lines: [{ line_id: "2", category: "6400" }] });
  });

  it.each(PURPOSES)("%s: the fake server's default answer passes the purpose's schema", async (purpose) => {
    const proposal = await provider().generate(request(purpose));
    expect(PURPOSE_DEFINITIONS[purpose].output.safeParse(proposal.output).success).toBe(true);
    if (purpose === "summarize_invoice") expect(proposal.output).toEqual({ summary: FAKE_SUMMARY });
    if (purpose === "categorize_lines") {
      expect(proposal.output).toEqual({
        lines: [
          { line_id: "line-a", category: FAKE_CATEGORY },
          { line_id: "line-b", category: FAKE_CATEGORY },
        ],
      });
    }
  });
});

describe("refused as not the purpose's form: ModelSchemaError (invalid_output)", () => {
  const finding = { code: "overdue", severity: "high", message: "Overdue.", fields: ["due_on"] };
  it.each<[string, Purpose, Record<string, unknown>]>([
    ["summary missing", "summarize_invoice", {}],
    ["summary blank", "summarize_invoice", { summary: "   " }],
    ["summary not a string", "summarize_invoice", { summary: 42 }],
    ["summary too long", "summarize_invoice", { summary: "x".repeat(1201) }],
    ["a finding code the registry lacks", "review_invoice", { findings: [{ ...finding, code: "looks_fishy" }] }],
    ["a finding without its severity", "review_invoice", { findings: [{ code: "overdue", message: "Overdue.", fields: ["due_on"] }] }],
    ["a severity outside high/medium/low", "review_invoice", { findings: [{ ...finding, severity: "urgent" }] }],
    ["findings missing", "review_invoice", {}],
    ["a line number beyond the invoice's lines", "categorize_lines", { lines: [{ line: 3, category: "6100" }] }],
    ["line number 0 (lines count from 1)", "categorize_lines", { lines: [{ line: 0, category: "6100" }] }],
    ["a fractional line number", "categorize_lines", { lines: [{ line: 1.5, category: "6100" }] }],
    ["an account code not in the chart", "categorize_lines", { lines: [{ line: 1, category: "9999" }] }],
    ["a line without its category", "categorize_lines", { lines: [{ line: 1 }] }],
    [
      "the same line twice",
      "categorize_lines",
      {
        lines: [
          { line: 1, category: "6100" },
          { line: 1, category: "6400" },
        ],
      },
    ],
    ["line_id instead of line", "categorize_lines", { lines: [{ line_id: "line-a", category: "6100" }] }],
  ])("%s (%s)", async (_label, purpose, value) => {
    fake.respondWith({ kind: "json", value });
    const error = await failure(provider().generate(request(purpose)));
    expect(error).toBeInstanceOf(ModelSchemaError);
    expect(error.message).toContain(purpose);
  });

  it.each([
    ["actor_id missing", JSON.stringify({ summary: "ok" })],
    ["actor_id not a string", JSON.stringify({ summary: "ok", actor_id: 42 })],
    ["a JSON array", JSON.stringify([{ summary: "ok", actor_id: ACTOR }])],
  ])("valid JSON but not the requested form: %s", async (_label, content) => {
    fake.respondWith({ kind: "content", content });
    expect(await failure(provider().generate(request("summarize_invoice")))).toBeInstanceOf(ModelSchemaError);
  });

  it("content that is not JSON stays a ModelOutputError, not a schema refusal", async () => {
    fake.respondWith({ kind: "malformed" });
    const error = await failure(provider().generate(request("review_invoice")));
    expect(error).toBeInstanceOf(ModelOutputError);
    expect(error).not.toBeInstanceOf(ModelSchemaError);
  });
});

describe("usage", () => {
  it.each(PURPOSES)("%s: the tokens the server reports, as it reports them", async (purpose) => {
    fake.respondWith({ kind: "echo", usage: { prompt_tokens: 321, completion_tokens: 45 } });
    const proposal = await provider().generate(request(purpose));
    expect(proposal.usage).toEqual({ inputTokens: 321, outputTokens: 45, estimated: false });
  });

  it.each(PURPOSES)("%s: a server that reports none: the prompt and the answer counted, estimated", async (purpose) => {
    const value = { review_invoice: { findings: [] }, summarize_invoice: { summary: "A summary." }, categorize_lines: { lines: [] } }[
      purpose
    ];
    const content = JSON.stringify({ ...value, actor_id: ACTOR });
    fake.respondWith({ kind: "content", content, usage: null });
    const proposal = await provider().generate(request(purpose));
    expect(proposal.usage).toEqual({
      inputTokens: promptUsage(request(purpose)).inputTokens,
      outputTokens: estimateTokens(content),
      estimated: true,
    });
    expect(proposal.usage.inputTokens).toBeGreaterThan(0);
  });

  it("promptUsage: the instructions and the user message, as the local lane counts them, no output", () => {
    for (const purpose of PURPOSES) {
      const r = request(purpose);
      expect(promptUsage(r)).toEqual({
        inputTokens: estimateTokens(PURPOSE_DEFINITIONS[purpose].instructions) + estimateTokens(userMessage(r)),
        outputTokens: 0,
        estimated: true,
      });
    }
  });

  it("a call aborted while the model works (the lease closed) throws with the prompt's estimated usage", async () => {
    fake.respondWith({ kind: "hang" });
    const controller = new AbortController();
    const r = request("review_invoice", { signal: controller.signal });
    const call = failure(provider(30_000).generate(r));
    await fake.nextRequest(() => true);
    controller.abort(new Error("lease closed"));
    const error = await call;
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(usageOfError(error)).toEqual(promptUsage(r));
    expect((error as ModelUnavailableError & { usage: unknown }).usage).toEqual(promptUsage(r));
  });

  it("a call cut off by its own deadline also carries the prompt's estimated usage", async () => {
    fake.respondWith({ kind: "hang" });
    const r = request("summarize_invoice");
    const error = await failure(provider(200).generate(r));
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(usageOfError(error)).toEqual(promptUsage(r));
  });

  it("a signal aborted before the call sends nothing and carries no usage", async () => {
    const error = await failure(provider().generate(request("summarize_invoice", { signal: AbortSignal.abort() })));
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(fake.requests).toHaveLength(0);
    expect(usageOfError(error)).toBeUndefined();
  });

  it("a refused answer still cost its tokens: the error carries the completion's usage", async () => {
    fake.respondWith({ kind: "json", value: { findings: [{ code: "nope" }] }, usage: { prompt_tokens: 500, completion_tokens: 20 } });
    const error = await failure(provider().generate(request("review_invoice")));
    expect(error).toBeInstanceOf(ModelSchemaError);
    expect(usageOfError(error)).toEqual({ inputTokens: 500, outputTokens: 20, estimated: false });
  });

  it("an HTTP error from the server carries no usage (nothing was generated)", async () => {
    fake.respondWith({ kind: "status", status: 503 });
    const error = await failure(provider().generate(request("summarize_invoice")));
    expect(usageOfError(error)).toBeUndefined();
  });
});
