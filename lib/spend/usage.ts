import "server-only";
// GET /api/usage: what the caller spent this UTC day and month (database clock), per purpose;
// for an admin also the organization's and each member's. One statement; whether the caller is
// an admin is a condition of that statement (lib/access.ts), so a member demoted a moment ago
// sees only their own.
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { memberOf, type Member } from "@/lib/access";
import { rowsOf } from "@/db/client";

export type Spent = { day_cents: number; month_cents: number };
export type PurposeSpent = Spent & { purpose: string };
export type UsageReport = {
  day_start: string;
  month_start: string;
  me: Spent & { by_purpose: PurposeSpent[] };
  organization?: Spent & { by_purpose: PurposeSpent[] };
  members?: (Spent & { user_id: string; name: string })[];
};

/** Sums of cost_cents over `where`, today and this month, as one JSON object. */
const sums = (where: ReturnType<typeof sql>) => sql`(select json_build_object(
    'day_cents', coalesce(sum(u.cost_cents) filter (where u.at >= b.day0), 0),
    'month_cents', coalesce(sum(u.cost_cents), 0))
  from model_usage u where u.at >= b.month0 and ${where})`;

const byPurpose = (where: ReturnType<typeof sql>) => sql`(select coalesce(json_agg(p order by p.purpose), '[]'::json) from (
    select u.purpose, coalesce(sum(u.cost_cents) filter (where u.at >= b.day0), 0) as day_cents, sum(u.cost_cents) as month_cents
    from model_usage u where u.at >= b.month0 and ${where} group by u.purpose) p)`;

export async function usageReport(db: Db, member: Member): Promise<UsageReport | null> {
  const mine = sql`u.org_id = ${member.orgId} and u.actor_id = ${member.id}`;
  const org = sql`u.org_id = ${member.orgId}`;
  const isAdmin = memberOf(member.orgId, member.id, ["admin"]);
  const result = await db.execute(sql`
    with b as (select date_trunc('day', now(), 'UTC') as day0, date_trunc('month', now(), 'UTC') as month0)
    select b.day0 as day_start, b.month0 as month_start,
      ${sums(mine)} as me, ${byPurpose(mine)} as me_by_purpose,
      case when ${isAdmin} then ${sums(org)} end as organization,
      case when ${isAdmin} then ${byPurpose(org)} end as organization_by_purpose,
      case when ${isAdmin} then (select coalesce(json_agg(m order by m.name, m.user_id), '[]'::json) from (
        select ms.user_id, a.name,
          coalesce(sum(u.cost_cents) filter (where u.at >= b.day0), 0) as day_cents, coalesce(sum(u.cost_cents), 0) as month_cents
        from membership ms join app_user a on a.id = ms.user_id
        left join model_usage u on u.org_id = ms.org_id and u.actor_id = ms.user_id and u.at >= b.month0
        where ms.org_id = ${member.orgId} group by ms.user_id, a.name) m) end as members
    from b where ${memberOf(member.orgId, member.id)}`);
  type Row = {
    day_start: string | Date;
    month_start: string | Date;
    me: Spent;
    me_by_purpose: PurposeSpent[];
    organization: Spent | null;
    organization_by_purpose: PurposeSpent[] | null;
    members: (Spent & { user_id: string; name: string })[] | null;
  };
  const row = rowsOf<Row>(result)[0];
  if (!row) return null;
  const iso = (v: string | Date) => new Date(v).toISOString();
  const num = <T extends Spent>(s: T): T => ({ ...s, day_cents: Number(s.day_cents), month_cents: Number(s.month_cents) });
  const report: UsageReport = {
    day_start: iso(row.day_start),
    month_start: iso(row.month_start),
    me: { ...num(row.me), by_purpose: row.me_by_purpose.map(num) },
  };
  if (row.organization && row.members) {
    report.organization = { ...num(row.organization), by_purpose: (row.organization_by_purpose ?? []).map(num) };
    report.members = row.members.map(num);
  }
  return report;
}
