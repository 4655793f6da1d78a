// The invoice list's status filter, search, owner names, per-currency totals and CSV export, on
// both databases: one query (lib/invoice-list.ts) behind the page, GET /api/invoices and the
// export, filtering in SQL; another organization's invoices are never listed or exported.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease, invoice } from "@/db/schema";
import { listInvoicesWithState, listQueryOf, ListQuery } from "@/lib/invoice-list";
import { api, signInCookie } from "../../support/api";
import { asMember, joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
let w: Awaited<ReturnType<typeof world>>;
beforeAll(async () => {
  t = await openTestDb();
  w = await world();
});
afterAll(() => t?.close());

/** Alice's organization (Alice admin, Dave member) and Bob's, with invoices of each status. */
async function world() {
  const alice = await makeUser(t.db, "Alice Admin");
  const dave = await makeUser(t.db, "Dave Member");
  const bob = await makeUser(t.db, "Bob Elsewhere");
  await joinOrgOf(t.db, dave, alice, "member");
  const future = { issuedOn: "2026-11-01", dueOn: "2099-12-31" };
  const inv = {
    percent: await makeInvoice(t.db, alice.id, { number: "A-100", counterparty: "Acme 50% Off Ltd", totalCents: 10_000, ...future }),
    fifty: await makeInvoice(t.db, alice.id, {
      number: "A-101",
      counterparty: "Acme 500 Ltd",
      totalCents: 25_050,
      issuedOn: "2026-01-01",
      dueOn: "2026-01-31",
    }),
    paid: await makeInvoice(t.db, dave.id, {
      number: "D-200",
      counterparty: "Under_score & Co",
      currency: "USD",
      totalCents: 120_000,
      status: "paid",
      paidOn: "2026-11-20",
      ...future,
    }),
    voided: await makeInvoice(t.db, dave.id, {
      number: "D-201",
      counterparty: "UnderXscore Co",
      currency: "USD",
      totalCents: 1_000,
      status: "void",
      issuedOn: "2026-01-01",
      dueOn: "2026-01-31",
    }),
    evil: await makeInvoice(t.db, alice.id, {
      number: "=2+3",
      counterparty: 'Back\\slash, "Quoted"\nand @Co',
      currency: "GBP",
      totalCents: -500,
      ...future,
    }),
    bobs: await makeInvoice(t.db, bob.id, { number: "B-1", counterparty: "Acme 50% Off Ltd", totalCents: 99_900, ...future }),
  };
  return { alice, dave, bob, inv, aliceCookie: await signInCookie(alice.email), bobCookie: await signInCookie(bob.email) };
}

const numbersOf = async (query: Record<string, string>, who = w.alice) =>
  (await listInvoicesWithState(t.db, await asMember(t.db, who), ListQuery.parse(query))).rows.map((r) => r.number);
const apiNumbers = async (qs: string, cookie = w.aliceCookie) => {
  const res = await api("GET", `/api/invoices${qs}`, { cookie });
  expect(res.status).toBe(200);
  return (res.body as { number: string }[]).map((r) => r.number);
};

describe("the status filter", () => {
  it("any (the default), open (overdue included), overdue, paid, void; an unknown value is any", async () => {
    const all = ["A-100", "D-200", "=2+3", "A-101", "D-201"];
    expect(new Set(await numbersOf({}))).toEqual(new Set(all));
    expect(new Set(await numbersOf({ status: "any" }))).toEqual(new Set(all));
    expect(new Set(await numbersOf({ status: "bogus" }))).toEqual(new Set(all));
    expect(new Set(await numbersOf({ status: "open" }))).toEqual(new Set(["A-100", "A-101", "=2+3"]));
    // Due 2026-01-31, before the database's today, and open; the void one due the same day is not overdue.
    expect(await numbersOf({ status: "overdue" })).toEqual(["A-101"]);
    expect(await numbersOf({ status: "paid" })).toEqual(["D-200"]);
    expect(await numbersOf({ status: "void" })).toEqual(["D-201"]);
  });

  it("each row says whether it is overdue and who owns it", async () => {
    const { rows } = await listInvoicesWithState(t.db, await asMember(t.db, w.alice), ListQuery.parse({}));
    const by = Object.fromEntries(rows.map((r) => [r.number, r]));
    expect(by["A-101"]).toMatchObject({ overdue: true, ownerName: "Alice Admin", status: "open" });
    expect(by["D-201"]).toMatchObject({ overdue: false, ownerName: "Dave Member", status: "void" });
    expect(by["D-200"]).toMatchObject({ overdue: false, paidOn: "2026-11-20", status: "paid" });
  });

  it("keeps working with the summary-state, due and sort filters", async () => {
    expect(await numbersOf({ status: "open", sort: "due-soonest" })).toEqual(["A-101", "=2+3", "A-100"]);
    expect(await numbersOf({ status: "any", due: "overdue" })).toEqual(["A-101", "D-201"]);
    expect(await numbersOf({ status: "paid", state: "none" })).toEqual(["D-200"]);
    expect(await numbersOf({ status: "paid", state: "applied" })).toEqual([]);
  });
});

describe("the search (q)", () => {
  it("is a case-insensitive substring of the number or the counterparty", async () => {
    expect(new Set(await numbersOf({ q: "ACME" }))).toEqual(new Set(["A-100", "A-101"]));
    expect(await numbersOf({ q: "d-20" })).toEqual(expect.arrayContaining(["D-200", "D-201"]));
    expect(await numbersOf({ q: "  under_score  " })).toEqual(["D-200"]);
    expect(await numbersOf({ q: "nothing like this" })).toEqual([]);
  });

  it("escapes LIKE's wildcards: % and _ and \\ match only themselves", async () => {
    expect(await numbersOf({ q: "50%" })).toEqual(["A-100"]);
    expect(await numbersOf({ q: "%" })).toEqual(["A-100"]);
    expect(await numbersOf({ q: "_" })).toEqual(["D-200"]);
    expect(await numbersOf({ q: "r_s" })).toEqual(["D-200"]);
    expect(await numbersOf({ q: "\\" })).toEqual(["=2+3"]);
    expect(await numbersOf({ q: "k\\s" })).toEqual(["=2+3"]);
  });

  it("a search over 200 characters or with a NUL searches nothing rather than failing", async () => {
    expect(await numbersOf({ q: "x".repeat(201) })).toHaveLength(5);
    expect(await numbersOf({ q: "Acme\u0000" })).toHaveLength(5);
  });

  it("combines with the status filter", async () => {
    expect(await numbersOf({ q: "acme", status: "overdue" })).toEqual(["A-101"]);
    expect(await numbersOf({ q: "under", status: "open" })).toEqual([]);
  });

  it("never lists another organization's invoice, whatever the search", async () => {
    for (const q of ["", "Acme 50% Off", "B-1", "%", "_"]) {
      expect(await numbersOf({ q })).not.toContain("B-1");
      expect(await numbersOf({ q }, w.bob)).not.toContain("A-100");
    }
    expect(await numbersOf({ q: "acme" }, w.bob)).toEqual(["B-1"]);
  });
});

describe("GET /api/invoices with the list's query", () => {
  it("filters the same way, with status, paid_on, overdue and owner_name on each row", async () => {
    expect(new Set(await apiNumbers("?q=acme"))).toEqual(new Set(["A-100", "A-101"]));
    expect(await apiNumbers("?status=overdue")).toEqual(["A-101"]);
    expect(await apiNumbers(`?q=${encodeURIComponent("50%")}`)).toEqual(["A-100"]);
    expect(await apiNumbers("?q=acme", w.bobCookie)).toEqual(["B-1"]);
    const res = await api("GET", "/api/invoices?status=paid", { cookie: w.aliceCookie });
    expect(res.body).toEqual([
      expect.objectContaining({ number: "D-200", status: "paid", paid_on: "2026-11-20", overdue: false, owner_name: "Dave Member" }),
    ]);
    // A repeated key takes its first value, as the page does.
    expect(await apiNumbers("?status=paid&status=void")).toEqual(["D-200"]);
    expect(listQueryOf(new URLSearchParams("status=void&q=x&q=y"))).toMatchObject({ status: "void", q: "x" });
  });
});

describe("per-currency totals", () => {
  it("sum exactly the rows shown, one per currency, by code", async () => {
    const member = await asMember(t.db, w.alice);
    const totals = async (q: Record<string, string>) => (await listInvoicesWithState(t.db, member, ListQuery.parse(q))).totals;
    expect(await totals({})).toEqual([
      { currency: "EUR", cents: 35_050, count: 2 },
      { currency: "GBP", cents: -500, count: 1 },
      { currency: "USD", cents: 121_000, count: 2 },
    ]);
    expect(await totals({ q: "acme" })).toEqual([{ currency: "EUR", cents: 35_050, count: 2 }]);
    expect(await totals({ status: "paid" })).toEqual([{ currency: "USD", cents: 120_000, count: 1 }]);
    expect(await totals({ q: "none such" })).toEqual([]);
  });
});

describe("GET /api/invoices/export", () => {
  const exportOf = (qs: string, cookie = w.aliceCookie) => api("GET", `/api/invoices/export${qs}`, { cookie });
  const records = (csv: string) => csv.replace(/^\uFEFF/, "");

  it("a CSV download of exactly the rows shown for the same query, in their order", async () => {
    const res = await exportOf("?q=acme&sort=due-soonest");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="invoices-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(records(res.body)).toBe(
      [
        "Number,Counterparty,Owner,Currency,Amount,Issued on,Due on,Status,Paid on",
        "A-101,Acme 500 Ltd,Alice Admin,EUR,250.50,2026-01-01,2026-01-31,Overdue,",
        "A-100,Acme 50% Off Ltd,Alice Admin,EUR,100.00,2026-11-01,2099-12-31,Open,",
        "",
      ].join("\r\n"),
    );
    expect(await apiNumbers("?q=acme&sort=due-soonest")).toEqual(["A-101", "A-100"]);
    expect(records((await exportOf("?status=paid")).body).split("\r\n")[1]).toBe(
      "D-200,Under_score & Co,Dave Member,USD,1200.00,2026-11-01,2099-12-31,Paid,2026-11-20",
    );
  });

  it("quotes commas, quotes and line breaks, and defuses formulas; a negative amount stays a number", async () => {
    const res = await exportOf("?q=slash");
    expect(records(res.body).split("\r\n")[1]).toBe(
      `'=2+3,"Back\\slash, ""Quoted""\nand @Co",Alice Admin,GBP,-5.00,2026-11-01,2099-12-31,Open,`,
    );
  });

  it("a counterparty that starts with a formula is written as text", async () => {
    const inv = await makeInvoice(t.db, w.alice.id, { number: "F-1", counterparty: "@SUM(1+1)*cmd|' /C calc'!A0" });
    const res = await exportOf("?q=F-1");
    expect(records(res.body).split("\r\n")[1]).toMatch(/^F-1,'@SUM\(1\+1\)\*cmd\|' \/C calc'!A0,/);
    await t.db.delete(invoice).where(eq(invoice.id, inv.id));
  });

  it("never carries another organization's invoice; an empty list is the header alone", async () => {
    const alice = records((await exportOf("")).body);
    expect(alice).not.toContain("B-1");
    expect(alice.split("\r\n")).toHaveLength(1 + 5 + 1);
    const bob = records((await exportOf("?q=acme", w.bobCookie)).body);
    expect(bob.split("\r\n").slice(1)).toEqual(["B-1,Acme 50% Off Ltd,Bob Elsewhere,EUR,999.00,2026-11-01,2099-12-31,Open,", ""]);
    expect(records((await exportOf("?q=none+such")).body)).toBe(
      "Number,Counterparty,Owner,Currency,Amount,Issued on,Due on,Status,Paid on\r\n",
    );
  });

  it("401 without a session", async () => {
    expect(await exportOf("", "")).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
  });
});

describe("the summary state", () => {
  it("is the summary's: a newer review or categories attempt on the invoice does not change it", async () => {
    const member = await asMember(t.db, w.alice);
    const stateOf = async () =>
      (await listInvoicesWithState(t.db, member, ListQuery.parse({}))).rows.find((r) => r.number === "A-100")!.state;
    await t.db.insert(inferenceLease).values({
      actorId: w.alice.id,
      invoiceId: w.inv.percent.id,
      purpose: "summarize_invoice",
      status: "applied",
      deadlineAt: sql`now() + interval '1 minute'`,
      createdAt: sql`now() - interval '1 minute'`,
    });
    expect(await stateOf()).toBe("applied");
    // A review waiting for its review, newer than the applied summary: the list still says the summary's.
    await t.db.insert(inferenceLease).values({
      actorId: w.alice.id,
      invoiceId: w.inv.percent.id,
      purpose: "review_invoice",
      status: "proposed",
      deadlineAt: sql`now() + interval '1 minute'`,
      proposal: { findings: [] },
    });
    expect(await stateOf()).toBe("applied");
    expect(await numbersOf({ state: "proposed" })).not.toContain("A-100");
  });
});
