import { json, param, sessionCheckedRoute } from "@/app/_lib/http";
import { readReceiptForSession } from "@/lib/leases";

// GET /api/leases/:id/receipt – the write's receipt (docs/decisions/0079): for the lease's actor,
// the approver its request names and the organization's admins; anyone else 404 lease_not_found
// as on every lease route; 404 receipt_not_found for a lease that wrote nothing. One statement,
// the session judged in it.
export const GET = sessionCheckedRoute(async ({ db, actor, params }) => {
  const receipt = await readReceiptForSession(db, { actorId: actor.id, sessionId: actor.sessionId }, param(params, "id"));
  if (receipt === "signed_out") return "not_signed_in";
  return typeof receipt === "string" ? receipt : json(receipt);
});
