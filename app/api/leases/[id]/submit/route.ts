import { z } from "zod";
import { json, param, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { submitLease } from "@/lib/leases";

// As apply's: the lines ticked (categorize_lines), or none for the whole proposal.
const SubmitBody = z.strictObject({ lines: z.array(z.string().max(100)).max(1000).optional() });

// POST /api/leases/:id/submit – under a four_eyes policy the lease's actor submits its proposal for
// approval (docs/decisions/0078). The session is held in the submit's own transaction.
export const POST = sessionCheckedRoute(async ({ req, db, actor, params }) => {
  const leaseId = param(params, "id");
  const body = await readBody(req, SubmitBody);
  if (!body.ok) return body;
  const result = await submitLease(db, actor, leaseId, { accept: body.value.lines });
  return result.ok ? json({ status: "pending", approval_id: result.request.id, ...result.request }) : result;
});
