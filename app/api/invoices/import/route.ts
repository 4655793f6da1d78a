import { isCsv, json, problem, memberWriteRoute } from "@/app/_lib/http";
import { importInvoices } from "@/lib/invoice-create";
import { BodyBroken, BodyTooLarge, limitedChunks, MAX_IMPORT_BYTES, parseInvoiceCsv } from "@/lib/invoice-import";

// POST text/csv: every row checked as the body streams in, then all the invoices written in
// one transaction, or none (docs/decisions/0065). The body's limit is this route's own.
export const POST = memberWriteRoute(async ({ req, held, member: actor }) => {
  // A declared length over the limit is refused before a byte is read.
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (!(declared <= MAX_IMPORT_BYTES)) return "payload_too_large";
  let parsed;
  try {
    parsed = await parseInvoiceCsv(limitedChunks(req.body, MAX_IMPORT_BYTES));
  } catch (error) {
    if (error instanceof BodyTooLarge) return "payload_too_large";
    if (error instanceof BodyBroken) return "invalid_request";
    throw error;
  }
  if (!parsed.ok) return problem("invalid_csv", undefined, { errors: parsed.errors, errors_truncated: parsed.truncated });
  const outcome = await importInvoices(held, actor, parsed.invoices);
  // No longer allowed to create (removed from the organization meanwhile): the wrapper answers 401 then.
  if (!outcome) return "forbidden";
  return json(outcome);
}, isCsv);
