// The purpose registry's static rules (lib/purposes). Apply carries the other purposes' leases in
// flight to the invoice's new version (lib/leases/apply.ts, the rebase) on one ground: no purpose
// writes a column that any purpose reads, so a proposal made before another purpose's apply is
// still the one it would make after. What a purpose reads is taken from the code itself: the
// invoice fields and line columns loadForGeneration hands the model (lib/leases/generate.ts), and
// the columns each purpose's context expression names (rendered to SQL here, no database).
import fs from "node:fs";
import path from "node:path";
import { getTableColumns } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { account, invoice, invoiceLine } from "@/db/schema";
import { z } from "zod";
import { WRITTEN_WITH } from "@/app/_lib/lease-words";
import type { ModelRequest } from "@/lib/model/types";
import { isPurpose, PURPOSE_DEFINITIONS, PURPOSES, purposeOf, type Purpose } from "@/lib/purposes";

const ROOT = path.resolve(__dirname, "../..");
const TABLES = { invoice, invoice_line: invoiceLine, account } as const;
/** Each table's SQL column names, from db/schema.ts; and its TS field → SQL name. */
const sqlNames = (table: keyof typeof TABLES) => Object.values(getTableColumns(TABLES[table])).map((c) => c.name);
const fieldToColumn = (table: keyof typeof TABLES) =>
  Object.fromEntries(Object.entries(getTableColumns(TABLES[table])).map(([field, c]) => [field, c.name]));

/** `table.column` for every column a purpose's context names: aliases from its FROM clauses, `invoice` the lease's invoice. */
function contextReads(sqlText: string): Set<string> {
  const aliases: Record<string, string> = { invoice: "invoice" };
  for (const [, table, alias] of sqlText.matchAll(/\bfrom\s+(\w+)\s+(\w+)/gi)) aliases[alias!] = table!;
  const reads = new Set<string>();
  for (const [, alias, column] of sqlText.matchAll(/\b(\w+)\.(\w+)\b/g)) {
    const table = aliases[alias!];
    if (table) reads.add(`${table}.${column}`);
  }
  return reads;
}

/** What loadForGeneration hands the model: the invoice fields it copies (`inv.X`) and the line columns of its lines' JSON (`l.x`). */
function generationReads(): Set<string> {
  const source = fs.readFileSync(path.join(ROOT, "lib/leases/generate.ts"), "utf8");
  const invoiceFields = fieldToColumn("invoice");
  const reads = new Set<string>();
  for (const [, field] of source.matchAll(/\binv\.(\w+)/g)) reads.add(`invoice.${invoiceFields[field!] ?? field}`);
  for (const [, column] of source.matchAll(/\bl\.(\w+)/g)) reads.add(`invoice_line.${column}`);
  return reads;
}

const dialect = new PgDialect();
const everyRead = () => {
  const reads = generationReads();
  for (const name of PURPOSES) {
    const context = purposeOf(name).context;
    if (context) for (const read of contextReads(dialect.sqlToQuery(context).sql)) reads.add(read);
  }
  return reads;
};

describe("the purpose registry", () => {
  it("every code of PURPOSES has a definition whose name is its key, and there is no other", () => {
    expect(Object.keys(PURPOSE_DEFINITIONS).sort()).toEqual([...PURPOSES].sort());
    for (const name of PURPOSES) expect(PURPOSE_DEFINITIONS[name].name).toBe(name);
  });

  it("every target column exists in db/schema.ts, in invoice or invoice_line", () => {
    for (const name of PURPOSES) {
      const target = purposeOf(name).target;
      expect(target.length, name).toBeGreaterThan(0);
      for (const column of target) {
        const [table, col] = column.split(".") as ["invoice" | "invoice_line", string];
        expect(sqlNames(table), `${name}: ${column}`).toContain(col);
      }
    }
  });

  it("what the purposes read is found (the rule below is not vacuous)", () => {
    const reads = everyRead();
    for (const column of [
      "invoice.number",
      "invoice.counterparty",
      "invoice.currency",
      "invoice.total_cents",
      "invoice.issued_on",
      "invoice.due_on",
      "invoice.org_id",
      "invoice.status",
      "invoice_line.description",
      "invoice_line.quantity",
      "invoice_line.unit_price_cents",
      "account.keywords",
    ]) {
      expect(reads, column).toContain(column);
    }
    // And every column named is a real one: a typo in a context would read nothing.
    for (const read of reads) {
      const [table, column] = read.split(".") as [keyof typeof TABLES, string];
      expect(sqlNames(table), read).toContain(column);
    }
  });

  it("no purpose's target is a column any purpose reads: what makes apply's rebase of the other leases sound", () => {
    const reads = everyRead();
    const clashes = PURPOSES.flatMap((name) =>
      purposeOf(name)
        .target.filter((column) => reads.has(column))
        .map((c) => `${name}: ${c}`),
    );
    expect(clashes).toEqual([]);
  });

  it("no two purposes share a target column: one purpose's apply never overwrites another's", () => {
    const all = PURPOSES.flatMap((name) => purposeOf(name).target);
    expect(new Set(all).size).toBe(all.length);
  });

  it("the fence's own columns are no purpose's target: apply bumps the version itself, once", () => {
    for (const name of PURPOSES) {
      expect(purposeOf(name).target).not.toContain("invoice.version");
      expect(purposeOf(name).target).not.toContain("invoice.updated_at");
      expect(purposeOf(name).target).not.toContain("invoice.id");
    }
  });
});

