// Chooses the model provider from the environment. The only place that reads MODEL_* vars.
//
//   MODEL_PROVIDER     "local" (default) | "openai-compatible"
//   MODEL_LATENCY_MS   local only: integer >= 0, default 0
//   MODEL_IGNORE_ABORT local only: "1" answers after the delay even when the call is aborted
//                      (a model that cannot be stopped, to rehearse late completions); default "0"
//   MODEL_BASE_URL     openai-compatible: required, http(s) URL, e.g. https://api.openai.com/v1
//   MODEL_API_KEY      openai-compatible: required
//   MODEL_NAME         openai-compatible: required, e.g. gpt-4o-mini
//   MODEL_TIMEOUT_MS   openai-compatible: integer > 0, default 30000
//   MODEL_PRICE_PER_MTOK either lane: "<input USD>,<output USD>" per million tokens, e.g. "0.15,0.6".
//                      The price every call is counted at (lib/spend). Unset: the local lane costs 0
//                      and the openai-compatible lane is priced from @pydantic/genai-prices by
//                      MODEL_NAME (a model the table does not know costs 0 until this is set).
//
// An empty variable counts as unset. Errors name the variable, never echo the key.
import "server-only";
import { z } from "zod";
import { createLocalProvider, LOCAL_MODEL_ID } from "./local";
import { createOpenAICompatibleProvider, DEFAULT_TIMEOUT_MS } from "./openai-compatible";
import { tracedProvider } from "./traced";
import type { InvoiceForModel, ModelProvider } from "./types";

export * from "./types";
export { createLocalProvider, summarizeInvoice, LOCAL_MODEL_ID, type LocalProviderOptions } from "./local";
export {
  createOpenAICompatibleProvider,
  DEFAULT_TIMEOUT_MS,
  promptUsage,
  usageOfError,
  type OpenAICompatibleOptions,
} from "./openai-compatible";
// How a call's tokens are counted when the model does not say (lib/spend counts an aborted call so).
export { estimateTokens, userMessage } from "./internal";

export const MODEL_PROVIDERS = ["local", "openai-compatible"] as const;
export type ModelProviderName = (typeof MODEL_PROVIDERS)[number];

type Env = Record<string, string | undefined>;

/** Trims strings; an empty or blank variable counts as unset. */
const unsetIfEmpty = (value: unknown) => (typeof value === "string" ? value.trim() || undefined : value);

const intVar = (name: string, min: number, fallback: number) =>
  z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .trim()
      .regex(/^\d+$/, `${name} must be a whole number of milliseconds >= ${min}`)
      .transform(Number)
      .refine((n) => Number.isSafeInteger(n) && n >= min, `${name} must be a whole number of milliseconds >= ${min}`)
      .default(fallback),
  );

const requiredVar = (name: string) =>
  z.preprocess(unsetIfEmpty, z.string({ error: `${name} is required when MODEL_PROVIDER=openai-compatible` }).trim());

const LocalSchema = z.object({
  MODEL_PROVIDER: z.literal("local"),
  MODEL_LATENCY_MS: intVar("MODEL_LATENCY_MS", 0, 0),
  MODEL_IGNORE_ABORT: z.preprocess(
    unsetIfEmpty,
    z
      .enum(["0", "1"], { error: 'MODEL_IGNORE_ABORT must be "0" or "1"' })
      .default("0")
      .transform((value) => value === "1"),
  ),
});

const OpenAISchema = z.object({
  MODEL_PROVIDER: z.literal("openai-compatible"),
  MODEL_BASE_URL: requiredVar("MODEL_BASE_URL").refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === "http:" || url.protocol === "https:";
    } catch {
      return false;
    }
  }, "MODEL_BASE_URL must be an http(s) URL, e.g. https://api.openai.com/v1"),
  MODEL_API_KEY: requiredVar("MODEL_API_KEY"),
  MODEL_NAME: requiredVar("MODEL_NAME"),
  MODEL_TIMEOUT_MS: intVar("MODEL_TIMEOUT_MS", 1, DEFAULT_TIMEOUT_MS),
});

const ProviderSchema = z.preprocess(
  unsetIfEmpty,
  z.enum(MODEL_PROVIDERS, { error: `MODEL_PROVIDER must be one of: ${MODEL_PROVIDERS.join(", ")}` }).default("local"),
);

function fail(issues: readonly z.core.$ZodIssue[]): never {
  const problems = issues.map((issue) => issue.message);
  throw new Error(`Invalid model configuration:\n  ${problems.join("\n  ")}`);
}

/**
 * The configured provider, its calls traced (lib/model/traced.ts). Throws an Error naming the
 * offending variable when misconfigured.
 */
export function getModelProvider(env: Env = process.env): ModelProvider {
  return tracedProvider(configuredProvider(env));
}

