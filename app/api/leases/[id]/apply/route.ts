import { authedRoute, json, param, problem, refuseBody } from "@/app/_lib/http";
import { applyLease } from "@/lib/leases";

export const POST = authedRoute(async ({ req, db, actor, params }) => {
  const body = refuseBody(req);
  if (!body.ok) return problem(body.code);
  const leaseId = param(params, "id");
  const result = await applyLease(db, actor.id, leaseId);
  return result.ok ? json({ status: "applied", lease_id: leaseId }) : problem(result.code);
});