/** A small request, for building a purpose's wire form as the openai-compatible lane would. */
const sampleRequest = (purpose: Purpose): ModelRequest => ({
  purpose,
  actorId: "00000000-0000-4000-8000-000000000001",
  invoice: {
    id: "00000000-0000-4000-8000-0000000000ff",
    number: "A-1",
    counterparty: "Acme",
    currency: "EUR",
    totalCents: 1000,
    issuedOn: "2026-11-01",
    dueOn: "2026-12-01",
    lines: [{ id: "00000000-0000-4000-8000-0000000000aa", description: "Laptop", quantity: 1, unitPriceCents: 1000 }],
  },
  context: { accounts: [{ code: "6000", name: "Hardware", keywords: ["laptop"] }] },
});

// A fourth purpose is its file and its line in the registry (docs/decisions/0076): whatever the
// pages, the words modules and the model lane need of it is its definition's, so a definition
// missing any of it fails here, not on a page or a model call.
describe("every purpose's definition is complete", () => {
  const WORD_KEYS = Object.keys(purposeOf("summarize_invoice").words).sort();

  it.each(PURPOSES)("%s: every word a person reads about it, non-empty, its templates' placeholders known", (name) => {
    const words = purposeOf(name).words as Record<string, unknown>;
    expect(Object.keys(words).sort()).toEqual(WORD_KEYS);
    for (const [key, value] of Object.entries(words)) {
      expect(typeof value, `${name}.${key}`).toBe("string");
      expect((value as string).trim(), `${name}.${key}`).not.toBe("");
      expect(value, `${name}.${key}`).toBe((value as string).trim());
      const placeholders = [...(value as string).matchAll(/\{(\w*)\}?/g)].map((m) => m[0]);
      const allowed = key === "teammateWriting" ? ["{name}"] : key === "teammateReview" ? ["{name}", "{until}"] : [];
      expect(placeholders.sort(), `${name}.${key}`).toEqual([...allowed].sort());
    }
  });

  it("no two purposes share a heading, a button, a noun, an attempt's name or a timeline line: each panel and history entry says which it is", () => {
    for (const key of ["heading", "open", "openAgain", "noun", "attempt", "readyEvent", "appliedEvent", "applied"] as const) {
      const all = PURPOSES.map((name) => purposeOf(name).words[key]);
      expect(new Set(all).size, key).toBe(all.length);
    }
  });

  it("the summary's words are the ones the shared sentences are written with, so its sentences read as before", () => {
    const summary = purposeOf("summarize_invoice").words;
    for (const [key, value] of Object.entries(WRITTEN_WITH)) expect(summary[key as keyof typeof summary], key).toBe(value);
  });

  it.each(PURPOSES)("%s: applies by line exactly when its target is the lines' (its changes are keyed by line)", (name) => {
    const { byLine, target } = purposeOf(name);
    expect(typeof byLine).toBe("boolean");
    expect(byLine, name).toBe(target.every((column) => column.startsWith("invoice_line.")));
  });

  it.each(PURPOSES)("%s: the openai-compatible lane can ask for it (its wire form, or its output, is a JSON object)", (name) => {
    const purpose = purposeOf(name);
    const wire = purpose.wire?.(sampleRequest(name));
    if (purpose.wire) expect(typeof wire?.toOutput, name).toBe("function");
    const schema = z.toJSONSchema(wire?.answer ?? purpose.output) as { type?: string };
    expect(schema.type, name).toBe("object");
  });

  // What each purpose's context reads, as its SQL would answer for the sample request (a new
  // purpose without its entry fails tsc here, as in tests/unit/model-openai-purposes.test.ts).
  const SAMPLE_CONTEXT: Record<Purpose, Record<string, unknown>> = {
    summarize_invoice: { history: { count: 0, average_cents: null, last_issued_on: null, last_total_cents: null } },
    review_invoice: { today: "2026-11-15", status: "open", duplicates: [], counterparty: { count: 0, median_cents: null } },
    categorize_lines: { accounts: [{ code: "6000", name: "Hardware", keywords: ["laptop"] }] },
  };

  it.each(PURPOSES)("%s: its local answer is its own output, and the page can show it", (name) => {
    const purpose = purposeOf(name);
    const { invoice } = sampleRequest(name);
    const local = purpose.local(
      { orgId: "o", invoice: { ...invoice, lines: invoice.lines.map((l) => ({ ...l, id: l.id! })) } },
      SAMPLE_CONTEXT[name],
    );
    expect(purpose.output.safeParse(local).success, name).toBe(true);
    const current = {
      invoice: {},
      summary: null,
      reviewNotes: null,
      lines: [{ id: invoice.lines[0]!.id!, position: 0, description: "Laptop", category: null }],
      accounts: { "6000": "Hardware" },
    };
    expect(purpose.changes(local, current).length, name).toBeGreaterThan(0);
  });

  it("the list of purposes is the registry's keys, in its order, and isPurpose knows exactly them", () => {
    expect([...PURPOSES]).toEqual(Object.keys(PURPOSE_DEFINITIONS));
    for (const name of PURPOSES) expect(isPurpose(name)).toBe(true);
    for (const other of ["", "constructor", "toString", "Summarize_invoice", "summarize_invoice "])
      expect(isPurpose(other), other).toBe(false);
  });
});
