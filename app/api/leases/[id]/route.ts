import { authedRoute, json, param, problem } from "@/app/_lib/http";
import { readLease } from "@/lib/leases";
import { leaseJson } from "@/app/_lib/serialize";

export const GET = authedRoute(async ({ db, actor, params }) => {
  const lease = await readLease(db, actor.id, param(params, "id"));
  return lease ? json(leaseJson(lease)) : problem("lease_not_found");
});
