import { authedRoute, json, readBody } from "@/app/_lib/http";
import { BudgetInput, readBudget, writeBudget } from "@/lib/spend";

// GET /api/org/budget – the organization's spending caps (null: no cap), for any member.
export const GET = authedRoute(async ({ db, actor }) => json(await readBudget(db, actor)));

// PUT /api/org/budget – an admin sets all four caps (whole cents >= 0, or null); 403 for anyone else.
export const PUT = authedRoute(async ({ req, db, actor }) => {
  const body = await readBody(req, BudgetInput);
  if (!body.ok) return body;
  const result = await writeBudget(db, actor, body.value);
  if (!result.ok) return result;
  return json(result.budget);
});
