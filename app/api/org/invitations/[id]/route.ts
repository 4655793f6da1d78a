import { authedRoute, json, param, refuseBody } from "@/app/_lib/http";
import { revokeInvitation } from "@/lib/members";

// DELETE /api/org/invitations/:id – an admin revokes a pending invitation of their organization.
export const DELETE = authedRoute(async ({ req, db, actor, params }) => {
  const body = refuseBody(req);
  if (!body.ok) return body;
  const id = param(params, "id");
  const result = await revokeInvitation(db, actor, id);
  if (!result.ok) return result;
  return json({ id, status: "revoked" });
});
