import { authedRoute, json, param, problem } from "@/lib/http";
import { cancelLease } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";

export const POST = authedRoute(async ({ db, actor, params }) => {
  const leaseId = param(params, "id");
  const result = await cancelLease(db, actor.id, leaseId, inngestDispatch);
  return result.ok ? json({ status: "rejected", lease_id: leaseId }) : problem(result.code);
});
