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
import { PURPOSE_DEFINITIONS, PURPOSES, purposeOf } from "@/lib/purposes";

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
