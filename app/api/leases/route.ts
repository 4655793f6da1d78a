import { z } from "zod";
import { appEnv } from "@/lib/env";
import { json, problem, readBody, sessionCheckedRoute } from "@/lib/http";
import { text } from "@/lib/input";
import { openLease } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";

// Types only: the actor comes from the session, and any actor field in the body is dropped.
const OpenLease = z.object({ invoice_id: text().max(200), purpose: text().max(200) });

// The session is checked (and held, FOR SHARE) in openLease's own transaction.
export const POST = sessionCheckedRoute(async ({ req, db, actor, notSignedIn, unlessSignedOut }) => {
  const body = await readBody(req, OpenLease);
  if (!body.ok) return unlessSignedOut(problem(body.code));
  const input = {
    actorId: actor.id,
    sessionId: actor.sessionId,
    invoiceId: body.value.invoice_id,
    purpose: body.value.purpose,
    ttlSeconds: appEnv().leaseTtlSeconds,
  };
  const result = await openLease(db, input, inngestDispatch);
  if (!result.ok) return result.code === "not_signed_in" ? notSignedIn() : unlessSignedOut(problem(result.code));
  const { lease } = result;
  return json(
    { lease_id: lease.id, deadline_at: lease.deadlineAt.toISOString(), status: lease.status },
    result.created ? 201 : 200,
  );
});
