import "server-only";
// A CSV import read as it streams in (csv-parse over the body's chunks), in bounded memory: the
// body is never held whole, the parser holds at most its stream buffer of records, and what is
// kept is the validated rows (at most MAX_IMPORT_ROWS of at most MAX_RECORD_CHARS each). Every
// row is checked before anything is written; one bad row and nothing is (docs/decisions/0065).
import { Readable } from "node:stream";
import { parse, CsvError } from "csv-parse";
import type { z } from "zod";
import { invoiceField, lineField, MAX_LINES, totalOf, type NewLine } from "./invoice-create";
import { INT4_MAX } from "./input";

export const CSV_COLUMNS = [
  "number",
  "counterparty",
  "currency",
  "issued_on",
  "due_on",
  "line_description",
  "quantity",
  "unit_price_cents",
] as const;
export type CsvColumn = (typeof CSV_COLUMNS)[number];

export const MAX_IMPORT_ROWS = 10_000;
/** The longest row the parser buffers, in characters (all eight fields at their longest fit well within). */
export const MAX_RECORD_CHARS = 800;
/** The body's limit: 10,001 rows (header included) of 800 bytes, rounded up to 8 MiB. */
export const MAX_IMPORT_BYTES = 8 * 1024 * 1024;
/** Row errors reported; the answer says when there were more (`errors_truncated`). */
export const MAX_REPORTED_ERRORS = 100;

/** What is wrong with a row, by column (null: the row as a whole). */
export const ROW_ERROR_CODES = [
  "missing_header",
  "wrong_header",
  "wrong_column_count",
  "malformed",
  "row_too_long",
  "too_many_rows",
  "no_rows",
  "required",
  "too_long",
  "invalid_text",
  "not_a_currency",
  "not_a_date",
  "date_out_of_range",
  "due_before_issue",
  "not_a_whole_number",
  "out_of_range",
  "differs_from_earlier_row",
  "too_many_lines",
  "total_too_large",
] as const;
export type RowErrorCode = (typeof ROW_ERROR_CODES)[number];
export type RowError = { row: number; column: CsvColumn | null; code: RowErrorCode };

export type ImportRow = {
  number: string;
  counterparty: string;
  currency: string;
  issued_on: string;
  due_on: string;
  lines: NewLine[];
  /** The spreadsheet row of the invoice's first line. */
  row: number;
};

export type ParseResult =
  | { ok: true; invoices: ImportRow[]; rows: number; peakBufferedRecords: number }
  | { ok: false; errors: RowError[]; truncated: boolean; peakBufferedRecords: number };

/** A body past its byte limit, found while it is read: the caller answers 413. */
export class BodyTooLarge extends Error {}
/** The body's framing broke while it was read (a client gone mid-body): the caller answers 422. */
export class BodyBroken extends Error {}

/** The body's chunks, refusing once more than `limit` bytes came: the rest is not read. */
export async function* limitedChunks(body: ReadableStream<Uint8Array> | null, limit: number): AsyncGenerator<Uint8Array> {
  if (!body) return;
  const reader = body.getReader();
  let size = 0;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        throw new BodyBroken();
      }
      if (chunk.done) return;
      size += chunk.value.byteLength;
      if (size > limit) throw new BodyTooLarge();
      yield chunk.value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** A zod refusal of one field, as the code a finance user reads words for. */
function codeOf(column: CsvColumn, error: z.ZodError, raw: string): RowErrorCode {
  const issue = error.issues[0]!;
  if (raw.trim() === "") return "required";
  if (column === "currency") return "not_a_currency";
  if (column === "issued_on" || column === "due_on") return issue.code === "invalid_format" ? "not_a_date" : "date_out_of_range";
  if (issue.code === "too_big") return "too_long";
  if (issue.code === "too_small") return "required";
  return "invalid_text";
}

const WHOLE = /^\d{1,10}$/;

/** A whole number in the column's range, or the code of what it is not. */
function wholeNumber(raw: string, min: number): number | RowErrorCode {
  const value = raw.trim();
  if (value === "") return "required";
  if (!WHOLE.test(value)) return /^-?\d+$/.test(value) ? "out_of_range" : "not_a_whole_number";
  const n = Number(value);
  return n < min || n > INT4_MAX ? "out_of_range" : n;
}

const INVOICE_COLUMNS = ["counterparty", "currency", "issued_on", "due_on"] as const;

/**
 * Reads and checks a whole CSV import. Rows are numbered as a spreadsheet shows them: the
 * header is row 1 (a quoted field's newlines stay inside its row). Every row is checked until
 * MAX_REPORTED_ERRORS errors are found (then `truncated`); reading stops at a syntax error (what
 * follows cannot be trusted to be rows) and at row MAX_IMPORT_ROWS + 2 (too many). Throws
 * BodyTooLarge or BodyBroken from `source`.
 */
