import { authedRoute, json } from "@/app/_lib/http";
import { may } from "@/lib/access";
import { approvalQueue } from "@/lib/approvals/queue";

// GET /api/approvals – the approver's queue: the organization's requests waiting for a decision
// that someone else submitted. 403 for a role that does not approve (the statement says so too).
export const GET = authedRoute(async ({ db, actor }) => {
  if (!may(actor, "approve")) return "forbidden";
  return json(await approvalQueue(db, actor));
});
