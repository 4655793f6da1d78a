import { authedRoute, json, param, problem, refuseBody } from "@/app/_lib/http";
import { cancelLease } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";

export const POST = authedRoute(async ({ req, db, actor, params }) => {
  const body = refuseBody(req);
  if (!body.ok) return problem(body.code);
  const leaseId = param(params, "id");
  const result = await cancelLease(db, actor.id, leaseId, inngestDispatch);
  return result.ok ? json({ status: "rejected", lease_id: leaseId }) : problem(result.code);
});
