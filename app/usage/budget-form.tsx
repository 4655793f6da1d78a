"use client";
// The four caps, in dollars (blank: no cap; 0: no call), posted to saveBudgetAction. With
// JavaScript off it is a plain form post: saved, the action sends the browser back to /usage with
// a notice; refused, React renders the action's state (each field's words, what was typed) into
// the page the post answers with.
import { useActionState } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import type { CapField } from "@/lib/spend";
import { BUDGET_WORDS, CAP_LABELS, CAP_ORDER } from "@/app/_lib/usage-words";
import { saveBudgetAction, type BudgetState } from "./actions";

const initial: BudgetState = { message: null, errors: {}, values: null };

export function BudgetForm({ shown }: { shown: Record<CapField, string> }) {
  const [state, action] = useActionState(saveBudgetAction, initial);
  return (
    <form action={action} aria-labelledby="budget-heading" data-testid="budget-form">
      {state.message ? (
        <p role="alert" className="notice notice--error" data-testid="budget-message">
          {state.message}
        </p>
      ) : null}
      <p className="muted small">{BUDGET_WORDS.hint}</p>
      <div className="field-grid">
        {CAP_ORDER.map((field) => {
          const id = `cap-${field}`;
          const error = state.errors[field];
          return (
            <div className="field" key={field}>
              <label htmlFor={id}>{CAP_LABELS[field]} ($)</label>
              <input
                id={id}
                name={field}
                inputMode="decimal"
                autoComplete="off"
                maxLength={40}
                defaultValue={state.values?.[field] ?? shown[field]}
                aria-invalid={error ? true : undefined}
                aria-describedby={error ? `${id}-error` : undefined}
              />
              {error ? (
                <p id={`${id}-error`} className="field-error" data-testid={`${id}-error`}>
                  {error}
                </p>
              ) : null}
            </div>
          );
        })}
      </div>
      <SubmitButton className="button" pendingLabel="Saving…">
        Save budget
      </SubmitButton>
    </form>
  );
}