function configuredProvider(env: Env): ModelProvider {
  const provider = ProviderSchema.safeParse(env.MODEL_PROVIDER);
  if (!provider.success) fail(provider.error.issues);

  if (provider.data === "local") {
    const parsed = LocalSchema.safeParse({ ...pick(env, ["MODEL_LATENCY_MS", "MODEL_IGNORE_ABORT"]), MODEL_PROVIDER: "local" });
    if (!parsed.success) fail(parsed.error.issues);
    return createLocalProvider({ latencyMs: parsed.data.MODEL_LATENCY_MS, ignoreAbort: parsed.data.MODEL_IGNORE_ABORT });
  }

  const parsed = OpenAISchema.safeParse({
    ...pick(env, ["MODEL_BASE_URL", "MODEL_API_KEY", "MODEL_NAME", "MODEL_TIMEOUT_MS"]),
    MODEL_PROVIDER: "openai-compatible",
  });
  if (!parsed.success) fail(parsed.error.issues);
  return createOpenAICompatibleProvider({
    baseURL: parsed.data.MODEL_BASE_URL,
    apiKey: parsed.data.MODEL_API_KEY,
    model: parsed.data.MODEL_NAME,
    timeoutMs: parsed.data.MODEL_TIMEOUT_MS,
  });
}

/** Dollars per million tokens, from MODEL_PRICE_PER_MTOK. */
export type PricePerMtok = { inputUsd: number; outputUsd: number };

const PRICE_MESSAGE = 'MODEL_PRICE_PER_MTOK must be "<input USD>,<output USD>" per million tokens, e.g. "0.15,0.6"';
const PriceSchema = z.preprocess(
  unsetIfEmpty,
  z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*,\s*\d+(\.\d+)?\s*$/, PRICE_MESSAGE)
    .transform((value): PricePerMtok => {
      const [input, output] = value.split(",").map((part) => Number(part.trim()));
      return { inputUsd: input!, outputUsd: output! };
    })
    .optional(),
);

/**
 * What a call of the configured model costs: its lane, the model name the price table is asked
 * for, and the price setting when there is one. Throws an Error naming the variable when the
 * setting is malformed.
 */
export function modelPricing(env: Env = process.env): {
  lane: ModelProviderName;
  model: string;
  perMtok: PricePerMtok | null;
} {
  const provider = ProviderSchema.safeParse(env.MODEL_PROVIDER);
  if (!provider.success) fail(provider.error.issues);
  const price = PriceSchema.safeParse(env.MODEL_PRICE_PER_MTOK);
  if (!price.success) fail(price.error.issues);
  const model = provider.data === "local" ? LOCAL_MODEL_ID : ((unsetIfEmpty(env.MODEL_NAME) as string | undefined) ?? "");
  return { lane: provider.data, model, perMtok: price.data ?? null };
}

/**
 * The longest one call of the configured model can run (the local lane's latency, the
 * openai-compatible lane's timeout), read without building the provider: lib/spend counts a
 * lease's reservation for this long (and a margin) past its deadline, while its call may still end.
 */
export function modelTimeLimitMs(env: Env = process.env): number {
  const provider = ProviderSchema.safeParse(env.MODEL_PROVIDER);
  if (!provider.success) fail(provider.error.issues);
  const limit =
    provider.data === "local"
      ? intVar("MODEL_LATENCY_MS", 0, 0).safeParse(env.MODEL_LATENCY_MS)
      : intVar("MODEL_TIMEOUT_MS", 1, DEFAULT_TIMEOUT_MS).safeParse(env.MODEL_TIMEOUT_MS);
  if (!limit.success) fail(limit.error.issues);
  return limit.data;
}

function pick(env: Env, keys: readonly string[]): Env {
  const out: Env = {};
  for (const key of keys) out[key] = env[key];
  return out;
}

/** A database invoice row and its lines, in any shape carrying these fields. */
export type InvoiceRowLike = {
  id: string;
  number: string;
  counterparty: string;
  currency: string;
  totalCents: number;
  issuedOn: string;
  dueOn: string;
};
export type InvoiceLineRowLike = {
  description: string;
  quantity: number;
  unitPriceCents: number;
  position?: number | null;
};

/**
 * Copies exactly the fields the model may see out of an invoice row (and its lines, ordered
 * by `position` when present), so nothing else on the row — owner, stored summary, version —
 * crosses the seam.
 */
export function invoiceForModel(row: InvoiceRowLike, lines: readonly InvoiceLineRowLike[] = []): InvoiceForModel {
  const ordered = lines
    .map((line, index) => ({ line, index }))
    .sort((a, b) => (a.line.position ?? 0) - (b.line.position ?? 0) || a.index - b.index)
    .map(({ line }) => ({
      description: line.description,
      quantity: line.quantity,
      unitPriceCents: line.unitPriceCents,
    }));
  return {
    id: row.id,
    number: row.number,
    counterparty: row.counterparty,
    currency: row.currency,
    totalCents: row.totalCents,
    issuedOn: row.issuedOn,
    dueOn: row.dueOn,
    lines: ordered,
  };
}
