import { authedRoute, json, param, readBody, refuseBody } from "@/app/_lib/http";
import { removeMember } from "@/app/_lib/leases";
import { memberJson } from "@/app/_lib/members-json";
import { changeRole, RoleInput } from "@/lib/members";

// PATCH /api/org/members/:id – an admin changes a member's role (never the last admin's away).
export const PATCH = authedRoute(async ({ req, db, actor, params }) => {
  const body = await readBody(req, RoleInput);
  if (!body.ok) return body;
  const result = await changeRole(db, actor, param(params, "id"), body.value.role);
  if (!result.ok) return result;
  return json(memberJson(result.member));
});

// DELETE /api/org/members/:id – an admin removes a member: their sessions end, their leases in flight close.
export const DELETE = authedRoute(async ({ req, db, actor, params }) => {
  const body = refuseBody(req);
  if (!body.ok) return body;
  const id = param(params, "id");
  const result = await removeMember(db, actor, id);
  if (!result.ok) return result;
  return json({ id, status: "removed", revoked: result.revoked });
});
