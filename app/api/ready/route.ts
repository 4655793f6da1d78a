// GET /api/ready – the database and the Inngest server answer (lib/readiness.ts): 200
// {ok:true}, else 503 {ok:false, failed:[…]} naming which, and only that (why goes to the log).
// No session, nothing written: a balancer sends traffic to an instance only while it is ready.
import { getDb } from "@/db/client";
import { log } from "@/lib/log";
import { checkReadiness, inngestServerUrl } from "@/lib/readiness";

export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const { readiness, why } = await checkReadiness({ db: getDb, inngestUrl: inngestServerUrl() });
  if (!readiness.ok) log.warn("not ready", { failed: readiness.failed, why });
  return Response.json(readiness, { status: readiness.ok ? 200 : 503, headers: { "cache-control": "no-store" } });
}
