// The spend side of the model-based test (lease-model.test.ts): the model's own account of what
// every model call cost, what every lease in flight has reserved, and each organization's caps,
// from which it predicts whether an open is admitted (docs/decisions/0075-spend-reserved-at-open.md)
// and what checkSpend (invariants.ts) holds the database to.
//
// Money is counted in micro-cents (whole numbers: the database keeps cents to 6 places), so the
// model's sums are exact and `spent + reserved < cap` is decided as the database decides it.
import { estimateTokens } from "@/lib/model";
import type { LeaseStatus } from "@/lib/lease-codes";
import { purposeOf } from "@/lib/purposes";
import { CAP_FIELDS, reservationGraceSeconds, type Caps } from "@/lib/spend";
import type { Purpose } from "@/lib/purposes";

export type CapField = (typeof CAP_FIELDS)[number];
export { CAP_FIELDS, type Caps };
export const NO_CAPS: Caps = {
  organization_daily_cents: null,
  organization_monthly_cents: null,
  member_daily_cents: null,
  member_monthly_cents: null,
};

/** The price every call of the model test is counted at (MODEL_PRICE_PER_MTOK): USD per million tokens in, out. */
export const PRICE = { inputUsd: 10, outputUsd: 40 };
export const PRICE_SETTING = `${PRICE.inputUsd},${PRICE.outputUsd}`;

/** Cents with 6 places, as a whole number of micro-cents, as the database rounds them. */
export const micro = (cents: number) => Math.round(Number(cents.toFixed(6)) * 1e6);

export type Tokens = { inputTokens: number; outputTokens: number };
/** What `tokens` cost at PRICE, in micro-cents: the model's own arithmetic, not lib/spend's. */
export const costOf = (t: Tokens) => micro(((t.inputTokens * PRICE.inputUsd + t.outputTokens * PRICE.outputUsd) / 1e6) * 100);

/**
 * What open reserves for one call of `purpose`, by decision 0075: the purpose's instructions
 * counted, plus 2,000 tokens for the invoice and its context, and 1,000 for the answer.
 */
export const reservationOf = (purpose: Purpose) =>
  costOf({ inputTokens: estimateTokens(purposeOf(purpose).instructions) + 2_000, outputTokens: 1_000 });

export type Clock = { before: number; after: number };

/** How long past its deadline a lease's reservation still counts, unreleased (lib/spend), in ms. */
export const GRACE_MS = reservationGraceSeconds() * 1000;

/**
 * One model call as the model recorded it: its call key, whose it is, what it cost, when (a
 * window on the database clock: the call that recorded it ran between `at.before` and
 * `at.after`), and, per cap, its `excess`: what it added to that cap's account beyond the
 * reservation the cap admitted (checkSpend).
 */
export type Call = {
  key: string;
  lease: string;
  org: number;
  actor: number;
  cost: number;
  at: Clock;
  excess: Record<CapField, number>;
};

/** What the budget model reads of a lease. */
export type BudgetLease = {
  id: string;
  actor: number;
  inv: number;
  status: LeaseStatus;
  purpose: Purpose;
  /** deadline_at, epoch ms: its reservation counts until this plus GRACE_MS. */
  deadline: number;
  /** What it reserved at open, in micro-cents (every lease reserves, capped or not). */
  reservation: number | null;
  /**
   * reserved_cents now: the reservation, less what its retried attempts cost, until its call's
   * final outcome was recorded (whatever the lease's status meanwhile).
   */
  reserved: number | null;
  /** The caps that were set when it was admitted (the ones its admission was judged by). */
  checked: CapField[];
  /** Its generation's attempt (Inngest's, from 0): each attempt is one call, keyed `lease:attempt`. */
  attempt: number;
};

export type BudgetView = {
  invoices: { org: number }[];
  leases: BudgetLease[];
  /** Each organization's caps now. */
  budgets: Caps[];
  /** Each organization's largest value of each cap ever set in the schedule (null: never set). */
  highest: Caps[];
  calls: Call[];
};

export const capsSet = (caps: Caps): CapField[] => CAP_FIELDS.filter((f) => caps[f] !== null);

const DAY = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
};
const MONTH = (ms: number) => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};
export const periodStart = (field: CapField, ms: number) => (field.endsWith("daily_cents") ? DAY(ms) : MONTH(ms));
export const memberCap = (field: CapField) => field.startsWith("member_");

