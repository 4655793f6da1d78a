// categorize_lines on a real database (PGlite or PostgreSQL, per run): the local model's accounts
// from the chart the migration loads, a full apply and a partial one by line (exactly the lines
// accepted, the version bumped once), the refusals of a bad `accept`, and the rebase: another
// purpose's lease in flight on the invoice follows it to its new version and still applies, but
// an edit in between withdraws it.
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease, invoiceLine } from "@/db/schema";
import { updateInvoice } from "@/lib/invoices";
import { applyLease, proposeLease } from "@/lib/leases";
import * as rows from "../../support/db";
import { asMember, makeUser, openTestDb, type TestDb } from "../../support/db";
import { invoiceWith, localOutput, openFor, proposedLease, quietDispatch } from "./purpose-support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

const LINES = [
  { description: "Consulting services, November", quantity: 10, unitPriceCents: 12_000 },
  { description: "Laptop for new hire", quantity: 1, unitPriceCents: 150_000 },
  { description: "Cloud hosting subscription", quantity: 1, unitPriceCents: 9_900 },
  { description: "Train and hotel, Berlin", quantity: 1, unitPriceCents: 45_000 },
  { description: "Office rent, December", quantity: 1, unitPriceCents: 200_000 },
  { description: "Mystery widget", quantity: 3, unitPriceCents: 1_000 },
];
const EXPECTED = ["6000", "6200", "6100", "6300", "6400", "7900"];

async function setup() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await invoiceWith(t.db, alice.id, { lines: LINES, issuedOn: "2026-01-01", dueOn: "2099-01-01" });
  const lines = await t.db
    .select({ id: invoiceLine.id, category: invoiceLine.category })
    .from(invoiceLine)
    .where(eq(invoiceLine.invoiceId, inv.id))
    .orderBy(asc(invoiceLine.position));
  return { alice, inv, ids: lines.map((l) => l.id) };
}

async function categories(invoiceId: string) {
  const lines = await t.db
    .select({ category: invoiceLine.category })
    .from(invoiceLine)
    .where(eq(invoiceLine.invoiceId, invoiceId))
    .orderBy(asc(invoiceLine.position));
  return lines.map((l) => l.category);
}

/** A lease seeded by hand as proposed with this proposal, as an outside check would. */
async function seededProposal(actorId: string, invoiceId: string, proposal: Record<string, unknown>) {
  const [row] = await t.db
    .insert(inferenceLease)
    .values({
      actorId,
      invoiceId,
      purpose: "categorize_lines",
      status: "proposed",
      deadlineAt: sql`now() + interval '60 seconds'`,
      proposal,
    })
    .returning();
  return row!;
}

