// CSV out, for spreadsheets: csv-stringify quotes a cell that holds a comma, a quote or a line
// break (doubling its quotes), and defuses formula injection (a text cell starting with = + - @,
// a tab or a carriage return, or their full-width forms, gets a leading '), so a counterparty
// named "=HYPERLINK(...)" stays text when the file is opened. Numbers are never prefixed: a
// negative amount stays a number. CRLF line ends (RFC 4180) and a byte-order mark, so Excel
// reads the file as UTF-8.
import { stringify } from "csv-stringify/sync";

export type CsvCell = string | number | null;

export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return stringify([header as CsvCell[], ...(rows as CsvCell[][])], {
    bom: true,
    record_delimiter: "windows",
    // With a record delimiter of its own, csv-stringify quotes only cells holding it (\r\n): a
    // lone \n or \r must be quoted too, or a reader splits the record there.
    quote_record_delimiter: true,
    escape_formulas: true,
    // Amounts arrive as numbers of cents' worth: written with two decimals, never in exponent form.
    cast: { number: (value) => value.toFixed(2) },
  });
}
