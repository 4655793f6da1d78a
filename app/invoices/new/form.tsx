"use client";
import { useActionState } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import { newInvoiceAction, type NewInvoiceState } from "./actions";

const initial: NewInvoiceState = { message: null, errors: {}, values: {}, lineRows: 5 };

/** One labelled field with its error beside it (tied by aria-describedby). */
function Field(props: {
  name: string;
  label: string;
  state: NewInvoiceState;
  type?: string;
  maxLength?: number;
  inputMode?: "numeric" | "decimal";
  required?: boolean;
}) {
  const error = props.state.errors[props.name];
  const id = `new-${props.name}`;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? "text"}
        defaultValue={props.state.values[props.name] ?? ""}
        maxLength={props.maxLength}
        inputMode={props.inputMode}
        required={props.required}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        autoComplete="off"
      />
      {error ? (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function NewInvoiceForm() {
  const [state, action] = useActionState(newInvoiceAction, initial);
  return (
    // Keyed by the row count: "Add more lines" renders the form afresh with what was typed.
    <form action={action} key={state.lineRows} noValidate>
      <input type="hidden" name="line_rows" value={state.lineRows} />
      {state.message ? (
        <p role="alert" className="notice notice--error">
          {state.message}
        </p>
      ) : null}
      <section className="card" aria-labelledby="details-heading">
        <h2 id="details-heading">Details</h2>
        <div className="field-grid">
          <Field name="number" label="Invoice number" state={state} maxLength={64} required />
          <Field name="counterparty" label="Counterparty" state={state} maxLength={200} required />
          <Field name="currency" label="Currency (e.g. EUR)" state={state} maxLength={3} required />
          <Field name="issued_on" label="Issued on" type="date" state={state} required />
          <Field name="due_on" label="Due on" type="date" state={state} required />
        </div>
      </section>
      <section className="card" aria-labelledby="lines-heading">
        <h2 id="lines-heading">Lines</h2>
        <p className="muted small">Fill in as many rows as the invoice has lines; empty rows are left out.</p>
        {state.errors.lines ? <p className="field-error">{state.errors.lines}</p> : null}
        {Array.from({ length: state.lineRows }, (_, i) => (
          <fieldset key={i} className="line-row">
            <legend>Line {i + 1}</legend>
            <div className="field-grid">
              <Field name={`line_${i}_description`} label="Description" state={state} maxLength={200} />
              <Field name={`line_${i}_quantity`} label="Quantity" state={state} inputMode="numeric" maxLength={10} />
              <Field name={`line_${i}_unit_price`} label="Unit price" state={state} inputMode="decimal" maxLength={12} />
            </div>
          </fieldset>
        ))}
        <button type="submit" name="intent" value="more_lines" className="button button--quiet" formNoValidate>
          Add more lines
        </button>
      </section>
      <SubmitButton pendingLabel="Creating…">Create invoice</SubmitButton>
    </form>
  );
}
