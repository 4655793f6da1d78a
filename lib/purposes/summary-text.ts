// The deterministic summary text of the local model (summarize_invoice's `local`): only the
// invoice's own data, same invoice in, same text out. Pure; exported for tests and previews.
import { lineAmountCents } from "@/lib/model/internal";
import { SUMMARY_MAX_CHARS, type InvoiceForModel } from "@/lib/model/types";

const TOP_LINES = 3;

/** The deterministic summary of the invoice alone. */
export function summarizeInvoice(invoice: InvoiceForModel): string {
  const money = moneyFormatter(invoice.currency);
  const number = clean(invoice.number, 40) || "(no number)";
  const counterparty = clean(invoice.counterparty, 100) || "an unnamed counterparty";

  const parts: string[] = [];
  // Dates stay ISO (2026-11-18) in the text: it is stored on the invoice for every later
  // reader, whatever their locale, and the pages show each ISO date in the reader's format
  // (app/_lib/format.ts localizeDates). The one date format is the page's job, not the text's.
  parts.push(
    `Invoice ${number} from ${counterparty} for ${money(invoice.totalCents)}, ` +
      `issued ${clean(invoice.issuedOn, 20)}, due ${clean(invoice.dueOn, 20)}${paymentTerm(invoice)}.`,
  );

  const lines = invoice.lines.map((line, index) => ({ line, index, amount: lineAmountCents(line) }));
  if (lines.length === 0) {
    parts.push("No line items.");
  } else {
    const shown = [...lines]
      .sort((a, b) => Math.abs(b.amount) - Math.abs(a.amount) || a.index - b.index)
      .slice(0, TOP_LINES)
      .map(
        ({ line, amount }) =>
          `${clean(line.description, 60) || "(no description)"} ` +
          `(${formatQuantity(line.quantity)} × ${money(line.unitPriceCents)} = ${money(amount)})`,
      );
    const count = lines.length === 1 ? "1 line" : `${lines.length} lines`;
    const lead = lines.length > TOP_LINES ? `${count}; largest: ` : `${count}: `;
    parts.push(`${lead}${shown.join(", ")}.`);

    const sum = lines.reduce((acc, l) => acc + l.amount, 0);
    const diff = invoice.totalCents - sum;
    if (diff === 0) {
      parts.push("Lines add up to the total.");
    } else {
      const direction = diff > 0 ? "below" : "above";
      parts.push(`Lines sum to ${money(sum)}, ${money(Math.abs(diff))} ${direction} the invoiced total.`);
    }
  }

  const summary = parts.join(" ");
  return summary.length <= SUMMARY_MAX_CHARS ? summary : `${summary.slice(0, SUMMARY_MAX_CHARS - 1)}…`;
}

/** " (30 days after issue)", or a warning when the dates are odd; "" when unparseable. */
function paymentTerm(invoice: InvoiceForModel): string {
  const issued = parseIsoDate(invoice.issuedOn);
  const due = parseIsoDate(invoice.dueOn);
  if (issued === undefined || due === undefined) return "";
  const days = Math.round((due - issued) / 86_400_000);
  if (days === 0) return " (due on issue)";
  if (days < 0) return ` (${-days} ${-days === 1 ? "day" : "days"} before the issue date — check the dates)`;
  return ` (${days} ${days === 1 ? "day" : "days"} after issue)`;
}

function parseIsoDate(value: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  const [, y, m, d] = match;
  const ms = Date.UTC(Number(y), Number(m) - 1, Number(d));
  return Number.isNaN(ms) ? undefined : ms;
}

const formatters = new Map<string, (cents: number) => string>();

/**
 * en-US currency formatting with the symbol where one exists ("€12,345.00", "$10.00",
 * "CHF 1,000.00"), always two decimals because amounts are stored in cents. A currency code
 * Intl rejects falls back to "XYZ 12,345.00".
 */
export function moneyFormatter(currency: string): (cents: number) => string {
  const code = currency.trim().toUpperCase();
  let format = formatters.get(code);
  if (format) return format;
  try {
    const nf = new Intl.NumberFormat("en-US", {
      style: "currency",
      currency: code,
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
    });
    format = (cents) => nf.format(cents / 100);
  } catch {
    const nf = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    const label = clean(code, 10) || "(no currency)";
    format = (cents) => `${label} ${nf.format(cents / 100)}`;
  }
  formatters.set(code, format);
  return format;
}

const quantityFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 3 });
function formatQuantity(quantity: number): string {
  return quantityFormat.format(quantity);
}

/** One line of plain text: control characters and runs of whitespace become one space. */
function clean(text: string, max: number): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}
