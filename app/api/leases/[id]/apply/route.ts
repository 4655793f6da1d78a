import { json, param, problem, refuseBody, sessionCheckedRoute } from "@/app/_lib/http";
import { applyLease } from "@/lib/leases";

// The session is checked (and held, FOR SHARE) in the apply's own transaction, before anything is written.
export const POST = sessionCheckedRoute(async ({ req, db, actor, params, notSignedIn, unlessSignedOut }) => {
  const body = refuseBody(req);
  if (!body.ok) return unlessSignedOut(problem(body.code));
  const leaseId = param(params, "id");
  const result = await applyLease(db, actor.id, leaseId, { sessionId: actor.sessionId });
  if (result.ok) return json({ status: "applied", lease_id: leaseId });
  if (result.code === "not_signed_in") return notSignedIn();
  return unlessSignedOut(problem(result.code));
});
