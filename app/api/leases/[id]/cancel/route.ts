import { json, param, refuseBody, sessionCheckedRoute } from "@/app/_lib/http";
import { cancelLease } from "@/app/_lib/leases";

// The session is held in the cancel's own transaction (`held`), and its end judged after the
// wait for the lease row: a sign-out waits for the cancel, and a session dead by then writes nothing.
export const POST = sessionCheckedRoute(async ({ req, held, actor, params }) => {
  const body = refuseBody(req);
  if (!body.ok) return body;
  const leaseId = param(params, "id");
  const result = await cancelLease(held, actor.id, leaseId);
  return result.ok ? json({ status: "rejected", lease_id: leaseId }) : result;
});
