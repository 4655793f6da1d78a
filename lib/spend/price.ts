import "server-only";
// What a model call costs, in USD cents (fractional: a cheap call is a small part of a cent).
// The openai-compatible lane is priced from the maintained table of @pydantic/genai-prices by
// model name; the local lane costs nothing. MODEL_PRICE_PER_MTOK (lib/model/index.ts), when set,
// prices every call of either lane, so budgets can be rehearsed offline and a model the table
// does not know can be priced.
import { calcPrice } from "@pydantic/genai-prices";
import { estimateTokens, modelPricing, type PricePerMtok } from "@/lib/model";
import { purposeOf } from "@/lib/purposes";
import type { Purpose } from "@/lib/purposes";

export type CallTokens = { inputTokens: number; outputTokens: number };

const perMtokCents = (tokens: CallTokens, price: PricePerMtok) =>
  ((tokens.inputTokens * price.inputUsd + tokens.outputTokens * price.outputUsd) / 1_000_000) * 100;

/** The cost in cents of a call of `model` that used `tokens`, priced as the environment says. */
export function callCostCents(model: string, tokens: CallTokens, env: Record<string, string | undefined> = process.env): number {
  const pricing = modelPricing(env);
  if (pricing.perMtok) return perMtokCents(tokens, pricing.perMtok);
  if (pricing.lane === "local") return 0;
  const price = calcPrice({ input_tokens: tokens.inputTokens, output_tokens: tokens.outputTokens }, model);
  // A model the table does not know is counted at 0 (its tokens are still recorded): set
  // MODEL_PRICE_PER_MTOK to price it.
  return price ? price.total_price * 100 : 0;
}

/**
 * The tokens one call of a purpose is reserved at when it opens, before the invoice is read:
 * the purpose's instructions, counted, plus an allowance for the invoice and its context, and an
 * allowance for the answer. Generous on purpose: it is released (and replaced by what the call
 * really cost) as soon as the call ends, and a reservation that is too small lets a budget be
 * overrun by more than one call.
 */
export const RESERVE_PROMPT_TOKENS = 2_000;
export const RESERVE_ANSWER_TOKENS = 1_000;

export function reservationTokens(purpose: Purpose): CallTokens {
  return { inputTokens: estimateTokens(purposeOf(purpose).instructions) + RESERVE_PROMPT_TOKENS, outputTokens: RESERVE_ANSWER_TOKENS };
}

/** The estimated cost in cents of one call of `purpose` with the configured model: what open reserves. */
export function reservationCents(purpose: Purpose, env: Record<string, string | undefined> = process.env): number {
  return callCostCents(modelPricing(env).model, reservationTokens(purpose), env);
}
