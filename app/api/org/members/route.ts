import { authedRoute, json } from "@/app/_lib/http";
import { memberJson } from "@/app/_lib/members-json";
import { listMembers } from "@/lib/members";

// GET /api/org/members – the actor's organization's members with their roles, for any member.
export const GET = authedRoute(async ({ db, actor }) => json((await listMembers(db, actor)).map(memberJson)));
