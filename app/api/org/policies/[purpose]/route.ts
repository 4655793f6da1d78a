import { authedRoute, json, param, readBody } from "@/app/_lib/http";
import { PolicyInput, writePolicy } from "@/lib/approvals/policy";

// PUT /api/org/policies/:purpose – an admin sets how the purpose's proposals are applied: `self`
// (the owner applies) or `four_eyes` (another member approves), with the review window in hours.
export const PUT = authedRoute(async ({ req, db, actor, params }) => {
  const body = await readBody(req, PolicyInput);
  if (!body.ok) return body;
  const result = await writePolicy(db, actor, param(params, "purpose"), body.value);
  return result.ok ? json(result.policy) : result;
});
