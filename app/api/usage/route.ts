import { authedRoute, json } from "@/app/_lib/http";
import { usageReport } from "@/lib/spend";

// GET /api/usage – the caller's spend this UTC day and month, per purpose; an admin's also the organization's and each member's.
export const GET = authedRoute(async ({ db, actor }) => {
  const report = await usageReport(db, actor);
  return report ? json(report) : "not_signed_in";
});
