// What a finance user reads when a new invoice or an import is refused, keyed by code: the
// form's fields and the CSV's columns and row errors (lib/invoice-import.ts ROW_ERROR_CODES).
import type { CsvColumn, RowError, RowErrorCode } from "@/lib/invoice-import";

export const COLUMN_WORDS: Record<CsvColumn, string> = {
  number: "invoice number",
  counterparty: "counterparty",
  currency: "currency",
  issued_on: "issue date",
  due_on: "due date",
  line_description: "line description",
  quantity: "quantity",
  unit_price_cents: "unit price",
};

export const ROW_ERROR_WORDS: Record<RowErrorCode, string> = {
  missing_header: `the first row must name the columns: ${"number,counterparty,currency,issued_on,due_on,line_description,quantity,unit_price_cents"}`,
  wrong_header:
    "the column names are not the expected ones, in this order: number, counterparty, currency, issued_on, due_on, line_description, quantity, unit_price_cents",
  wrong_column_count: "this row does not have the 8 columns",
  malformed: "a quoted value is not closed or is followed by other text, so the rest of the file cannot be read",
  row_too_long: "this row is too long to be an invoice line",
  too_many_rows: "the file has more than 10,000 rows; split it into smaller files",
  no_rows: "the file has no invoice rows under its header",
  required: "missing",
  too_long: "too long",
  invalid_text: "contains characters that cannot be stored",
  not_a_currency: "not a currency code like EUR or USD",
  not_a_date: "not a date like 2026-12-31",
  date_out_of_range: "a date outside 1900–2199",
  due_before_issue: "before the issue date",
  not_a_whole_number: "not a whole number",
  out_of_range: "out of range (whole numbers from 0, or from 1 for a quantity)",
  differs_from_earlier_row: "differs from an earlier row of the same invoice number",
  too_many_lines: "this invoice has more than 200 lines",
  total_too_large: "makes the invoice's total too large",
};

/** "Row 4, due date: not a date like 2026-12-31". */
export function rowErrorWords(error: RowError): string {
  const what = ROW_ERROR_WORDS[error.code];
  return error.column ? `Row ${error.row}, ${COLUMN_WORDS[error.column]}: ${what}` : `Row ${error.row}: ${what}`;
}

/** The new-invoice form's words beside a field, by the field the API names (`lines.0.quantity` → its row). */
export const FIELD_WORDS: Record<string, string> = {
  number: "Enter an invoice number (up to 64 characters).",
  counterparty: "Enter who the invoice is for (up to 200 characters).",
  currency: "Enter a currency code like EUR or USD.",
  issued_on: "Enter the issue date, between 1900 and 2199.",
  due_on: "Enter a due date on or after the issue date.",
  lines: "Enter at least one line (at most 200); the total must stay below 21,474,836.47.",
  description: "Describe the line (up to 200 characters).",
  quantity: "Enter a whole number of at least 1.",
  unit_price: "Enter a price like 120.50.",
};

export const CREATE_REFUSAL_WORDS = {
  invoice_number_taken: "Another invoice of your organization already has this number.",
  forbidden: "Only an admin may create an invoice for someone else.",
  invalid_request: "Some fields need your attention.",
} as const;
