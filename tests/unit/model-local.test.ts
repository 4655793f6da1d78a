import { describe, expect, it } from "vitest";
import { createLocalProvider, LOCAL_MODEL_ID, summarizeInvoice } from "@/lib/model/local";
import { ModelUnavailableError, SUMMARY_MAX_CHARS, type InvoiceForModel, type ModelRequest } from "@/lib/model/types";

const ACTOR = "7b0c8d7e-1a52-4f43-9d7e-2f7f1f0a9c11";

const invoice: InvoiceForModel = {
  id: "5d0c1f5e-8a4e-4b1e-9a55-0c3e6a1f2b77",
  number: "INV-1042",
  counterparty: "Northwind Traders",
  currency: "EUR",
  totalCents: 1_234_500,
  issuedOn: "2026-11-01",
  dueOn: "2026-12-01",
  lines: [
    { description: "Licences", quantity: 2, unitPriceCents: 40_000 },
    { description: "Consulting", quantity: 10, unitPriceCents: 100_000 },
    { description: "Travel", quantity: 1, unitPriceCents: 150_000 },
    { description: "Courier", quantity: 3, unitPriceCents: 1_500 },
  ],
};

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  purpose: "summarize_invoice",
  actorId: ACTOR,
  invoice,
  ...overrides,
});

describe("local model provider", () => {
  it("is named local and proposes for the requesting actor with model local-summary-v1", async () => {
    const provider = createLocalProvider();
    expect(provider.name).toBe("local");
    const proposal = await provider.generate(request());
    expect(proposal.actorId).toBe(ACTOR);
    expect(proposal.model).toBe(LOCAL_MODEL_ID);
    expect(proposal.model).toBe("local-summary-v1");
    expect((proposal.output as { summary: string }).summary.length).toBeGreaterThan(0);
  });

  it("is deterministic: same input, same output, across calls and instances", async () => {
    const a = await createLocalProvider().generate(request());
    const b = await createLocalProvider().generate(request());
    const c = await createLocalProvider().generate(request({ invoice: structuredClone(invoice) }));
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    // The invoice's own summary first, then what the table does not show (lib/purposes/summarize-invoice.ts).
    expect((a.output as { summary: string }).summary.startsWith(summarizeInvoice(invoice))).toBe(true);
  });

  it("names the counterparty, number, formatted total, issue and due dates", () => {
    const summary = summarizeInvoice(invoice);
    expect(summary).toContain("Northwind Traders");
    expect(summary).toContain("INV-1042");
    expect(summary).toContain("€12,345.00");
    expect(summary).toContain("issued 2026-11-01");
    expect(summary).toContain("due 2026-12-01");
    expect(summary).toContain("30 days after issue");
  });

  it("counts the lines and lists the three largest, largest first, with amounts", () => {
    const summary = summarizeInvoice(invoice);
    expect(summary).toContain("4 lines; largest:");
    expect(summary).toContain("Consulting (10 × €1,000.00 = €10,000.00)");
    expect(summary).toContain("Travel (1 × €1,500.00 = €1,500.00)");
    expect(summary).toContain("Licences (2 × €400.00 = €800.00)");
    expect(summary).not.toContain("Courier");
    expect(summary.indexOf("Consulting")).toBeLessThan(summary.indexOf("Travel"));
    expect(summary.indexOf("Travel")).toBeLessThan(summary.indexOf("Licences"));
    expect(summary).toContain("Lines add up to the total.");
  });

  it("matches the full expected text for the fixture", () => {
    expect(summarizeInvoice(invoice)).toBe(
      "Invoice INV-1042 from Northwind Traders for €12,345.00, issued 2026-11-01, due 2026-12-01 (30 days after issue). " +
        "4 lines; largest: Consulting (10 × €1,000.00 = €10,000.00), Travel (1 × €1,500.00 = €1,500.00), " +
        "Licences (2 × €400.00 = €800.00). Lines add up to the total.",
    );
  });

  it("flags lines that do not add up to the total and a due date before the issue date", () => {
    const summary = summarizeInvoice({
      ...invoice,
      currency: "USD",
      totalCents: 10_000,
      dueOn: "2026-10-25",
      lines: [{ description: "Widget", quantity: 1, unitPriceCents: 9_000 }],
    });
    expect(summary).toContain("$100.00");
    expect(summary).toContain("1 line: Widget (1 × $90.00 = $90.00)");
    expect(summary).toContain("Lines sum to $90.00, $10.00 below the invoiced total.");
    expect(summary).toContain("before the issue date");
  });

  it("handles no lines, odd currency codes and hostile text without exceeding the limit", () => {
    expect(summarizeInvoice({ ...invoice, lines: [] })).toContain("No line items.");
    expect(summarizeInvoice({ ...invoice, currency: "EURO" })).toContain("EURO 12,345.00");
    const long = summarizeInvoice({
      ...invoice,
      counterparty: "A\nvery\tlong ".repeat(200),
      lines: Array.from({ length: 50 }, (_, i) => ({ description: "d".repeat(5_000), quantity: i + 1, unitPriceCents: 100 })),
    });
    expect(long.length).toBeLessThanOrEqual(SUMMARY_MAX_CHARS);
    expect(long).not.toMatch(/[\n\t]/);
    expect(long).toContain("50 lines; largest:");
  });

  it("honours latencyMs (generous bounds)", async () => {
    const provider = createLocalProvider({ latencyMs: 150 });
    const started = performance.now();
    await provider.generate(request());
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
  });

  it("rejects promptly with ModelUnavailableError when the signal aborts during the delay", async () => {
    const provider = createLocalProvider({ latencyMs: 30_000 });
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(new Error("lease expired")), 20);
    const error = await provider.generate(request({ signal: controller.signal })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as Error).cause).toEqual(new Error("lease expired"));
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("rejects an already-aborted signal even without latency", async () => {
    const error = await createLocalProvider()
      .generate(request({ signal: AbortSignal.abort() }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
  });

  it("refuses a negative latency", () => {
    expect(() => createLocalProvider({ latencyMs: -1 })).toThrow(RangeError);
  });
});
