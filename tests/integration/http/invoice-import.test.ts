// POST /api/invoices/import: all or nothing, re-run safe, 10,000 rows and no more, streamed in
// bounded memory, and its byte limit enforced while the body is read.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as importRoute from "@/app/api/invoices/import/route";
import { MAX_IMPORT_BYTES, parseInvoiceCsv } from "@/lib/invoice-import";
import { api, signInCookie } from "../../support/api";
import { rowsOf } from "../../support/fuzz";
import { joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

const HEADER = "number,counterparty,currency,issued_on,due_on,line_description,quantity,unit_price_cents";
const csv = (...rows: string[]) => [HEADER, ...rows].join("\r\n") + "\r\n";
const post = (cookie: string | undefined, raw: string, headers: Record<string, string> = {}) =>
  api("POST", "/api/invoices/import", { cookie, raw, headers: { "content-type": "text/csv", ...headers } });

async function counts() {
  const [row] = rowsOf<{ invoices: number; lines: number; changes: number }>(
    await t.db.execute(
      sql`select (select count(*)::int from invoice) as invoices, (select count(*)::int from invoice_line) as lines, (select count(*)::int from invoice_change) as changes`,
    ),
  );
  return row!;
}

async function signedIn(name = "Importer") {
  const user = await makeUser(t.db, name);
  return { user, cookie: await signInCookie(user.email) };
}

describe("POST /api/invoices/import", () => {
  it("creates one invoice per number with its lines, owned by the importer, each with an `imported` history row", async () => {
    const { user, cookie } = await signedIn();
    const res = await post(
      cookie,
      csv(
        "A-1,Contoso,EUR,2026-11-01,2026-12-01,Audit,2,50000",
        "A-1,Contoso,EUR,2026-11-01,2026-12-01,Travel,1,1250",
        'A-2,"Fabrikam, Inc.",usd,2026-11-02,2026-11-30,"Said ""hello""\nand more",3,100',
      ),
    );
    expect(res).toMatchObject({ status: 200, body: { created: 2, skipped: 0 } });
    const rows = rowsOf<{ number: string; owner_id: string; total_cents: number; currency: string; counterparty: string }>(
      await t.db.execute(
        sql`select number, owner_id, total_cents, currency, counterparty from invoice where owner_id = ${user.id} order by number`,
      ),
    );
    expect(rows).toEqual([
      { number: "A-1", owner_id: user.id, total_cents: 101250, currency: "EUR", counterparty: "Contoso" },
      { number: "A-2", owner_id: user.id, total_cents: 300, currency: "USD", counterparty: "Fabrikam, Inc." },
    ]);
    const lines = rowsOf<{ description: string }>(
      await t.db.execute(
        sql`select l.description from invoice_line l join invoice i on i.id = l.invoice_id where i.owner_id = ${user.id} order by i.number, l.position`,
      ),
    );
    expect(lines.map((l) => l.description)).toEqual(["Audit", "Travel", 'Said "hello"\nand more']);
    const kinds = rowsOf<{ kind: string; actor_id: string }>(
      await t.db.execute(
        sql`select c.kind, c.actor_id from invoice_change c join invoice i on i.id = c.invoice_id where i.owner_id = ${user.id}`,
      ),
    );
    expect(kinds).toEqual([
      { kind: "imported", actor_id: user.id },
      { kind: "imported", actor_id: user.id },
    ]);
  });

  it("a re-run creates nothing and counts the numbers already there as skipped", async () => {
    const { user, cookie } = await signedIn();
    await makeInvoice(t.db, user.id, { number: "R-1" });
    const file = csv("R-1,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100", "R-2,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100");
    expect((await post(cookie, file)).body).toEqual({ created: 1, skipped: 1 });
    const before = await counts();
    expect((await post(cookie, file)).body).toEqual({ created: 0, skipped: 2 });
    expect(await counts()).toEqual(before);
  });

  it("numbers are skipped only within the organization; any member may import, and a teammate's number is skipped", async () => {
    const { user: admin } = await signedIn("Admin");
    const outsider = await makeUser(t.db, "Outsider");
    await makeInvoice(t.db, outsider.id, { number: "O-1" });
    const member = await makeUser(t.db, "Member");
    await joinOrgOf(t.db, member, admin, "member");
    await makeInvoice(t.db, admin.id, { number: "O-2" });
    const res = await post(
      await signInCookie(member.email),
      csv("O-1,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100", "O-2,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100"),
    );
    expect(res).toMatchObject({ status: 200, body: { created: 1, skipped: 1 } });
    const [row] = rowsOf<{ owner_id: string }>(
      await t.db.execute(sql`select owner_id from invoice where number = 'O-1' and owner_id <> ${outsider.id}`),
    );
    expect(row!.owner_id).toBe(member.id);
  });

  it("two imports of the same numbers at once: each succeeds, and each number is created once", async () => {
    const { user, cookie } = await signedIn();
    const file = csv(...Array.from({ length: 50 }, (_, i) => `C-${i},Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100`));
    const results = await Promise.all([post(cookie, file), post(cookie, file)]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results.reduce((s, r) => s + r.body.created, 0)).toBe(50);
    expect(results.reduce((s, r) => s + r.body.skipped, 0)).toBe(50);
    const [row] = rowsOf<{ n: number }>(await t.db.execute(sql`select count(*)::int as n from invoice where owner_id = ${user.id}`));
    expect(row!.n).toBe(50);
  });

  it("one bad row and nothing is written: 422 invalid_csv names each row (header = row 1), column and code", async () => {
    const { cookie } = await signedIn();
    const before = await counts();
    const res = await post(
      cookie,
      csv(
        "B-1,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100",
        "B-2,Contoso,EUR,2026-11-01,2026-13-01,Audit,1,100",
        "B-1,Other name,EUR,2026-11-01,2026-12-01,Audit,1,100",
        "B-3,Contoso,EURO,2026-11-01,2026-12-01,Audit,x,-5",
        "B-4,Contoso,EUR,2026-12-01,2026-11-01,,1,100",
        "B-5,too,few",
      ),
    );
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: "invalid_csv",
      errors_truncated: false,
      errors: [
        { row: 3, column: "due_on", code: "not_a_date" },
        { row: 4, column: "counterparty", code: "differs_from_earlier_row" },
        { row: 5, column: "currency", code: "not_a_currency" },
        { row: 5, column: "quantity", code: "not_a_whole_number" },
        { row: 5, column: "unit_price_cents", code: "out_of_range" },
        { row: 6, column: "line_description", code: "required" },
        { row: 6, column: "due_on", code: "due_before_issue" },
        { row: 7, column: null, code: "wrong_column_count" },
      ],
    });
    expect(await counts()).toEqual(before);
  });

  it("a header is required, exactly these columns; a file of no rows is refused", async () => {
    const { cookie } = await signedIn();
    const before = await counts();
    for (const [file, code] of [
      ["A-1,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100\r\n", "missing_header"],
      ["number,counterparty,currency,issued_on,due_on,quantity,line_description,unit_price_cents\r\n", "wrong_header"],
      ["", "missing_header"],
      [HEADER + "\r\n", "no_rows"],
    ] as const) {
      const res = await post(cookie, file);
      expect(res.status).toBe(422);
      expect(res.body.errors[0].code).toBe(code);
    }
    expect(await counts()).toEqual(before);
  });

  it("a quote left open is a syntax error at its row, and nothing is written", async () => {
    const { cookie } = await signedIn();
    const before = await counts();
    const res = await post(
      cookie,
      csv("Q-1,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100", 'Q-2,"Cont"oso,EUR,2026-11-01,2026-12-01,Audit,1,100'),
    );
    expect(res).toMatchObject({ status: 422, body: { detail: "invalid_csv", errors: [{ row: 3, column: null, code: "malformed" }] } });
    expect(await counts()).toEqual(before);
  });

  it("a BOM and LF line ends are read as well as CRLF", async () => {
    const { cookie } = await signedIn();
    const res = await post(cookie, "\ufeff" + HEADER + "\nL-1,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100\n");
    expect(res).toMatchObject({ status: 200, body: { created: 1, skipped: 0 } });
  });

  it("caps the error list at 100 and says so", async () => {
    const { cookie } = await signedIn();
    const res = await post(cookie, csv(...Array.from({ length: 150 }, (_, i) => `E-${i},Contoso,EUR,2026-11-01,not-a-date,Audit,1,100`)));
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveLength(100);
    expect(res.body.errors_truncated).toBe(true);
  });

  it("10,000 rows are accepted, parsed as a stream (the parser never buffers more than one chunk's records)", async () => {
    const { cookie } = await signedIn();
    const rows = Array.from({ length: 10_000 }, (_, i) => `T-${Math.floor(i / 4)},Contoso,EUR,2026-11-01,2026-12-01,Line ${i},1,100`);
    const file = csv(...rows);
    // Fed in small chunks, as a network body comes.
    async function* chunks() {
      const bytes = new TextEncoder().encode(file);
      for (let i = 0; i < bytes.length; i += 16 * 1024) yield bytes.subarray(i, i + 16 * 1024);
    }
    const parsed = await parseInvoiceCsv(chunks());
    expect(parsed.ok && parsed.rows).toBe(10_000);
    // csv-parse pushes the records of one chunk at a time: a 16 KiB chunk holds about 300 of
    // these rows, so a parser that held the file (10,000) or more than a chunk fails here.
    expect(parsed.peakBufferedRecords).toBeGreaterThan(0);
    expect(parsed.peakBufferedRecords).toBeLessThan((16 * 1024) / 50);
    const res = await post(cookie, file);
    expect(res).toMatchObject({ status: 200, body: { created: 2_500, skipped: 0 } });
  }, 120_000);

  it("10,001 rows are refused with too_many_rows at row 10,002, and nothing is written", async () => {
    const { cookie } = await signedIn();
    const before = await counts();
    const rows = Array.from({ length: 10_001 }, (_, i) => `U-${i},Contoso,EUR,2026-11-01,2026-12-01,Line,1,100`);
    const res = await post(cookie, csv(...rows));
    expect(res).toMatchObject({
      status: 422,
      body: { detail: "invalid_csv", errors: [{ row: 10_002, column: null, code: "too_many_rows" }] },
    });
    expect(await counts()).toEqual(before);
  }, 60_000);

  it("a content-length over the limit is refused at once (413), before the body is read", async () => {
    const { cookie } = await signedIn();
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode(HEADER + "\n"));
      },
    });
    const req = new Request("http://127.0.0.1:3000/api/invoices/import", {
      method: "POST",
      headers: { cookie, "content-type": "text/csv", "content-length": String(2 * 1024 ** 3) },
      body,
      duplex: "half",
    } as RequestInit);
    const res = await importRoute.POST(req, { params: Promise.resolve({}) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: "payload_too_large" });
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it("a body that grows past the limit is cut off with 413 without reading it all", async () => {
    const { cookie } = await signedIn();
    const before = await counts();
    // Blank lines are no rows, so neither the row cap nor the error cap stops the reading: the byte limit must.
    const row = new TextEncoder().encode((" ".repeat(700) + "\n").repeat(100));
    let sent = 0;
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(HEADER + "\n"));
      },
      pull(controller) {
        // An endless body; stops only if we are not cut off long after the limit.
        pulls++;
        if (sent > 4 * MAX_IMPORT_BYTES) return controller.close();
        sent += row.byteLength;
        controller.enqueue(row);
      },
    });
    const req = new Request("http://127.0.0.1:3000/api/invoices/import", {
      method: "POST",
      headers: { cookie, "content-type": "text/csv" },
      body,
      duplex: "half",
    } as RequestInit);
    const res = await importRoute.POST(req, { params: Promise.resolve({}) });
    expect(res.status).toBe(413);
    expect(sent).toBeLessThan(MAX_IMPORT_BYTES + 8 * row.byteLength);
    expect(pulls).toBeGreaterThan(0);
    expect(await counts()).toEqual(before);
  }, 60_000);

  it("401 without a session; 415 for a body that is not text/csv; nothing written", async () => {
    const { cookie } = await signedIn();
    const before = await counts();
    const file = csv("Z-1,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,100");
    expect(await post(undefined, file)).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
    expect((await post(cookie, file, { "content-type": "text/plain" })).status).toBe(415);
    expect((await post(cookie, file, { "content-type": "application/json" })).status).toBe(415);
    expect((await post(cookie, file, { origin: "https://evil.example" })).status).toBe(403);
    expect(await counts()).toEqual(before);
  });
});
