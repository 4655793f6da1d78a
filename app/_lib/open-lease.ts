import "server-only";
// Opening a lease as the web layer does it, for the API route and the Summarize action alike:
// the actor and session from the request's session (never from the body), the lease's time
// from the environment, and Inngest as the dispatch.
import type { Db } from "@/db/client";
import { appEnv } from "@/lib/env";
import { openLease, type OpenResult } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";

export async function openLeaseAs(
  db: Db,
  actor: { id: string; sessionId: string | null },
  request: { invoiceId: unknown; purpose: unknown },
): Promise<OpenResult> {
  const input = {
    actorId: actor.id,
    sessionId: actor.sessionId,
    invoiceId: request.invoiceId,
    purpose: request.purpose,
    ttlSeconds: appEnv().leaseTtlSeconds,
  };
  return openLease(db, input, inngestDispatch);
}
