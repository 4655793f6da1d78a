// GET /api/health – the process answers. No session, no database, nothing written: a
// liveness probe restarts an instance only when this stops answering.
export const dynamic = "force-dynamic";

export function GET(): Response {
  return Response.json({ ok: true }, { headers: { "cache-control": "no-store" } });
}
