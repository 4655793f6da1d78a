// RFC 8785 in SQL (audit_jcs, migration 0010) against the `canonicalize` package, on PGlite and
// PostgreSQL: generated JSON documents, doubles and the numbers at ECMAScript's layout edges come
// out as the package writes them, so a hash made in the database can be made again in Node by an
// auditor (docs/decisions/0080). invoice_sha256 (0079) is rebuilt from a plain SELECT the same way.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invoiceLine } from "@/db/schema";
import { rowsOf } from "@/db/client";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(async () => {
  await t?.close();
});

/** audit_jcs of each JSON text, in one round trip. */
async function inSql(texts: string[]): Promise<string[]> {
  const rows = rowsOf<{ i: number; out: string }>(
    await t.db.execute(
      sql`select x.i::int as i, audit_jcs(x.j::jsonb) as out
        from jsonb_array_elements_text(${JSON.stringify(texts)}::jsonb) with ordinality as x(j, i) order by x.i`,
    ),
  );
  return rows.map((r) => r.out);
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

// Keys below U+10000 (audit_jcs refuses the rest: its order is not UTF-16's there), no NUL (jsonb holds none).
const bmpChar = fc
  .integer({ min: 1, max: 0xffff })
  .filter((c) => c < 0xd800 || c > 0xdfff)
  .map((c) => String.fromCharCode(c));
const text = fc.oneof(
  fc.string({ maxLength: 12 }).map((s) => s.replaceAll("\u0000", "")),
  fc.string({ unit: bmpChar, maxLength: 8 }),
  fc.string({
    unit: fc.constantFrom("a", "B", "é", "\u0001", "\u001f", '"', "\\", "/", "\u007f", "\u2028", "😀", "\t", "\n"),
    maxLength: 8,
  }),
);
const key = fc.oneof(
  fc.string({ unit: bmpChar, maxLength: 6 }),
  fc.constantFrom("a", "A", "b", "aa", "é", "e", "_", "10", "9", "", "\u0080"),
);
const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e21, 1e20, 123456789012345680000, 1e-6, 1e-7, 1.5e-7, 9007199254740992, 9007199254740993, -9007199254740993),
);
const { value: doc } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    number,
    text,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 5 }),
  ),
}));

describe("audit_jcs is RFC 8785 as `canonicalize` 1.0.8 writes it", () => {
  it("JSON documents", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { minLength: 1, maxLength: 50 }), async (docs) => {
        const texts = docs.map((d) => JSON.stringify(d));
        expect(await inSql(texts)).toEqual(docs.map((d) => canonicalize(JSON.parse(JSON.stringify(d)))));
      }),
      { numRuns: 60 },
    );
  });

  it("doubles, and numbers written with more digits than a double holds", async () => {
    const doubles = [
      ...fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), 3000),
      // From 2^53 to 1e40 a decimal can lie halfway between two doubles (an integer): ECMAScript
      // writes it when it is the shorter, and float8's own text does not.
      ...fc.sample(fc.double({ min: 2 ** 53, max: 1e40, noNaN: true }), 2000),
    ];
    const edges = [
      "0",
      "-0",
      "5.000",
      "1e21",
      "1e-7",
      "0.000001",
      "100000000000000000000",
      "123456789012345678901234567890",
      "0.1000000000000000055511151231257827",
      "4.35",
      "5e-324",
      "1.7976931348623157e308",
      "-1.5e-10",
      "9007199254740993",
      "2e-323",
      "333333333.33333329",
      "1E+2",
      "48326729308017700",
      "-48326729308017700",
      "131355778722626000000",
    ];
    const texts = [...doubles.map((d) => JSON.stringify(d)), ...edges];
    expect(await inSql(texts)).toEqual(texts.map((s) => canonicalize(JSON.parse(s))));
  });

  it("a key above U+FFFF is refused, and a number no double holds", async () => {
    await expect(inSql(['{"😀":1}'])).rejects.toThrow();
    await expect(inSql(["1e400"])).rejects.toThrow();
  });
});

describe("invoice_sha256", () => {
  it("is the sha256 of the invoice and its lines in RFC 8785, rebuilt from a plain SELECT", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await makeInvoice(t.db, alice.id, { counterparty: 'Nörth "wind"' });
    await t.db.insert(invoiceLine).values({ invoiceId: inv.id, position: 2, description: "Second", quantity: 3, unitPriceCents: 250 });
    await t.db.execute(
      sql`update invoice set review_notes = '[{"severity":"warning","x":0.5}]'::jsonb, review_notes_version = version where id = ${inv.id}`,
    );
    const [row] = rowsOf<Record<string, unknown>>(
      await t.db
        .execute(sql`select id, org_id, owner_id, number, counterparty, currency, total_cents, to_char(issued_on, 'YYYY-MM-DD') as issued_on,
        to_char(due_on, 'YYYY-MM-DD') as due_on, status, to_char(paid_on, 'YYYY-MM-DD') as paid_on, summary, summary_version,
        review_notes, review_notes_version, version, invoice_sha256(id) as hash from invoice where id = ${inv.id}`),
    );
    const lines = rowsOf<Record<string, unknown>>(
      await t.db.execute(sql`select id, position, description, quantity, unit_price_cents, category from invoice_line
        where invoice_id = ${inv.id} order by position, id`),
    );
    const { hash, ...invoice } = row!;
    const parse = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v);
    const content = { ...invoice, review_notes: parse(invoice.review_notes), lines };
    expect(lines.length).toBeGreaterThan(0);
    expect(hash).toBe(sha256(canonicalize(content)!));
  });
});
