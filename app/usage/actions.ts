"use server";
// The usage page's one action: an admin sets the four caps (app/_lib/action.ts: the actor from
// the session, which the wrapper's db holds in the write's transaction; the form parsed; one
// domain call, the same writeBudget as PUT /api/org/budget, through the same BudgetInput). Saved:
// back to /usage with a notice, a plain form post without JavaScript. Refused: the form's state,
// with what was typed and the words beside each field, and nothing written.
import { revalidatePath } from "next/cache";
import { redirect, RedirectType } from "next/navigation";
import { z } from "zod";
import { formOf, text } from "@/lib/input";
import { BudgetInput, CAP_FIELDS, writeBudget, type CapField, type Caps } from "@/lib/spend";
import { stateAction } from "@/app/_lib/action";
import { BUDGET_WORDS } from "@/app/_lib/usage-words";
import { centsOf } from "./dollars";

export type BudgetState = {
  message: string | null;
  errors: Partial<Record<CapField, string>>;
  /** What was typed, shown again after a refusal. */
  values: Partial<Record<CapField, string>> | null;
};

const amount = text().max(40).optional();
const BudgetForm = formOf(
  z.object({
    organization_daily_cents: amount,
    organization_monthly_cents: amount,
    member_daily_cents: amount,
    member_monthly_cents: amount,
  }),
);

export const saveBudgetAction = stateAction({
  who: "actor",
  input: BudgetForm,
  invalid: async (): Promise<BudgetState> => ({ message: BUDGET_WORDS.invalid, errors: {}, values: null }),
  run: async (form, { actor, db }): Promise<BudgetState> => {
    const values = Object.fromEntries(CAP_FIELDS.map((f) => [f, form[f] ?? ""])) as Record<CapField, string>;
    const errors: Partial<Record<CapField, string>> = {};
    const caps: Partial<Record<CapField, number | null>> = {};
    for (const field of CAP_FIELDS) {
      const cents = centsOf(values[field]);
      if (cents === undefined) errors[field] = BUDGET_WORDS.notAnAmount;
      else caps[field] = cents;
    }
    // The route's own schema decides what a cap may be (whole cents, 0 up to the column's range).
    const parsed = BudgetInput.safeParse(caps);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = issue.path[0] as CapField;
        errors[field] ??= BUDGET_WORDS.tooLarge;
      }
    }
    if (Object.keys(errors).length || !parsed.success) return { message: BUDGET_WORDS.invalid, errors, values };
    const result = await writeBudget(db, actor, parsed.data satisfies Caps);
    if (!result.ok) return { message: BUDGET_WORDS.forbidden, errors: {}, values };
    revalidatePath("/usage");
    redirect("/usage?notice=saved#budget-heading", RedirectType.replace);
  },
});
