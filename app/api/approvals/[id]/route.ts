import { authedRoute, json, param } from "@/app/_lib/http";
import { approvalDetail } from "@/lib/approvals/queue";

// GET /api/approvals/:id – one request, for its requester and those who may approve it, with its
// status and, while it waits, what approving would change (the proposal against the invoice now).
export const GET = authedRoute(async ({ db, actor, params }) => {
  const detail = await approvalDetail(db, actor, param(params, "id"));
  return detail ? json(detail) : "approval_not_found";
});
