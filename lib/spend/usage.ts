import "server-only";
// GET /api/usage: what the caller spent this UTC day and month (database clock), per purpose;
// for an admin also the organization's and each member's. One statement; whether the caller is
// an admin is a condition of that statement (lib/access.ts), so a member demoted a moment ago
// sees only their own.
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { memberOf, type Member } from "@/lib/access";
import { rowsOf } from "@/db/client";
import { openEventsCursor, sealEventsCursor } from "@/lib/leases/cursor";
import type { UsageOutcome } from "./record";

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

/** Each member's spend today and this month, by name (for an admin: the caller puts the condition around it). */
const memberSums = (orgId: string) => sql`(select coalesce(json_agg(m order by m.name, m.user_id), '[]'::json) from (
    select ms.user_id, a.name,
      coalesce(sum(u.cost_cents) filter (where u.at >= b.day0), 0) as day_cents, coalesce(sum(u.cost_cents), 0) as month_cents
    from membership ms join app_user a on a.id = ms.user_id
    left join model_usage u on u.org_id = ms.org_id and u.actor_id = ms.user_id and u.at >= b.month0
    where ms.org_id = ${orgId} group by ms.user_id, a.name) m)`;

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
      case when ${isAdmin} then ${memberSums(member.orgId)} end as members
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

/** One model call as the usage page lists it: who, what for, on which invoice, what it used and cost. */
export type UsageCall = {
  at: string;
  actor_name: string;
  /** The caller's own call: only then does it name its lease (another member's lease id is theirs alone). */
  mine: boolean;
  lease_id: string | null;
  invoice_id: string;
  /** Null when the invoice is no longer the organization's. */
  invoice_number: string | null;
  purpose: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  estimated: boolean;
  outcome: UsageOutcome;
  cost_cents: number;
};

export type UsageView = {
  now: string;
  day_start: string;
  month_start: string;
  /** What the sums, days, purposes and calls cover: the organization's (an admin), or the caller's own. */
  scope: "organization" | "member";
  spent: Spent;
  me: Spent;
  /** An admin's only: each member's spend, by name. */
  members: (Spent & { user_id: string; name: string })[] | null;
  /** Each UTC day of this month with spend, newest first ("2026-12-03"). */
  by_day: { day: string; cost_cents: number; calls: number }[];
  by_purpose: (Spent & { purpose: string; calls: number })[];
  /** The newest calls (at most USAGE_CALLS_PAGE) before `before`, newest first. */
  calls: UsageCall[];
  /** The cursor of the page after these (older calls), or null when there are none. */
  older: string | null;
};

export const USAGE_CALLS_PAGE = 100;

/**
 * The calls cursor: the last call's row id, sealed to the caller (lib/leases/cursor.ts, the
 * events cursor's seal; docs/decisions/0046). A bare id is one counter for every organization.
 */
const cursorTag = (member: Member) => `usage:${member.id}`;

/**
 * The usage page's reading, in one statement: the spend of the caller's scope (an admin: the
 * organization; a member: their own) this UTC day and month, per day of the month, per purpose,
 * each member's (an admin's only), and its calls, newest first, a page at a time. Whether the
 * caller is an admin is a condition of the statement, as in usageReport, so a member demoted a
 * moment ago reads only their own; another organization's rows match nothing. `before`: a
 * cursor from `older`; one this app did not seal for this caller reads as the first page.
 */
