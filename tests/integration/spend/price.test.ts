// The price of a call: MODEL_PRICE_PER_MTOK when set (either lane, and a model the table does
// not know), else 0 on the local lane and @pydantic/genai-prices on the openai-compatible one.
// A malformed setting is refused with a message that names it. No database needed.
import { calcPrice } from "@pydantic/genai-prices";
import { describe, expect, it } from "vitest";
import { modelPricing } from "@/lib/model";
import { callCostCents, reservationCents, reservationTokens } from "@/lib/spend";

const openai = { MODEL_PROVIDER: "openai-compatible", MODEL_NAME: "gpt-4o-mini" };
const tokens = { inputTokens: 1_000, outputTokens: 500 };

describe("callCostCents", () => {
  it("the local lane costs 0 unless MODEL_PRICE_PER_MTOK prices it", () => {
    expect(callCostCents("local-summary-v1", tokens, {})).toBe(0);
    // $3 in and $15 out per million: 1,000 × 3 + 500 × 15 = 10,500 µ$ = 1.05 cents.
    expect(callCostCents("local-summary-v1", tokens, { MODEL_PRICE_PER_MTOK: "3,15" })).toBeCloseTo(1.05, 9);
  });

  it("the openai-compatible lane is priced by the table, in cents; the setting overrides it", () => {
    const table = calcPrice({ input_tokens: 1_000, output_tokens: 500 }, "gpt-4o-mini")!.total_price * 100;
    expect(callCostCents("gpt-4o-mini", tokens, openai)).toBeCloseTo(table, 9);
    expect(callCostCents("gpt-4o-mini", tokens, { ...openai, MODEL_PRICE_PER_MTOK: " 0.5 , 1.5 " })).toBeCloseTo(0.125, 9);
  });

  it("a model the table does not know costs 0 until the setting prices it", () => {
    expect(callCostCents("in-house-7b", tokens, { ...openai, MODEL_NAME: "in-house-7b" })).toBe(0);
    expect(callCostCents("in-house-7b", tokens, { ...openai, MODEL_NAME: "in-house-7b", MODEL_PRICE_PER_MTOK: "1,1" })).toBeCloseTo(
      0.15,
      9,
    );
  });

  it.each(["3", "3,", "-1,2", "a,b", "3;15", "1,2,3"])("MODEL_PRICE_PER_MTOK=%j is refused, naming the variable", (value) => {
    expect(() => modelPricing({ MODEL_PRICE_PER_MTOK: value })).toThrow(/MODEL_PRICE_PER_MTOK must be "<input USD>,<output USD>"/);
  });

  it("an empty setting is unset", () => {
    expect(modelPricing({ MODEL_PRICE_PER_MTOK: " " }).perMtok).toBeNull();
  });
});

describe("reservationCents", () => {
  it("one call of the purpose: its instructions and an allowance for the invoice, and one for the answer, at the configured price", () => {
    const t = reservationTokens("review_invoice");
    expect(t.outputTokens).toBe(1_000);
    expect(t.inputTokens).toBeGreaterThan(2_000);
    expect(reservationCents("review_invoice", { MODEL_PRICE_PER_MTOK: "1,1" })).toBeCloseTo(
      ((t.inputTokens + t.outputTokens) / 1e6) * 100,
      9,
    );
    expect(reservationCents("review_invoice", {})).toBe(0);
  });
});
