// review_invoice on crafted invoices in a real database (PGlite or PostgreSQL, per run): each
// finding fires on an invoice made for it, read through loadForGeneration's one statement (the
// purpose's context: the database's current_date, the organization's other invoices) and the
// local model, and none fires on a clean invoice. Each invoice is the only one of a fresh user's
// own organization unless a test adds history, so nothing else can make a finding fire.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyLease } from "@/lib/leases";
import * as rows from "../../support/db";
import { makeUser, openTestDb, type TestDb } from "../../support/db";
import { dbToday, invoiceWith, localOutput, openFor, proposedLease, type LineSpec } from "./purpose-support";
import { doubledWord } from "../../e2e/support/plain-words";

let t: TestDb;
let plus: (days: number) => string;
beforeAll(async () => {
  t = await openTestDb();
  ({ plus } = await dbToday(t.db));
});
afterAll(() => t?.close());

type Finding = { code: string; severity: string; message: string; fields: string[] };

/** The local model's findings on this invoice, as a generation of its owner's lease would read and make them. */
async function findingsOn(ownerId: string, invoiceId: string, opts: { words?: boolean } = {}): Promise<Finding[]> {
  const { leaseId } = await openFor(t.db, ownerId, invoiceId, "review_invoice");
  const { output } = await localOutput(t.db, leaseId);
  const findings = (output as { findings: Finding[] }).findings;
  // Every finding reads as a finance user's words: no word said twice (the page's rule).
  if (opts.words !== false) for (const f of findings) expect(doubledWord(f.message), f.message).toBeNull();
  return findings;
}
const codes = (findings: Finding[]) => findings.map((f) => f.code);

// Two invoices of one test share a counterparty only where the test means them to (else they are
// possible duplicates of each other).

/** Dates far enough from today that neither due_soon nor overdue can fire. */
const calm = () => ({ issuedOn: plus(-10), dueOn: plus(30) });

