// The CSV import fuzzed (fast-check): files written with every quoting a spreadsheet uses
// (commas, quotes, newlines inside fields, a BOM, CRLF or LF), then maybe broken (a byte
// changed, cut short, a quote dropped, a row duplicated with a changed column). For every
// file: never a 5xx; nothing written unless the answer is 200; and a well-formed file is
// read back exactly as written. The 10,001-row file and a 2 GB content-length lie are cases
// of their own at the end.
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as importRoute from "@/app/api/invoices/import/route";
import { signInCookie } from "../../support/api";
import { rowsOf } from "../../support/fuzz";
import { makeUser, openTestDb, type TestDb } from "../../support/db";

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const HEADER = ["number", "counterparty", "currency", "issued_on", "due_on", "line_description", "quantity", "unit_price_cents"];

let t: TestDb;
let cookie: string;
let ownerId: string;
beforeAll(async () => {
  t = await openTestDb();
  const user = await makeUser(t.db, "Fuzzer");
  ownerId = user.id;
  cookie = await signInCookie(user.email);
});
afterAll(() => t?.close());

async function send(body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) {
  const res = await importRoute.POST(
    new Request("http://127.0.0.1:3000/api/invoices/import", {
      method: "POST",
      headers: { cookie, "content-type": "text/csv", ...headers },
      body,
    }),
    { params: Promise.resolve({}) },
  );
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function snapshot() {
  const [row] = rowsOf<{ s: string | null }>(
    await t.db.execute(
      sql`select (select count(*) from invoice)::text || '/' || (select count(*) from invoice_line)::text || '/' || (select count(*) from invoice_change)::text as s`,
    ),
  );
  return row!.s;
}

/** A field as a spreadsheet writes it: quoted when it must be (or sometimes anyway), quotes doubled. */
const quote = (value: string, always: boolean) =>
  always || /[",\r\n]/.test(value) || value !== value.trim() ? `"${value.replaceAll('"', '""')}"` : value;

// Text with the characters that make CSV hard, and no leading or trailing blanks (the import trims).
const tricky = fc
  .array(fc.oneof(fc.constantFrom(",", '"', "\n", "\r\n", "'", ";", "é", "€", "😀", " "), fc.string({ minLength: 1, maxLength: 4 })), {
    minLength: 1,
    maxLength: 8,
  })
  .map((parts) => parts.join("").trim())
  .filter((s) => s.length > 0 && s.length <= 200 && !s.includes("\u0000") && /^[^\s]/.test(s));

const day = fc.integer({ min: 0, max: 3000 }).map((n) => new Date(Date.UTC(2020, 0, 1) + n * 86_400_000).toISOString().slice(0, 10));

const invoiceArb = fc.record({
  number: fc.stringMatching(/^[A-Z]{1,3}-[0-9]{1,4}$/),
  counterparty: tricky,
  currency: fc.constantFrom("EUR", "USD", "GBP", "JPY", "chf"),
  issued: day,
  days: fc.integer({ min: 0, max: 90 }),
  lines: fc.array(
    fc.record({ description: tricky, quantity: fc.integer({ min: 1, max: 1000 }), unit: fc.integer({ min: 0, max: 100_000 }) }),
    { minLength: 1, maxLength: 4 },
  ),
});

const fileArb = fc.record({
  invoices: fc.uniqueArray(invoiceArb, { minLength: 1, maxLength: 6, selector: (i) => i.number }),
  bom: fc.boolean(),
  eol: fc.constantFrom("\r\n", "\n"),
  alwaysQuote: fc.boolean(),
  trailingEol: fc.boolean(),
  // How to break it, if at all.
  breakage: fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: "none" as const }) },
    fc.record({ kind: fc.constant("byte" as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
    fc.record({ kind: fc.constant("drop_quote" as const), at: fc.nat() }),
    fc.record({ kind: fc.constant("conflict" as const), at: fc.nat() }),
  ),
});

type File = typeof fileArb extends fc.Arbitrary<infer T> ? T : never;

function write(file: File): { text: string; expected: Map<string, string[]> } {
  const rows: string[][] = [HEADER];
  const expected = new Map<string, string[]>();
  for (const inv of file.invoices) {
    const due = new Date(Date.parse(inv.issued) + inv.days * 86_400_000).toISOString().slice(0, 10);
    for (const l of inv.lines)
      rows.push([inv.number, inv.counterparty, inv.currency, inv.issued, due, l.description, String(l.quantity), String(l.unit)]);
    expected.set(
      inv.number,
      inv.lines.map((l) => l.description),
    );
  }
  if (file.breakage.kind === "conflict") {
    const victim = rows[1 + (file.breakage.at % (rows.length - 1))]!;
    rows.push([victim[0]!, victim[1] + " (other)", ...victim.slice(2)]);
  }
  const text =
    (file.bom ? "\ufeff" : "") +
    rows.map((r) => r.map((v) => quote(v, file.alwaysQuote)).join(",")).join(file.eol) +
    (file.trailingEol ? file.eol : "");
  return { text, expected };
}

function breakBytes(text: string, breakage: File["breakage"]): Uint8Array<ArrayBuffer> {
  const bytes = new TextEncoder().encode(text);
  switch (breakage.kind) {
    case "byte": {
      const copy = bytes.slice();
      copy[breakage.at % copy.length] = breakage.byte;
      return copy;
    }
    case "cut":
      return bytes.subarray(0, breakage.at % bytes.length);
    case "drop_quote": {
      const quotes = [...text.matchAll(/"/g)].map((m) => m.index);
      if (quotes.length === 0) return bytes;
      const i = quotes[breakage.at % quotes.length]!;
      return new TextEncoder().encode(text.slice(0, i) + text.slice(i + 1));
    }
    default:
      return bytes;
  }
}

describe("the CSV import under fuzzed files", () => {
  it("never a 5xx, nothing written unless 200, and a well-formed file read back as written", async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fileArb, async (file) => {
        const { text, expected } = write(file);
        const body = breakBytes(text, file.breakage);
        const before = await snapshot();
        const res = await send(body);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status).toBeLessThan(500);
        if (file.breakage.kind === "none") expect(res).toMatchObject({ status: 200 });
        if (res.status !== 200) {
          expect(await snapshot()).toBe(before);
          expect([413, 422]).toContain(res.status);
          return;
        }
        expect(res.body.created + res.body.skipped).toBeGreaterThan(0);
        if (file.breakage.kind === "none") {
          expect(res.body.created + res.body.skipped).toBe(expected.size);
          // Every number of the file is there now, with the lines as written (an earlier run may
          // have created it first, with other lines: then it was skipped, and is left as it was).
          for (const [number, descriptions] of expected) {
            const lines = rowsOf<{ description: string; kind: string }>(
              await t.db.execute(
                sql`select l.description, c.kind from invoice i join invoice_line l on l.invoice_id = i.id join invoice_change c on c.invoice_id = i.id where i.owner_id = ${ownerId} and i.number = ${number} order by l.position`,
              ),
            );
            expect(lines.length).toBeGreaterThan(0);
            expect(lines.every((l) => l.kind === "imported")).toBe(true);
            if (res.body.skipped === 0) expect(lines.map((l) => l.description)).toEqual(descriptions);
          }
        }
        if (file.breakage.kind === "conflict") throw new Error("a file whose rows disagree was accepted");
      }),
      { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
    );
    console.info(`[csv-import-fuzz] ${RUNS} files; statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
  }, 300_000);

  it("10,001 rows: 422 too_many_rows, nothing written", async () => {
    const before = await snapshot();
    const rows = Array.from({ length: 10_001 }, (_, i) => `X-${i},"Contoso, ""Ltd""",EUR,2026-11-01,2026-12-01,"a\nb",1,1`);
    const res = await send("\ufeff" + [HEADER.join(","), ...rows].join("\r\n"));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ row: 10_002, column: null, code: "too_many_rows" }]);
    expect(await snapshot()).toBe(before);
  }, 60_000);

  it("a 2 GB content-length lie: 413 at once, nothing written", async () => {
    const before = await snapshot();
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode(HEADER.join(",") + "\n"));
      },
    });
    const res = await importRoute.POST(
      new Request("http://127.0.0.1:3000/api/invoices/import", {
        method: "POST",
        headers: { cookie, "content-type": "text/csv", "content-length": "2147483648" },
        body,
        duplex: "half",
      } as RequestInit),
      { params: Promise.resolve({}) },
    );
    expect(res.status).toBe(413);
    expect(await snapshot()).toBe(before);
  });
});
