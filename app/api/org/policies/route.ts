import { authedRoute, json } from "@/app/_lib/http";
import { readPolicies } from "@/lib/approvals/policy";

// GET /api/org/policies – every purpose's approval policy in the organization, for any member.
export const GET = authedRoute(async ({ db, actor }) => json(await readPolicies(db, actor)));