describe("review_invoice findings", () => {
  it("a clean invoice: no findings", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await invoiceWith(t.db, alice.id, {
      ...calm(),
      lines: [
        { description: "Consulting services", quantity: 10, unitPriceCents: 12_000 },
        { description: "Travel expenses", quantity: 1, unitPriceCents: 3_455 },
      ],
    });
    expect(await findingsOn(alice.id, inv.id)).toEqual([]);
  });

  it("lines that do not add up to the total: lines_do_not_add_up, high, pointing at the total and the lines", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await invoiceWith(t.db, alice.id, {
      ...calm(),
      totalCents: 100_100,
      lines: [{ description: "Consulting services", quantity: 2, unitPriceCents: 50_000 }],
    });
    const findings = await findingsOn(alice.id, inv.id);
    expect(findings).toEqual([
      { code: "lines_do_not_add_up", severity: "high", message: expect.stringContaining("€1,000.00"), fields: ["total_cents", "lines"] },
    ]);
  });

  it("due within a week by the database's current_date: due_soon; due today too; 8 days out: nothing", async () => {
    const alice = await makeUser(t.db, "Alice");
    const soon = await invoiceWith(t.db, alice.id, { issuedOn: plus(-20), dueOn: plus(3) });
    expect(await findingsOn(alice.id, soon.id)).toEqual([
      { code: "due_soon", severity: "medium", message: `Due soon: on ${plus(3)}, in 3 days.`, fields: ["due_on"] },
    ]);
    const today = await invoiceWith(t.db, alice.id, { counterparty: "Contoso", issuedOn: plus(-20), dueOn: plus(0) });
    expect(codes(await findingsOn(alice.id, today.id))).toEqual(["due_soon"]);
    const later = await invoiceWith(t.db, alice.id, { counterparty: "Fabrikam", issuedOn: plus(-20), dueOn: plus(8) });
    expect(await findingsOn(alice.id, later.id)).toEqual([]);
  });

  it("past its due date and still open: overdue; the same invoice paid: nothing", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await invoiceWith(t.db, alice.id, { issuedOn: plus(-40), dueOn: plus(-5) });
    expect(await findingsOn(alice.id, inv.id)).toEqual([
      { code: "overdue", severity: "high", message: expect.stringContaining("5 days ago"), fields: ["due_on"] },
    ]);
    const paid = await invoiceWith(t.db, alice.id, {
      counterparty: "Contoso",
      issuedOn: plus(-40),
      dueOn: plus(-5),
      status: "paid",
      paidOn: plus(-1),
    });
    expect(await findingsOn(alice.id, paid.id)).toEqual([]);
  });

  describe("a possible duplicate: same counterparty and total within 30 days, in the organization", () => {
    const lines: LineSpec[] = [{ description: "Consulting services", quantity: 4, unitPriceCents: 25_000 }];

    it("another invoice of the same counterparty (any case) and total, issued 30 days before: possible_duplicate naming it", async () => {
      const alice = await makeUser(t.db, "Alice");
      const first = await invoiceWith(t.db, alice.id, {
        lines,
        number: "A-1",
        counterparty: "NORTHWIND traders",
        issuedOn: plus(-40),
        dueOn: plus(20),
      });
      const second = await invoiceWith(t.db, alice.id, { lines, number: "A-2", issuedOn: plus(-10), dueOn: plus(20) });
      const findings = await findingsOn(alice.id, second.id);
      expect(findings).toEqual([
        {
          code: "possible_duplicate",
          severity: "high",
          message: expect.stringContaining(`A-1 (${first.issuedOn})`),
          fields: ["counterparty", "total_cents"],
        },
      ]);
      // Read by a finance user: no word said twice ("A-1 (issued …) … issued within" was).
      expect(doubledWord(findings[0]!.message)).toBeNull();
      // And the other way round.
      expect(codes(await findingsOn(alice.id, first.id))).toEqual(["possible_duplicate"]);
    });

    it("many possible duplicates: one finding that names the first three and counts the rest, within the schema's 400 characters", async () => {
      const alice = await makeUser(t.db, "Alice");
      for (let i = 0; i < 12; i++)
        await invoiceWith(t.db, alice.id, {
          lines,
          number: `DUP-LONG-NUMBER-${String(i).padStart(3, "0")}`,
          issuedOn: plus(-12),
          dueOn: plus(20),
        });
      const mine = await invoiceWith(t.db, alice.id, { lines, number: "MINE", issuedOn: plus(-10), dueOn: plus(20) });
      // Its invoice numbers repeat their words on purpose (long ones), so the words rule is off here.
      const [finding, ...more] = await findingsOn(alice.id, mine.id, { words: false });
      expect(more).toEqual([]);
      expect(finding).toMatchObject({ code: "possible_duplicate", severity: "high" });
      expect(finding!.message.length).toBeLessThanOrEqual(400);
      expect(finding!.message).toMatch(
        /^Possible duplicate: 12 invoices have the same counterparty and total, issued within 30 days: .+ and 9 more\.$/,
      );
    });

    it("a teammate's invoice counts: the organization's, not only the owner's", async () => {
      const alice = await makeUser(t.db, "Alice");
      const bob = await makeUser(t.db, "Bob");
      await rows.joinOrgOf(t.db, bob, alice);
      await invoiceWith(t.db, bob.id, { lines, issuedOn: plus(-12), dueOn: plus(20) });
      const mine = await invoiceWith(t.db, alice.id, { lines, issuedOn: plus(-10), dueOn: plus(20) });
      expect(codes(await findingsOn(alice.id, mine.id))).toEqual(["possible_duplicate"]);
    });

    it("not for one in another organization, 31 days apart, void, of another total or another counterparty", async () => {
      const alice = await makeUser(t.db, "Alice");
      const mallory = await makeUser(t.db, "Mallory");
      // Another organization's invoice, identical in every field that matters.
      await invoiceWith(t.db, mallory.id, { lines, issuedOn: plus(-10), dueOn: plus(20) });
      // Alice's own near misses.
      await invoiceWith(t.db, alice.id, { lines, issuedOn: plus(-41), dueOn: plus(20) });
      await invoiceWith(t.db, alice.id, { lines, issuedOn: plus(21), dueOn: plus(40) });
      await invoiceWith(t.db, alice.id, { lines, issuedOn: plus(-9), dueOn: plus(20), status: "void" });
      await invoiceWith(t.db, alice.id, {
        lines: [{ description: "Consulting services", quantity: 4, unitPriceCents: 25_001 }],
        issuedOn: plus(-9),
        dueOn: plus(20),
      });
      await invoiceWith(t.db, alice.id, { lines, counterparty: "Contoso", issuedOn: plus(-9), dueOn: plus(20) });
      const mine = await invoiceWith(t.db, alice.id, { lines, issuedOn: plus(-10), dueOn: plus(20) });
      expect(await findingsOn(alice.id, mine.id)).toEqual([]);
    });
  });

  describe("an amount far outside the counterparty's history", () => {
    async function withHistory(ownerId: string, totals: number[]) {
      for (const [i, cents] of totals.entries()) {
        await invoiceWith(t.db, ownerId, {
          lines: [{ description: "Consulting services", quantity: 1, unitPriceCents: cents }],
          issuedOn: plus(-200 + i * 40),
          dueOn: plus(30),
        });
      }
    }

    it("three times the median of three earlier invoices: unusual_amount; a third of it too", async () => {
      const alice = await makeUser(t.db, "Alice");
      await withHistory(alice.id, [90_000, 100_000, 110_000]);
      const high = await invoiceWith(t.db, alice.id, {
        ...calm(),
        lines: [{ description: "Consulting services", quantity: 3, unitPriceCents: 100_000 }],
      });
      expect(await findingsOn(alice.id, high.id)).toEqual([
        { code: "unusual_amount", severity: "medium", message: expect.stringContaining("€1,000.00"), fields: ["total_cents"] },
      ]);
      const low = await invoiceWith(t.db, alice.id, {
        ...calm(),
        lines: [{ description: "Consulting services", quantity: 1, unitPriceCents: 33_333 }],
      });
      expect(codes(await findingsOn(alice.id, low.id))).toEqual(["unusual_amount"]);
    });

    it("within the band, with too little history, or with history only in another organization or currency: nothing", async () => {
      const alice = await makeUser(t.db, "Alice");
      await withHistory(alice.id, [90_000, 100_000, 110_000]);
      const usual = await invoiceWith(t.db, alice.id, {
        ...calm(),
        lines: [{ description: "Consulting services", quantity: 1, unitPriceCents: 290_000 }],
      });
      expect(await findingsOn(alice.id, usual.id)).toEqual([]);

      const bob = await makeUser(t.db, "Bob");
      await withHistory(bob.id, [100_000, 100_000]);
      const mallory = await makeUser(t.db, "Mallory");
      await withHistory(mallory.id, [100_000, 100_000, 100_000]);
      // Bob's third "history" invoice is in another currency: not comparable.
      await invoiceWith(t.db, bob.id, {
        currency: "USD",
        lines: [{ description: "Consulting services", quantity: 1, unitPriceCents: 100_000 }],
        issuedOn: plus(-30),
        dueOn: plus(30),
      });
      const big = await invoiceWith(t.db, bob.id, {
        ...calm(),
        lines: [{ description: "Consulting services", quantity: 10, unitPriceCents: 100_000 }],
      });
      expect(await findingsOn(bob.id, big.id)).toEqual([]);
    });
  });

  it("a due date before the issue date (which the API refuses, so inserted as a row): due_before_issue", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await invoiceWith(t.db, alice.id, { issuedOn: plus(40), dueOn: plus(30) });
    expect(await findingsOn(alice.id, inv.id)).toEqual([
      {
        code: "due_before_issue",
        severity: "high",
        message: `Due on ${plus(30)}, before the issue date ${plus(40)}.`,
        fields: ["due_on", "issued_on"],
      },
    ]);
  });

  it("a zero-quantity line: zero_quantity_line pointing at that line", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await invoiceWith(t.db, alice.id, {
      ...calm(),
      lines: [
        { description: "Consulting services", quantity: 2, unitPriceCents: 50_000 },
        { description: "Setup fee", quantity: 0, unitPriceCents: 10_000 },
      ],
    });
    expect(await findingsOn(alice.id, inv.id)).toEqual([
      { code: "zero_quantity_line", severity: "medium", message: "Line 2 (Setup fee) has a quantity of zero.", fields: ["lines[1]"] },
    ]);
  });

  it("an invoice with no lines: missing_field", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await invoiceWith(t.db, alice.id, { ...calm(), lines: [], totalCents: 1000 });
    expect(codes(await findingsOn(alice.id, inv.id))).toEqual(["missing_field"]);
  });

  it("several at once, most severe first; apply writes them to the review notes, fenced, and nothing else", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await invoiceWith(t.db, alice.id, {
      issuedOn: plus(-40),
      dueOn: plus(-2),
      totalCents: 5,
      lines: [{ description: "Setup fee", quantity: 0, unitPriceCents: 10_000 }],
    });
    const { leaseId, output } = await proposedLease(t.db, alice.id, inv.id, "review_invoice");
    const findings = (output as { findings: Finding[] }).findings;
    expect(codes(findings)).toEqual(["lines_do_not_add_up", "overdue", "zero_quantity_line"]);

    expect(await applyLease(t.db, alice.id, leaseId)).toEqual({ ok: true, invoiceVersion: inv.version + 1, written: ["review_notes"] });
    const after = await rows.invoiceRow(t.db, inv.id);
    expect(after.reviewNotes).toEqual(findings);
    expect(after.reviewNotesVersion).toBe(inv.version + 1);
    expect(after.summary).toBeNull();
  });
});

// Not a finding but what they all stand on: the context reads the database's clock, not the app's.
it("the review's today is the database's current_date", async () => {
  const alice = await makeUser(t.db, "Alice");
  const inv = await invoiceWith(t.db, alice.id, calm());
  const { leaseId } = await openFor(t.db, alice.id, inv.id, "review_invoice");
  const { input } = await localOutput(t.db, leaseId);
  const { today } = await dbToday(t.db);
  expect(input.context).toMatchObject({ today, status: "open" });
});