export async function parseInvoiceCsv(source: AsyncIterable<Uint8Array | string>): Promise<ParseResult> {
  const parser = parse({ bom: true, relax_column_count: true, max_record_size: MAX_RECORD_CHARS, info: true });
  const input = Readable.from(source);
  let sourceError: unknown = null;
  input.on("error", (error) => {
    sourceError = error;
    parser.destroy();
  });
  input.pipe(parser);

  const errors: RowError[] = [];
  let errorCount = 0;
  const fail = (row: number, column: CsvColumn | null, code: RowErrorCode) => {
    errorCount++;
    if (errors.length < MAX_REPORTED_ERRORS) errors.push({ row, column, code });
  };
  const invoices = new Map<string, ImportRow>();
  let header = false;
  let dataRows = 0;
  let peak = 0;
  let tooMany = false;
  let syntaxError = false;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { records: number } }>) {
      peak = Math.max(peak, parser.readableLength);
      const row = info.records;
      if (!header) {
        header = true;
        const names = record.map((name) => name.trim().toLowerCase());
        if (names.length !== CSV_COLUMNS.length || names.some((name, i) => name !== CSV_COLUMNS[i])) {
          fail(row, null, names.some((name) => (CSV_COLUMNS as readonly string[]).includes(name)) ? "wrong_header" : "missing_header");
          break;
        }
        continue;
      }
      // A blank line is no row (a trailing newline, a gap a spreadsheet left).
      if (record.length === 1 && record[0]!.trim() === "") continue;
      dataRows++;
      if (dataRows > MAX_IMPORT_ROWS) {
        fail(row, null, "too_many_rows");
        tooMany = true;
        break;
      }
      checkRow(record, row, invoices, fail);
      // Past the errors reported, reading on would only count more.
      if (errorCount > MAX_REPORTED_ERRORS) break;
    }
  } catch (error) {
    if (sourceError) throw sourceError;
    if (!(error instanceof CsvError)) throw error;
    syntaxError = true;
    // The records parsed before it may not all have been read: the syntax error is reported alone.
    const row = ((error as CsvError & { records?: number }).records ?? 0) + 1;
    fail(row, null, error.code === "CSV_MAX_RECORD_SIZE" ? "row_too_long" : "malformed");
  } finally {
    if (tooMany || errorCount > 0) input.destroy();
  }
  if (sourceError) throw sourceError;
  if (!header && !syntaxError) fail(1, null, "missing_header");
  else if (errorCount === 0 && dataRows === 0) fail(2, null, "no_rows");
  if (errorCount > 0) return { ok: false, errors, truncated: errorCount > errors.length, peakBufferedRecords: peak };
  return { ok: true, invoices: [...invoices.values()], rows: dataRows, peakBufferedRecords: peak };
}

function checkRow(
  record: string[],
  row: number,
  invoices: Map<string, ImportRow>,
  fail: (row: number, column: CsvColumn | null, code: RowErrorCode) => void,
) {
  if (record.length !== CSV_COLUMNS.length) return fail(row, null, "wrong_column_count");
  const raw = Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, record[i]!])) as Record<CsvColumn, string>;
  let bad = false;
  const refuse = (column: CsvColumn, code: RowErrorCode) => {
    bad = true;
    fail(row, column, code);
  };
  const field = <T>(column: CsvColumn, schema: z.ZodType<T>, value: string): T | undefined => {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    refuse(column, codeOf(column, result.error, value));
    return undefined;
  };
  const number = field("number", invoiceField.number, raw.number);
  const counterparty = field("counterparty", invoiceField.counterparty, raw.counterparty);
  const currency = field("currency", invoiceField.currency, raw.currency.trim().toUpperCase());
  const issued_on = field("issued_on", invoiceField.issued_on, raw.issued_on.trim());
  const due_on = field("due_on", invoiceField.due_on, raw.due_on.trim());
  const description = field("line_description", lineField.description, raw.line_description);
  const quantity = wholeNumber(raw.quantity, 1);
  if (typeof quantity !== "number") refuse("quantity", quantity);
  const unitPrice = wholeNumber(raw.unit_price_cents, 0);
  if (typeof unitPrice !== "number") refuse("unit_price_cents", unitPrice);
  if (issued_on && due_on && due_on < issued_on) refuse("due_on", "due_before_issue");
  if (bad || number === undefined) return;
  const line = { description: description!, quantity: quantity as number, unit_price_cents: unitPrice as number };
  const fields = { counterparty: counterparty!, currency: currency!, issued_on: issued_on!, due_on: due_on! };
  const earlier = invoices.get(number);
  if (!earlier) {
    if (totalOf([line]) > INT4_MAX) return fail(row, "unit_price_cents", "total_too_large");
    invoices.set(number, { number, ...fields, lines: [line], row });
    return;
  }
  // The invoice's own columns, given again on each of its lines, must say the same.
  const differs = INVOICE_COLUMNS.find((c) => earlier[c] !== fields[c]);
  if (differs) return fail(row, differs, "differs_from_earlier_row");
  if (earlier.lines.length >= MAX_LINES) return fail(row, null, "too_many_lines");
  if (totalOf([...earlier.lines, line]) > INT4_MAX) return fail(row, "unit_price_cents", "total_too_large");
  earlier.lines.push(line);
}
