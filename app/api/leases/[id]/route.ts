import { json, param, problem, sessionCheckedRoute } from "@/app/_lib/http";
import { readLeaseForSession } from "@/lib/leases";
import { leaseJson } from "@/app/_lib/serialize";

// The session is checked in the read's own statement (one transaction per read).
export const GET = sessionCheckedRoute(async ({ db, actor, params, notSignedIn, unlessSignedOut }) => {
  const lease = await readLeaseForSession(db, { actorId: actor.id, sessionId: actor.sessionId }, param(params, "id"));
  if (lease === "signed_out") return notSignedIn();
  return lease ? json(leaseJson(lease)) : unlessSignedOut(problem("lease_not_found"));
});
