"use server";
// The "New invoice" form's action: the form read into the API's own schema (NewInvoice), one
// domain call (createInvoice), then the invoice's page; a refusal re-renders the form with what
// was typed and words beside each field at fault. "Add more lines" re-renders it with more rows,
// so it works as a plain form post with JavaScript off.
import { redirect, RedirectType } from "next/navigation";
import { z } from "zod";
import { formOf } from "@/lib/input";
import { createInvoice, MAX_LINES, NewInvoice } from "@/lib/invoice-create";
import { stateAction } from "@/app/_lib/action";
import { CREATE_REFUSAL_WORDS, FIELD_WORDS } from "@/app/_lib/invoice-words";

// Line rows shown at first, and added by each "Add more lines".
const LINE_ROWS = 5;

export type NewInvoiceState = {
  message: string | null;
  /** Words beside each field, by its form name (`line_2_quantity`). */
  errors: Record<string, string>;
  values: Record<string, string>;
  lineRows: number;
};

// Every field is text up to a bound; what it means is NewInvoice's to say.
const NewInvoiceForm = formOf(z.record(z.string().max(100), z.string().max(1000)));

const MONEY = /^\d{1,8}(?:[.,]\d{1,2})?$/;
/** "120.5" → 12050 cents; null when it is no amount. */
function cents(value: string): number | null {
  const v = value.trim();
  if (!MONEY.test(v)) return null;
  const [whole, fraction = ""] = v.split(/[.,]/);
  return Number(whole) * 100 + Number(fraction.padEnd(2, "0"));
}

const lineRowsOf = (values: Record<string, string>) =>
  Math.min(MAX_LINES, Math.max(LINE_ROWS, Number.parseInt(values.line_rows ?? "", 10) || LINE_ROWS));

export const newInvoiceAction = stateAction({
  who: "actor",
  input: NewInvoiceForm,
  invalid: async (): Promise<NewInvoiceState> => ({
    message: CREATE_REFUSAL_WORDS.invalid_request,
    errors: {},
    values: {},
    lineRows: LINE_ROWS,
  }),
  run: async (values, { actor, db }): Promise<NewInvoiceState> => {
    const lineRows = lineRowsOf(values);
    if (values.intent === "more_lines") return { message: null, errors: {}, values, lineRows: Math.min(MAX_LINES, lineRows + LINE_ROWS) };

    // The rows with anything typed in them are the lines; a price is typed as money, stored in cents.
    const errors: Record<string, string> = {};
    const typed = Array.from({ length: lineRows }, (_, i) => i).filter((i) =>
      ["description", "quantity", "unit_price"].some((f) => (values[`line_${i}_${f}`] ?? "").trim() !== ""),
    );
    const lines = typed.map((i) => {
      const price = cents(values[`line_${i}_unit_price`] ?? "");
      if (price === null) errors[`line_${i}_unit_price`] = FIELD_WORDS.unit_price!;
      const quantity = (values[`line_${i}_quantity`] ?? "").trim();
      return {
        description: values[`line_${i}_description`] ?? "",
        quantity: /^\d+$/.test(quantity) ? Number(quantity) : Number.NaN,
        unit_price_cents: price ?? 0,
      };
    });
    const input = {
      number: values.number ?? "",
      counterparty: values.counterparty ?? "",
      currency: (values.currency ?? "").trim().toUpperCase(),
      issued_on: values.issued_on ?? "",
      due_on: values.due_on ?? "",
      lines,
    };
    // Every field at fault at once, not only the first.
    const parsed = NewInvoice.safeParse(input);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const [head, index, field] = issue.path.map(String);
        if (head === "lines" && index !== undefined && field) {
          const name = `line_${typed[Number(index)]}_${field === "unit_price_cents" ? "unit_price" : field}`;
          errors[name] ??= FIELD_WORDS[field === "unit_price_cents" ? "unit_price" : field]!;
        } else if (head) errors[head] ??= FIELD_WORDS[head] ?? CREATE_REFUSAL_WORDS.invalid_request;
      }
    }
    if (!parsed.success || Object.keys(errors).length > 0) {
      return { message: CREATE_REFUSAL_WORDS.invalid_request, errors, values, lineRows };
    }
    const result = await createInvoice(db, actor, parsed.data);
    if (!result.ok) {
      const errors: Record<string, string> =
        result.code === "invoice_number_taken" ? { number: CREATE_REFUSAL_WORDS.invoice_number_taken } : {};
      return { message: CREATE_REFUSAL_WORDS[result.code], errors, values, lineRows };
    }
    redirect(`/invoices/${result.id}`, RedirectType.push);
  },
});
