import { authedRoute, json, param, problem } from "@/lib/http";
import { applyLease } from "@/lib/leases";

export const POST = authedRoute(async ({ db, actor, params }) => {
  const leaseId = param(params, "id");
  const result = await applyLease(db, actor.id, leaseId);
  return result.ok ? json({ status: "applied", lease_id: leaseId }) : problem(result.code);
});
