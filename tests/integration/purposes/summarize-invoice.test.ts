// summarize_invoice's local summary on a real database (PGlite or PostgreSQL, per run): besides
// restating the invoice, it says what its table cannot show, the counterparty's history in the
// organization, read by loadForGeneration's one statement. Two invoices of one counterparty.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyLease } from "@/lib/leases";
import * as rows from "../../support/db";
import { makeUser, openTestDb, type TestDb } from "../../support/db";
import { invoiceWith, localOutput, openFor, proposedLease } from "./purpose-support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

async function summaryOf(ownerId: string, invoiceId: string): Promise<string> {
  const { leaseId } = await openFor(t.db, ownerId, invoiceId, "summarize_invoice");
  return ((await localOutput(t.db, leaseId)).output as { summary: string }).summary;
}

const oneLine = (cents: number) => [{ description: "Consulting services", quantity: 1, unitPriceCents: cents }];

describe("summarize_invoice says what the table does not", () => {
  it("the first invoice of a counterparty says so; the second compares itself with the first and names its date", async () => {
    const alice = await makeUser(t.db, "Alice");
    const first = await invoiceWith(t.db, alice.id, { lines: oneLine(100_000), issuedOn: "2026-03-01", dueOn: "2026-03-31" });
    expect(await summaryOf(alice.id, first.id)).toContain("This is the first invoice from this counterparty in the workspace.");

    const second = await invoiceWith(t.db, alice.id, { lines: oneLine(250_000), issuedOn: "2026-04-01", dueOn: "2026-05-01" });
    const summary = await summaryOf(alice.id, second.id);
    expect(summary).toContain(
      "The counterparty has 1 other invoice here, 2.5× their average of €1,000.00; the last was issued 2026-03-01.",
    );
    // None of that is in the invoice's own table: its number, total, dates and lines only.
    expect(summary).not.toContain("first invoice");

    // And it is what apply writes.
    const { leaseId, output } = await proposedLease(t.db, alice.id, second.id, "summarize_invoice");
    expect(output.summary).toBe(summary);
    expect(await applyLease(t.db, alice.id, leaseId)).toMatchObject({ ok: true, written: ["summary"] });
    expect((await rows.invoiceRow(t.db, second.id)).summary).toBe(summary);

    // The history is the counterparty's other invoices, whenever issued: the first's later one is not "earlier".
    expect(await summaryOf(alice.id, first.id)).toContain(
      "The counterparty has 1 other invoice here, well below their average of €2,500.00",
    );
  });

  it("in line with the history; a void invoice, another currency or another organization's is no history", async () => {
    const alice = await makeUser(t.db, "Alice");
    await invoiceWith(t.db, alice.id, { lines: oneLine(100_000), issuedOn: "2026-03-01" });
    await invoiceWith(t.db, alice.id, { lines: oneLine(120_000), issuedOn: "2026-03-15" });
    const usual = await invoiceWith(t.db, alice.id, { lines: oneLine(110_000), issuedOn: "2026-04-01" });
    expect(await summaryOf(alice.id, usual.id)).toContain(
      "The counterparty has 2 other invoices here, in line with their average of €1,100.00; the last was issued 2026-03-15.",
    );

    const bob = await makeUser(t.db, "Bob");
    const mallory = await makeUser(t.db, "Mallory");
    await invoiceWith(t.db, mallory.id, { lines: oneLine(100_000), issuedOn: "2026-03-01" });
    await invoiceWith(t.db, bob.id, { lines: oneLine(100_000), issuedOn: "2026-03-02", status: "void" });
    await invoiceWith(t.db, bob.id, { lines: oneLine(100_000), issuedOn: "2026-03-03", currency: "USD" });
    const alone = await invoiceWith(t.db, bob.id, { lines: oneLine(10_000), issuedOn: "2026-04-01" });
    expect(await summaryOf(bob.id, alone.id)).toContain("This is the first invoice from this counterparty in the workspace.");
  });
});
