import { authedRoute, json, readBody } from "@/app/_lib/http";
import { createdInvitationJson, linkOrigin, pendingInvitationJson } from "@/app/_lib/members-json";
import { createInvitation, InvitationInput, listInvitations } from "@/lib/members";

// POST /api/org/invitations – an admin invites someone by email with a role; the link is shown this once.
export const POST = authedRoute(async ({ req, db, actor }) => {
  const body = await readBody(req, InvitationInput);
  if (!body.ok) return body;
  const result = await createInvitation(db, actor, body.value, linkOrigin(req.headers, req.url));
  if (!result.ok) return result;
  return json(createdInvitationJson(result.invitation), 201);
});

// GET /api/org/invitations – an admin's view of the organization's pending invitations (no tokens).
export const GET = authedRoute(async ({ db, actor }) => {
  const result = await listInvitations(db, actor);
  if (!result.ok) return result;
  return json(result.invitations.map(pendingInvitationJson));
});
