// GET /api/invoices/export – the rows the list shows for the same query string, as a CSV download.
import { authedRoute } from "@/app/_lib/http";
import { STATUS_WORDS, shownStatus } from "@/app/_lib/status-words";
import { toCsv } from "@/lib/csv";
import { listInvoicesWithState, listQueryOf } from "@/lib/invoice-list";

const HEADER = ["Number", "Counterparty", "Owner", "Currency", "Amount", "Issued on", "Due on", "Status", "Paid on"] as const;

export const GET = authedRoute(async ({ req, db, actor }) => {
  const { rows, today } = await listInvoicesWithState(db, actor, listQueryOf(new URL(req.url).searchParams));
  const csv = toCsv(
    HEADER,
    rows.map((r) => [
      r.number,
      r.counterparty,
      r.ownerName,
      r.currency,
      r.totalCents / 100,
      r.issuedOn,
      r.dueOn,
      STATUS_WORDS[shownStatus(r)],
      r.paidOn,
    ]),
  );
  return new Response(csv, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="invoices-${today}.csv"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
});
