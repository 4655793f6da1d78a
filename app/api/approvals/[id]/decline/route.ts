import { z } from "zod";
import { json, param, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { text } from "@/lib/input";
import { declineRequest } from "@/lib/leases";

const DeclineBody = z.strictObject({ comment: text().trim().min(1).max(2000) });

// POST /api/approvals/:id/decline – an approver declines a request, saying why; the invoice is not touched.
export const POST = sessionCheckedRoute(async ({ req, db, actor, params }) => {
  const body = await readBody(req, DeclineBody);
  if (!body.ok) return body;
  const approvalId = param(params, "id");
  const result = await declineRequest(db, actor, approvalId, { comment: body.value.comment });
  return result.ok ? json({ status: "declined", approval_id: approvalId.toLowerCase(), lease_id: result.leaseId }) : result;
});