describe("categorize_lines", () => {
  it("the local model gives each line the account of the chart its description names, and 7900 when none", async () => {
    const { alice, inv, ids } = await setup();
    const { leaseId } = await openFor(t.db, alice.id, inv.id, "categorize_lines");
    const { output } = await localOutput(t.db, leaseId);
    expect(output).toEqual({ lines: ids.map((id, i) => ({ line_id: id, category: EXPECTED[i] })) });
  });

  it("the local model reads a description as a finance user does: a tie goes to the thing bought (the head of the phrase), and furniture is equipment", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await invoiceWith(t.db, alice.id, {
      lines: [
        // printer (6200) and paper (6900): the paper is what was bought, named last in its head
        // phrase, or first before a "for …".
        { description: "Printer paper A4, 80 g", quantity: 40, unitPriceCents: 495 },
        { description: "Paper for the printer", quantity: 1, unitPriceCents: 495 },
        { description: "Toner cartridge - office printer", quantity: 1, unitPriceCents: 7_150 },
        { description: "Desk chairs", quantity: 2, unitPriceCents: 18_900 },
        // Two keywords of one account beat one of another, wherever they stand.
        { description: "Office rent and cleaning", quantity: 1, unitPriceCents: 200_000 },
      ],
      issuedOn: "2026-01-01",
      dueOn: "2099-01-01",
    });
    const { leaseId } = await openFor(t.db, alice.id, inv.id, "categorize_lines");
    const { output } = await localOutput(t.db, leaseId);
    expect((output as { lines: { category: string }[] }).lines.map((l) => l.category)).toEqual(["6900", "6900", "6900", "6200", "6400"]);
  });

  it("a full apply writes every line's category, bumps the version once, and writes nothing else of the invoice", async () => {
    const { alice, inv, ids } = await setup();
    const { leaseId } = await proposedLease(t.db, alice.id, inv.id, "categorize_lines");
    const result = await applyLease(t.db, alice.id, leaseId);
    expect(result).toEqual({ ok: true, invoiceVersion: inv.version + 1, written: expect.any(Array) });
    expect(new Set((result as { written: string[] }).written)).toEqual(new Set(ids));
    expect(await categories(inv.id)).toEqual(EXPECTED);
    const after = await rows.invoiceRow(t.db, inv.id);
    expect(after.version).toBe(inv.version + 1);
    expect({ summary: after.summary, reviewNotes: after.reviewNotes }).toEqual({ summary: null, reviewNotes: null });
  });

  it("a partial apply writes exactly the accepted lines, and no other; the version is bumped once", async () => {
    const { alice, inv, ids } = await setup();
    const { leaseId } = await proposedLease(t.db, alice.id, inv.id, "categorize_lines");
    const accept = [ids[1]!, ids[4]!];
    const result = await applyLease(t.db, alice.id, leaseId, { accept });
    expect(result).toMatchObject({ ok: true, invoiceVersion: inv.version + 1 });
    expect(new Set((result as { written: string[] }).written)).toEqual(new Set(accept));
    expect(await categories(inv.id)).toEqual([null, "6200", null, null, "6400", null]);
    expect((await rows.invoiceRow(t.db, inv.id)).version).toBe(inv.version + 1);
    expect(await rows.leaseEvents(t.db, leaseId)).toContainEqual({
      kind: "applied",
      detail: { invoice_version: inv.version + 1, written: 2 },
    });
    // Applied once: the rest of the proposal cannot be applied later through the same lease.
    expect(await applyLease(t.db, alice.id, leaseId, { accept: [ids[0]!] })).toEqual({ ok: false, code: "lease_applied" });
    expect(await categories(inv.id)).toEqual([null, "6200", null, null, "6400", null]);
  });

  it("a line id in upper case names the same line as the page's (lib/ids.ts canonicalId): it is written, as the lease id in upper case finds the lease", async () => {
    const { alice, inv, ids } = await setup();
    const { leaseId } = await proposedLease(t.db, alice.id, inv.id, "categorize_lines");
    const result = await applyLease(t.db, alice.id, leaseId.toUpperCase(), { accept: [ids[1]!.toUpperCase(), ids[4]!] });
    expect(result).toMatchObject({ ok: true, invoiceVersion: inv.version + 1 });
    expect(new Set((result as { written: string[] }).written)).toEqual(new Set([ids[1], ids[4]]));
    expect(await categories(inv.id)).toEqual([null, "6200", null, null, "6400", null]);
  });

  it("an invalid accept (none, an unknown id, another invoice's line, for a purpose that writes no lines): invalid_lines, nothing written", async () => {
    const { alice, inv, ids } = await setup();
    const other = await setup();
    const { leaseId } = await proposedLease(t.db, alice.id, inv.id, "categorize_lines");
    for (const accept of [[], ["00000000-0000-4000-8000-000000000000"], [ids[0]!, "not-a-line"], [other.ids[0]!]]) {
      expect(await applyLease(t.db, alice.id, leaseId, { accept })).toEqual({ ok: false, code: "invalid_lines" });
    }
    expect(await categories(inv.id)).toEqual(LINES.map(() => null));
    expect((await rows.invoiceRow(t.db, inv.id)).version).toBe(inv.version);
    expect((await rows.leaseRow(t.db, leaseId)).status).toBe("proposed");

    const summary = await proposedLease(t.db, alice.id, inv.id, "summarize_invoice");
    expect(await applyLease(t.db, alice.id, summary.leaseId, { accept: ["summary"] })).toEqual({ ok: false, code: "invalid_lines" });
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBeNull();

    // The refused lease still applies as it was shown.
    expect(await applyLease(t.db, alice.id, leaseId, { accept: [ids[0]!] })).toMatchObject({ ok: true, written: [ids[0]] });
  });

  it("a lease past its deadline is expired, whatever lines the apply names: the state is judged before the body", async () => {
    const { alice, inv, ids } = await setup();
    for (const accept of [[], ["not-a-line"], [ids[0]!], undefined]) {
      const { leaseId } = await proposedLease(t.db, alice.id, inv.id, "categorize_lines");
      await t.db
        .update(inferenceLease)
        .set({ deadlineAt: sql`now() - interval '1 second'` })
        .where(eq(inferenceLease.id, leaseId));
      expect(await applyLease(t.db, alice.id, leaseId, accept ? { accept } : {}), JSON.stringify(accept)).toEqual({
        ok: false,
        code: "lease_expired",
      });
      expect(await rows.leaseRow(t.db, leaseId)).toMatchObject({ status: "expired", closedReason: "deadline_passed" });
    }
    expect(await categories(inv.id)).toEqual(LINES.map(() => null));
    expect((await rows.invoiceRow(t.db, inv.id)).version).toBe(inv.version);
  });

  // Each on an invoice of its own: such a lease is not closed (below), so it keeps the in-flight slot.
  const unusableLines = (ids: string[]) => [
    { line_id: "00000000-0000-4000-8000-000000000000", category: "6000" },
    { line_id: ids[1]!, category: "9999" },
    // Keys of every object's prototype: not accounts of the chart.
    { line_id: ids[1]!, category: "constructor" },
    { line_id: ids[1]!, category: "toString" },
  ];

  it("a proposal naming a line the invoice lacks or an account not in the chart: proposal_unusable, nothing written", async () => {
    for (let i = 0; i < 4; i++) {
      const { alice, inv, ids } = await setup();
      const bad = unusableLines(ids)[i]!;
      const lease = await seededProposal(alice.id, inv.id, { lines: [{ line_id: ids[0]!, category: "6000" }, bad], model: "m" });
      expect(await applyLease(t.db, alice.id, lease.id), bad.category).toEqual({ ok: false, code: "proposal_unusable" });
      expect(await categories(inv.id)).toEqual(LINES.map(() => null));
      expect((await rows.invoiceRow(t.db, inv.id)).version).toBe(inv.version);
      expect((await rows.leaseRow(t.db, lease.id)).status).not.toBe("applied");
    }
  });

  it("such a lease is closed rejected/proposal_unusable (contract), not left proposed", async () => {
    const { alice, inv, ids } = await setup();
    const lease = await seededProposal(alice.id, inv.id, { lines: [unusableLines(ids)[1]!], model: "m" });
    expect(await applyLease(t.db, alice.id, lease.id)).toEqual({ ok: false, code: "proposal_unusable" });
    expect(await rows.leaseRow(t.db, lease.id)).toMatchObject({ status: "rejected", closedReason: "proposal_unusable" });
  });

  it("a proposal its schema rejects (a line twice): proposal_unusable at apply, nothing written", async () => {
    const { alice, inv, ids } = await setup();
    const lease = await seededProposal(alice.id, inv.id, {
      lines: [
        { line_id: ids[0]!, category: "6000" },
        { line_id: ids[0]!, category: "6100" },
      ],
    });
    expect(await applyLease(t.db, alice.id, lease.id)).toEqual({ ok: false, code: "proposal_unusable" });
    expect(await categories(inv.id)).toEqual(LINES.map(() => null));
    expect((await rows.invoiceRow(t.db, inv.id)).version).toBe(inv.version);
  });
});

