// The words of the usage page: how a call ended, each spending cap, and the budget form's
// notices and refusals. Keyed by lib/spend's codes; a code without words fails `tsc`. Client-safe.
import type { CapField, UsageOutcome } from "@/lib/spend";

/** How a model call ended (model_usage.outcome), as a finance user reads it. */
export const OUTCOME_WORDS = {
  proposed: "Proposed for review",
  late: "Arrived too late, not used",
  aborted: "Stopped: cancelled or closed",
  failed: "Failed",
} as const satisfies Record<UsageOutcome, string>;

/** Each cap, as the budget form labels it, in the order the form shows them. */
export const CAP_LABELS = {
  organization_daily_cents: "Team, per day",
  organization_monthly_cents: "Team, per month",
  member_daily_cents: "Each member, per day",
  member_monthly_cents: "Each member, per month",
} as const satisfies Record<CapField, string>;

export const CAP_ORDER = Object.keys(CAP_LABELS) as CapField[];

export const BUDGET_WORDS = {
  saved: "Budget saved. It applies to the next request.",
  forbidden: "Only an admin can change the budget. Nothing was changed.",
  invalid: "Check the amounts below. Nothing was changed.",
  notAnAmount: "Write an amount in dollars and cents, such as 25 or 25.50, or leave it blank for no limit.",
  tooLarge: "That is more than the largest limit, $21,474,836.47.",
  hint: "In US dollars. Blank: no limit. 0: no AI requests at all.",
} as const;

export type BudgetNotice = "saved";
export const isBudgetNotice = (value: string | undefined): value is BudgetNotice => value === "saved";