/**
 * Whether lease `l`'s reservation is counted by a statement run during `clock`: `sure` for the
 * whole of it, `maybe` for some of it (its deadline plus the grace fell inside the call).
 */
function counted(l: BudgetLease, clock: Clock): "sure" | "maybe" | "no" {
  if (l.reserved === null) return "no";
  const until = l.deadline + GRACE_MS;
  return until > clock.after ? "sure" : until > clock.before ? "maybe" : "no";
}

/**
 * What one cap has used, by the account the open judges (spent in the period + the reservations
 * held, whatever their lease's status, until deadline + grace), as an interval: the period starts
 * at date_trunc of the open's clock, which lies between `clock.before` and `.after`, and a call
 * recorded near a period's start may fall on either side of it. Both ends are the same unless a
 * day or month began during the calls (or a reservation's grace ended during it).
 */
function used(m: BudgetView, field: CapField, org: number, actor: number, clock: Clock) {
  const mine = (o: number, a: number) => o === org && (!memberCap(field) || a === actor);
  let low = 0;
  let high = 0;
  for (const l of m.leases) {
    if (!mine(m.invoices[l.inv]!.org, l.actor)) continue;
    const held = counted(l, clock);
    if (held === "sure") low += l.reserved!;
    if (held !== "no") high += l.reserved!;
  }
  const earliest = periodStart(field, clock.before);
  const latest = periodStart(field, clock.after);
  for (const c of m.calls) {
    if (!mine(c.org, c.actor)) continue;
    if (c.at.before >= latest) low += c.cost;
    if (c.at.after >= earliest) high += c.cost;
  }
  return { low, high };
}

/**
 * Whether an open by `actor` in `org` may be admitted and whether it may be refused, judged as
 * decision 0075 says (admitted iff spent + reserved < cap for every cap set), from the model's
 * own account. Exactly one of the two is true unless a period began during the call.
 */
export function admission(m: BudgetView, org: number, actor: number, clock: Clock) {
  const caps = m.budgets[org]!;
  let admit = true;
  let refuse = false;
  for (const field of capsSet(caps)) {
    const limit = caps[field]! * 1e6;
    const { low, high } = used(m, field, org, actor, clock);
    if (!(low < limit)) admit = false;
    if (!(high < limit)) refuse = true;
  }
  return { admit, refuse };
}

/**
 * Records call `key` of lease `l` (at `cost`, recorded during `clock`), as recordUsage does: a
 * key recorded already records nothing and settles nothing; a new one settles the lease's
 * reservation: `final` (the call's last outcome) releases it, a retried attempt draws its cost
 * from it (not below 0), and the rest covers the next attempt.
 * Its excess per cap: a call whose lease's reservation was still counted (held, within deadline
 * + grace: whatever the lease's status) and admitted by that cap adds only what it cost beyond
 * what was held; any other call (unreserved, its reservation spent or aged out, a cap set since
 * it opened) adds its whole cost. `unknownOrder`: recorded in a race, counted as a whole cost.
 */
export function recordCall(m: BudgetView, l: BudgetLease, key: string, cost: number, clock: Clock, final: boolean, unknownOrder = false) {
  const lease = m.leases.find((x) => x.id === l.id)!;
  if (m.calls.some((c) => c.key === key)) return;
  const held = !unknownOrder && counted(lease, clock) === "sure" ? lease.reserved : null;
  const excess = Object.fromEntries(
    CAP_FIELDS.map((f) => [f, held !== null && lease.checked.includes(f) ? Math.max(0, cost - held) : cost]),
  ) as Record<CapField, number>;
  m.calls.push({ key, lease: l.id, org: m.invoices[l.inv]!.org, actor: l.actor, cost, at: clock, excess });
  lease.reserved = final || lease.reserved === null ? null : Math.max(0, lease.reserved - cost);
}

/** A budget as an admin sets it: the caps and, for each, the largest ever set. */
export function setBudget(m: BudgetView, org: number, caps: Caps) {
  m.budgets[org] = { ...caps };
  const top = m.highest[org]!;
  for (const f of CAP_FIELDS) if (caps[f] !== null) top[f] = Math.max(top[f] ?? 0, caps[f]!);
}