describe("the rebase: other purposes' leases follow an apply to the invoice's new version", () => {
  it("a review proposed and a summary still generating when categories apply: both then apply, each bumping the version once", async () => {
    const { alice, inv, ids } = await setup();
    const review = await proposedLease(t.db, alice.id, inv.id, "review_invoice");
    const summary = await openFor(t.db, alice.id, inv.id, "summarize_invoice");
    const categorize = await proposedLease(t.db, alice.id, inv.id, "categorize_lines");

    expect(await applyLease(t.db, alice.id, categorize.leaseId, { accept: [ids[0]!] })).toMatchObject({
      ok: true,
      invoiceVersion: inv.version + 1,
    });
    expect((await rows.leaseRow(t.db, review.leaseId)).invoiceVersion).toBe(inv.version + 1);
    expect((await rows.leaseRow(t.db, summary.leaseId)).invoiceVersion).toBe(inv.version + 1);

    expect(await applyLease(t.db, alice.id, review.leaseId)).toEqual({
      ok: true,
      invoiceVersion: inv.version + 2,
      written: ["review_notes"],
    });
    // The summary's generation reads after the two applies and proposes as usual.
    const { output, model } = await localOutput(t.db, summary.leaseId);
    expect(
      await proposeLease(t.db, { leaseId: summary.leaseId, actorId: alice.id, runNonce: summary.runNonce, proposal: { ...output, model } }),
    ).toEqual({
      ok: true,
    });
    expect(await applyLease(t.db, alice.id, summary.leaseId)).toEqual({ ok: true, invoiceVersion: inv.version + 3, written: ["summary"] });

    const after = await rows.invoiceRow(t.db, inv.id);
    expect(after).toMatchObject({
      version: inv.version + 3,
      summary: output.summary,
      summaryVersion: inv.version + 3,
      reviewNotesVersion: inv.version + 2,
    });
    expect(await categories(inv.id)).toEqual(["6000", null, null, null, null, null]);
  });

  it("an edit between the apply and the other lease's apply withdraws it: invoice_changed, nothing written", async () => {
    const { alice, inv, ids } = await setup();
    const review = await proposedLease(t.db, alice.id, inv.id, "review_invoice");
    const categorize = await proposedLease(t.db, alice.id, inv.id, "categorize_lines");
    expect(await applyLease(t.db, alice.id, categorize.leaseId, { accept: [ids[0]!] })).toMatchObject({ ok: true });

    const edited = await updateInvoice(t.db, await asMember(t.db, alice), inv.id, { counterparty: "Contoso Ltd" }, quietDispatch);
    expect(edited.ok).toBe(true);

    expect(await rows.leaseRow(t.db, review.leaseId)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
    expect(await applyLease(t.db, alice.id, review.leaseId)).toEqual({ ok: false, code: "invoice_changed" });
    expect((await rows.invoiceRow(t.db, inv.id)).reviewNotes).toBeNull();
  });

  it("a lease of an older version than the one applied is not carried forward", async () => {
    const { alice, inv, ids } = await setup();
    const review = await proposedLease(t.db, alice.id, inv.id, "review_invoice");
    // As if it had been opened before some earlier write an edit did not withdraw.
    await t.db
      .update(inferenceLease)
      .set({ invoiceVersion: inv.version - 1 })
      .where(eq(inferenceLease.id, review.leaseId));
    const categorize = await proposedLease(t.db, alice.id, inv.id, "categorize_lines");
    expect(await applyLease(t.db, alice.id, categorize.leaseId, { accept: [ids[0]!] })).toMatchObject({ ok: true });
    expect((await rows.leaseRow(t.db, review.leaseId)).invoiceVersion).toBe(inv.version - 1);
    expect(await applyLease(t.db, alice.id, review.leaseId)).toEqual({ ok: false, code: "invoice_changed" });
  });
});
