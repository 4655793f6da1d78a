import "server-only";
// Budgets: an organization's caps (per organization and per member, per day and per month, in
// whole USD cents; null is no cap, 0 admits no call) and the check POST /api/leases makes before
// it dispatches, in open's own transaction, on the database clock
// (docs/decisions/0075-spend-reserved-at-open.md).
import { and, eq, isNotNull, or, sql } from "drizzle-orm";
import { z } from "zod";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { orgBudget } from "@/db/schema";
import { memberOf, type Member } from "@/lib/access";
import { DEFAULT_TIMEOUT_MS, modelTimeLimitMs } from "@/lib/model";
import { reservationCents } from "./price";
import type { Purpose } from "@/lib/purposes";

export const CAP_FIELDS = ["organization_daily_cents", "organization_monthly_cents", "member_daily_cents", "member_monthly_cents"] as const;
export type Caps = Record<(typeof CAP_FIELDS)[number], number | null>;

const cap = z.number().int().min(0).max(2_147_483_647).nullable();
/** PUT /api/org/budget's body: all four caps, each a whole number of cents >= 0 or null, and nothing else. */
export const BudgetInput = z.strictObject({
  organization_daily_cents: cap,
  organization_monthly_cents: cap,
  member_daily_cents: cap,
  member_monthly_cents: cap,
});

const capColumns = {
  organization_daily_cents: orgBudget.organizationDailyCents,
  organization_monthly_cents: orgBudget.organizationMonthlyCents,
  member_daily_cents: orgBudget.memberDailyCents,
  member_monthly_cents: orgBudget.memberMonthlyCents,
};

/**
 * Whether any cap applies, as a column of open's invoice select (org_budget left-joined on the
 * invoice's organization): false when the organization has no budget row or every cap is null,
 * so the usual open pays for the budget with nothing but the join.
 */
export const capApplies = sql<boolean>`coalesce(${or(...Object.values(capColumns).map((c) => isNotNull(c)))}, false)`;

const NO_CAPS: Caps = {
  organization_daily_cents: null,
  organization_monthly_cents: null,
  member_daily_cents: null,
  member_monthly_cents: null,
};

/** The caps of the member's organization (all null when none were set), for any member. */
export async function readBudget(db: Db, member: Member): Promise<Caps> {
  const [row] = await db
    .select(capColumns)
    .from(orgBudget)
    .where(and(eq(orgBudget.orgId, member.orgId), memberOf(orgBudget.orgId, member.id)));
  return row ?? NO_CAPS;
}

/** Sets the caps of the member's organization: an admin's act, judged by the statement that writes (403 otherwise). */
export async function writeBudget(
  db: Db,
  member: Member,
  caps: Caps,
): Promise<{ ok: true; budget: Caps } | { ok: false; code: "forbidden" }> {
  const values = CAP_FIELDS.map((field) => sql`${caps[field]}::integer`);
  const result = await db.execute(sql`
    insert into org_budget (org_id, organization_daily_cents, organization_monthly_cents, member_daily_cents, member_monthly_cents,
      updated_by, updated_at)
    select ${member.orgId}::uuid, ${sql.join(values, sql`, `)}, ${member.id}::uuid, now()
    where ${memberOf(member.orgId, member.id, ["admin"])}
    on conflict (org_id) do update set organization_daily_cents = excluded.organization_daily_cents,
      organization_monthly_cents = excluded.organization_monthly_cents, member_daily_cents = excluded.member_daily_cents,
      member_monthly_cents = excluded.member_monthly_cents, updated_by = excluded.updated_by, updated_at = excluded.updated_at
    returning organization_daily_cents, organization_monthly_cents, member_daily_cents, member_monthly_cents`);
  const [row] = rowsOf<Caps>(result);
  return row ? { ok: true, budget: row } : { ok: false, code: "forbidden" };
}

export type CapField = (typeof CAP_FIELDS)[number];
export type Admission =
  | { ok: true }
  /** `cap`: the cap that is reached and resets last (the one `retryAfterSeconds` waits for). */
  | { ok: false; code: "budget_exhausted"; retryAfterSeconds: number; cap: CapField };

/**
 * How long past its lease's deadline a reservation still counts when its call's usage was never
 * recorded: the longest a call may run (it starts before the deadline) plus this margin for the
 * worker to record it. After that the call is taken as lost, so it cannot hold a budget forever.
 */
export const RESERVATION_GRACE_MARGIN_SECONDS = 60;
export function reservationGraceSeconds(env: Record<string, string | undefined> = process.env): number {
  let limitMs = DEFAULT_TIMEOUT_MS;
  try {
    limitMs = modelTimeLimitMs(env);
  } catch {
    // A model misconfigured makes no call (its generation fails as model_not_configured): the default limit will do.
  }
  return Math.ceil(limitMs / 1000) + RESERVATION_GRACE_MARGIN_SECONDS;
}

