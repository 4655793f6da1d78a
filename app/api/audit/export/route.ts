// GET /api/audit/export?from=YYYY-MM-DD&to=YYYY-MM-DD&format=csv|json – an admin's export of the
// organization's audit trail for the UTC days [from, to), streamed, with the chain's hashes so it
// checks offline; recorded first, as an entry of the chain itself (docs/decisions/0080).
import { authedRoute } from "@/app/_lib/http";
import { exportQueryOf, exportStream, startExport } from "@/lib/audit/export";

export const GET = authedRoute(async ({ req, db, actor }) => {
  const query = exportQueryOf(new URL(req.url).searchParams);
  if (!query.success) return "invalid_request";
  const result = await startExport(db, actor, query.data);
  if (!result.ok) return result;
  const { from, to, format } = query.data;
  return new Response(exportStream(db, actor, query.data, result.started), {
    headers: {
      "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/json",
      "content-disposition": `attachment; filename="audit-${from}-${to}.${format}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
});
