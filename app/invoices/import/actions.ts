"use server";
// "Import CSV" without JavaScript: the file (or pasted text) is checked and previewed, then
// imported on Confirm. The preview carries the file back in the page as base64 (exact bytes:
// a form field's newlines would be rewritten as CRLF), and Confirm checks it all again, so what
// the preview showed is never trusted. The same parser and the same transaction as the API
// (lib/invoice-import.ts, importInvoices).
import { z } from "zod";
import { formOf } from "@/lib/input";
import { importInvoices, takenNumbers } from "@/lib/invoice-create";
import { BodyTooLarge, MAX_IMPORT_BYTES, parseInvoiceCsv, type RowError } from "@/lib/invoice-import";
import { stateAction } from "@/app/_lib/action";
import { rowErrorWords } from "@/app/_lib/invoice-words";

export type ImportState =
  | { stage: "start"; message: string | null }
  | {
      stage: "preview";
      /** The file, for Confirm. */
      file: string;
      /** How many invoices Confirm would create, and the first of them. */
      creating: number;
      create: { number: string; counterparty: string; lines: number }[];
      skip: string[];
      rows: number;
    }
  | { stage: "refused"; errors: string[]; truncated: boolean }
  | { stage: "done"; created: number; skipped: number };

const ImportForm = formOf(
  z.object({
    intent: z.enum(["preview", "confirm"]),
    file: z.instanceof(File).optional(),
    csv: z.string().max(MAX_IMPORT_BYTES).optional(),
    confirmed_file: z
      .string()
      .max(Math.ceil(MAX_IMPORT_BYTES / 3) * 4 + 4)
      .optional(),
  }),
);

/** The preview lists this many invoices; the counts cover them all. */
const PREVIEW_LIST = 50;

async function* bytesOf(data: Uint8Array) {
  yield data;
}

async function readUpload(form: z.infer<typeof ImportForm>): Promise<Uint8Array | "too_large" | "empty"> {
  if (form.intent === "confirm") return form.confirmed_file ? Buffer.from(form.confirmed_file, "base64") : "empty";
  if (form.file && form.file.size > 0) {
    if (form.file.size > MAX_IMPORT_BYTES) return "too_large";
    return new Uint8Array(await form.file.arrayBuffer());
  }
  const pasted = form.csv?.trim() ? new TextEncoder().encode(form.csv) : null;
  if (!pasted) return "empty";
  return pasted.byteLength > MAX_IMPORT_BYTES ? "too_large" : pasted;
}

const refused = (errors: RowError[], truncated: boolean): ImportState => ({
  stage: "refused",
  errors: errors.map(rowErrorWords),
  truncated,
});

export const importAction = stateAction({
  who: "actor",
  input: ImportForm,
  invalid: async (): Promise<ImportState> => ({ stage: "start", message: "Choose a CSV file, or paste its text, then Preview." }),
  run: async (form, { actor, db }): Promise<ImportState> => {
    const data = await readUpload(form);
    if (data === "empty") return { stage: "start", message: "Choose a CSV file, or paste its text, then Preview." };
    if (data === "too_large") return { stage: "start", message: "The file is larger than 8 MB. Split it into smaller files." };
    let parsed;
    try {
      parsed = await parseInvoiceCsv(bytesOf(data));
    } catch (error) {
      if (error instanceof BodyTooLarge) return { stage: "start", message: "The file is larger than 8 MB. Split it into smaller files." };
      throw error;
    }
    if (!parsed.ok) return refused(parsed.errors, parsed.truncated);
    if (form.intent === "confirm") {
      const outcome = await importInvoices(db, actor, parsed.invoices);
      if (!outcome) return { stage: "start", message: "You may no longer import invoices in this organization." };
      return { stage: "done", ...outcome };
    }
    const taken = await takenNumbers(
      db,
      actor,
      parsed.invoices.map((i) => i.number),
    );
    return {
      stage: "preview",
      file: Buffer.from(data).toString("base64"),
      creating: parsed.invoices.length - taken.size,
      create: parsed.invoices
        .filter((i) => !taken.has(i.number))
        .slice(0, PREVIEW_LIST)
        .map((i) => ({ number: i.number, counterparty: i.counterparty, lines: i.lines.length })),
      skip: [...taken],
      rows: parsed.rows,
    };
  },
});
