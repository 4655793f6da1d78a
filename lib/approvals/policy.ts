import "server-only";
// An organization's approval policy per purpose (docs/decisions/0078): `self` (the default, and
// what no row means) or `four_eyes`, with a review window in hours on the database clock. An
// admin sets it (PUT /api/org/policies/:purpose), judged by the statement that writes. A policy
// governs every apply and submit that reads it after its commit; requests already waiting end
// only in their own ways.
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { rowsOf, type Db } from "@/db/client";
import { approvalPolicy } from "@/db/schema";
import { memberMay, memberOf, type Member } from "@/lib/access";
import { APPLY_POLICIES, REVIEW_HOURS, type ApplyPolicy } from "@/lib/lease-codes";
import { PURPOSES, isPurpose, type Purpose } from "@/lib/purposes";

/** PUT /api/org/policies/:purpose's body: both fields, nothing else. */
export const PolicyInput = z.strictObject({
  apply: z.enum(APPLY_POLICIES),
  review_hours: z.number().int().min(REVIEW_HOURS.min).max(REVIEW_HOURS.max),
});

export type Policy = { purpose: Purpose; apply: ApplyPolicy; review_hours: number };

/** Every purpose's policy in the member's organization (`self`, 24 h where none was set). */
export async function readPolicies(db: Db, member: Member): Promise<Policy[]> {
  const rows = await db
    .select({ purpose: approvalPolicy.purpose, apply: approvalPolicy.apply, review_hours: approvalPolicy.reviewHours })
    .from(approvalPolicy)
    .where(and(eq(approvalPolicy.orgId, member.orgId), memberOf(approvalPolicy.orgId, member.id)));
  const byPurpose = new Map(rows.map((r) => [r.purpose, r]));
  return PURPOSES.map((purpose) => {
    const row = byPurpose.get(purpose);
    return { purpose, apply: row?.apply ?? "self", review_hours: row?.review_hours ?? REVIEW_HOURS.default };
  });
}

/** Sets one purpose's policy in the admin's organization: an upsert that writes nothing unless the member is its admin now. */
export async function writePolicy(
  db: Db,
  member: Member,
  purpose: unknown,
  input: z.output<typeof PolicyInput>,
): Promise<{ ok: true; policy: Policy } | { ok: false; code: "forbidden" | "purpose_not_allowed" }> {
  if (!isPurpose(purpose)) return { ok: false, code: "purpose_not_allowed" };
  const result = await db.execute(sql`
    insert into approval_policy (org_id, purpose, apply, review_hours, updated_by, updated_at)
    select ${member.orgId}::uuid, ${purpose}, ${input.apply}, ${input.review_hours}::integer, ${member.id}::uuid, now()
    where ${memberMay(member.orgId, member.id, "set_policy")}
    on conflict (org_id, purpose) do update set apply = excluded.apply, review_hours = excluded.review_hours,
      updated_by = excluded.updated_by, updated_at = excluded.updated_at
    returning purpose, apply, review_hours`);
  const [row] = rowsOf<Policy>(result);
  return row ? { ok: true, policy: { ...row, review_hours: Number(row.review_hours) } } : { ok: false, code: "forbidden" };
}
