import { z } from "zod";
import { appEnv } from "@/lib/env";
import { authedRoute, json, problem, readBody } from "@/lib/http";
import { text } from "@/lib/input";
import { openLease } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";

// Types only: the actor comes from the session, and any actor field in the body is dropped.
const OpenLease = z.object({ invoice_id: text().max(200), purpose: text().max(200) });

export const POST = authedRoute(async ({ req, db, actor }) => {
  const body = await readBody(req, OpenLease);
  if (!body.ok) return problem(body.code);
  const input = {
    actorId: actor.id,
    sessionId: actor.sessionId,
    invoiceId: body.value.invoice_id,
    purpose: body.value.purpose,
    ttlSeconds: appEnv().leaseTtlSeconds,
  };
  const result = await openLease(db, input, inngestDispatch);
  if (!result.ok) return problem(result.code);
  const { lease } = result;
  return json(
    { lease_id: lease.id, deadline_at: lease.deadlineAt.toISOString(), status: lease.status },
    result.created ? 201 : 200,
  );
});