export async function usageView(db: Db, member: Member, before?: string | null): Promise<UsageView | null> {
  const opened = before ? openEventsCursor(cursorTag(member), before) : null;
  const after = typeof opened === "number" ? opened : null;
  const isAdmin = memberOf(member.orgId, member.id, ["admin"]);
  // Every sum and list below reads through this condition (`b.admin`: the statement's own judgement).
  const scope = sql`u.org_id = ${member.orgId} and (b.admin or u.actor_id = ${member.id})`;
  const mine = sql`u.org_id = ${member.orgId} and u.actor_id = ${member.id}`;
  const page = after === null ? sql`true` : sql`(u.at, u.id) < (select p.at, p.id from model_usage p where p.id = ${after})`;
  const result = await db.execute(sql`
    with b as (select now() as now, date_trunc('day', now(), 'UTC') as day0, date_trunc('month', now(), 'UTC') as month0,
      ${isAdmin} as admin)
    select b.now, b.day0 as day_start, b.month0 as month_start, b.admin,
      ${sums(scope)} as spent, ${sums(mine)} as me,
      case when b.admin then ${memberSums(member.orgId)} end as members,
      (select coalesce(json_agg(d order by d.day desc), '[]'::json) from (
        select to_char(u.at at time zone 'UTC', 'YYYY-MM-DD') as day, sum(u.cost_cents) as cost_cents, count(*) as calls
        from model_usage u where u.at >= b.month0 and ${scope} group by 1) d) as by_day,
      (select coalesce(json_agg(p order by p.purpose), '[]'::json) from (
        select u.purpose, coalesce(sum(u.cost_cents) filter (where u.at >= b.day0), 0) as day_cents,
          sum(u.cost_cents) as month_cents, count(*) as calls
        from model_usage u where u.at >= b.month0 and ${scope} group by u.purpose) p) as by_purpose,
      (select coalesce(json_agg(c order by c.at desc, c.id desc), '[]'::json) from (
        select u.id, u.at, a.name as actor_name, u.actor_id = ${member.id} as mine,
          case when u.actor_id = ${member.id} then u.lease_id end as lease_id,
          u.invoice_id, i.number as invoice_number, u.purpose, u.model, u.input_tokens, u.output_tokens, u.estimated,
          u.outcome, u.cost_cents
        from model_usage u join app_user a on a.id = u.actor_id
        left join invoice i on i.id = u.invoice_id and i.org_id = u.org_id
        where ${scope} and ${page}
        order by u.at desc, u.id desc limit ${USAGE_CALLS_PAGE + 1}) c) as calls
    from b where ${memberOf(member.orgId, member.id)}`);
  type Row = {
    now: string | Date;
    day_start: string | Date;
    month_start: string | Date;
    admin: boolean;
    spent: Spent;
    me: Spent;
    members: (Spent & { user_id: string; name: string })[] | null;
    by_day: { day: string; cost_cents: number; calls: number }[];
    by_purpose: (Spent & { purpose: string; calls: number })[];
    calls: (Omit<UsageCall, "at"> & { id: number; at: string })[];
  };
  const row = rowsOf<Row>(result)[0];
  if (!row) return null;
  const iso = (v: string | Date) => new Date(v).toISOString();
  const num = <T extends Spent>(s: T): T => ({ ...s, day_cents: Number(s.day_cents), month_cents: Number(s.month_cents) });
  const shown = row.calls.slice(0, USAGE_CALLS_PAGE);
  const last = shown.at(-1);
  return {
    now: iso(row.now),
    day_start: iso(row.day_start),
    month_start: iso(row.month_start),
    scope: row.admin ? "organization" : "member",
    spent: num(row.spent),
    me: num(row.me),
    members: row.members ? row.members.map(num) : null,
    by_day: row.by_day.map((d) => ({ day: d.day, cost_cents: Number(d.cost_cents), calls: Number(d.calls) })),
    by_purpose: row.by_purpose.map((p) => ({ ...num(p), calls: Number(p.calls) })),
    // The row id goes no further than the sealed cursor.
    calls: shown.map(({ id: _id, ...call }) => ({
      ...call,
      at: iso(call.at),
      input_tokens: Number(call.input_tokens),
      output_tokens: Number(call.output_tokens),
      cost_cents: Number(call.cost_cents),
    })),
    older: row.calls.length > USAGE_CALLS_PAGE && last ? sealEventsCursor(cursorTag(member), Number(last.id)) : null,
  };
}