const reservedMemo = new Map<string, number | null>();
/**
 * What open writes as a lease's reservation, capped or not: one call's estimate, null when it is
 * nothing (an unpriced lane) or the model's configuration cannot price it (such a lease's
 * generation fails as model_not_configured, calling nothing). Remembered per purpose and pricing.
 */
export function reservedAtOpen(purpose: Purpose, env: Record<string, string | undefined> = process.env): number | null {
  const key = [purpose, env.MODEL_PROVIDER, env.MODEL_NAME, env.MODEL_PRICE_PER_MTOK].join("\0");
  let cents = reservedMemo.get(key);
  if (cents === undefined) {
    try {
      const estimate = reservationCents(purpose, env);
      cents = estimate > 0 ? estimate : null;
    } catch {
      cents = null;
    }
    reservedMemo.set(key, cents);
  }
  return cents;
}

type Spend = {
  org_day: string;
  org_month: string;
  member_day: string;
  member_month: string;
  org_reserved: string;
  member_reserved: string;
  day_reset_s: string;
  month_reset_s: string;
};

/**
 * Open's budget check, for an organization whose invoice select found a cap: locks the budget
 * row FOR UPDATE (every open it applies to queues here, so two opens cannot both take the last
 * of a budget), then, in a statement of its own (read committed: it sees what the open before
 * us committed, its reservation included), sums what the period spent and what the leases hold
 * reserved. A reservation counts until its call's final usage is recorded, whatever the lease's
 * status (a call ends after its lease closed: aborted, late), but no longer than the lease's
 * deadline plus the grace (reservationGraceSeconds): the partial index
 * inference_lease_reserved_idx serves exactly that range. Admitted iff below every cap.
 */
export async function admitCall(tx: Tx, input: { orgId: string; actorId: string }): Promise<Admission> {
  const { orgId, actorId } = input;
  const [caps] = await tx.select(capColumns).from(orgBudget).where(eq(orgBudget.orgId, orgId)).for("update");
  if (!caps) return { ok: true };
  const held = sql`l.reserved_cents is not null and l.deadline_at > now() - make_interval(secs => ${reservationGraceSeconds()})`;
  const result = await tx.execute(sql`
    with b as (select date_trunc('day', now(), 'UTC') as day0, date_trunc('month', now(), 'UTC') as month0)
    select
      (select coalesce(sum(u.cost_cents), 0) from model_usage u where u.org_id = ${orgId} and u.at >= b.day0) as org_day,
      (select coalesce(sum(u.cost_cents), 0) from model_usage u where u.org_id = ${orgId} and u.at >= b.month0) as org_month,
      (select coalesce(sum(u.cost_cents), 0) from model_usage u
        where u.org_id = ${orgId} and u.actor_id = ${actorId} and u.at >= b.day0) as member_day,
      (select coalesce(sum(u.cost_cents), 0) from model_usage u
        where u.org_id = ${orgId} and u.actor_id = ${actorId} and u.at >= b.month0) as member_month,
      (select coalesce(sum(l.reserved_cents), 0) from inference_lease l join invoice i on i.id = l.invoice_id
        where i.org_id = ${orgId} and ${held}) as org_reserved,
      (select coalesce(sum(l.reserved_cents), 0) from inference_lease l join invoice i on i.id = l.invoice_id
        where i.org_id = ${orgId} and l.actor_id = ${actorId} and ${held}) as member_reserved,
      ceil(extract(epoch from (b.day0 + interval '1 day' - now()))) as day_reset_s,
      ceil(extract(epoch from (b.month0 + interval '1 month' - now()))) as month_reset_s
    from b`);
  const spend = rowsOf<Spend>(result)[0]!;
  const n = (v: string) => Number(v);
  const day = n(spend.day_reset_s);
  const month = n(spend.month_reset_s);
  const checks: [CapField, number | null, number, number][] = [
    ["organization_daily_cents", caps.organization_daily_cents, n(spend.org_day) + n(spend.org_reserved), day],
    ["organization_monthly_cents", caps.organization_monthly_cents, n(spend.org_month) + n(spend.org_reserved), month],
    ["member_daily_cents", caps.member_daily_cents, n(spend.member_day) + n(spend.member_reserved), day],
    ["member_monthly_cents", caps.member_monthly_cents, n(spend.member_month) + n(spend.member_reserved), month],
  ];
  const exhausted = checks.filter(([, limit, used]) => limit !== null && !(used < limit));
  // Several caps reached: the caller may try again only once every one of them has reset, and
  // is told of the one that resets last (the organization's first, of two that reset together).
  const last = exhausted.reduce<(typeof checks)[number] | undefined>((a, c) => (!a || c[3] > a[3] ? c : a), undefined);
  if (last) return { ok: false, code: "budget_exhausted", retryAfterSeconds: Math.max(1, last[3]), cap: last[0] };
  return { ok: true };
}
