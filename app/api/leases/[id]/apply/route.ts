import { json, param, refuseBody, sessionCheckedRoute } from "@/app/_lib/http";
import { applyLease } from "@/lib/leases";

// The session is checked (and held, FOR SHARE) in the apply's own transaction, before anything is written.
export const POST = sessionCheckedRoute(async ({ req, db, actor, params }) => {
  const body = refuseBody(req);
  if (!body.ok) return body;
  const leaseId = param(params, "id");
  const result = await applyLease(db, actor.id, leaseId, { sessionId: actor.sessionId });
  return result.ok ? json({ status: "applied", lease_id: leaseId }) : result;
});
