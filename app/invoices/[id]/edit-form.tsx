"use client";
import { useActionState } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import { editInvoiceAction, type EditResult } from "./actions";

type Shown = { id: string; number: string; counterparty: string; issued_on: string; due_on: string; version: number };

const initial: EditResult = { ok: true, message: null };

/** Edits carry the version they were made on; the server refuses one made on an older version. */
export function EditInvoiceForm({ invoice }: { invoice: Shown }) {
  const [state, action] = useActionState(editInvoiceAction, initial);
  const value = (field: "number" | "counterparty" | "issued_on" | "due_on") => state.values?.[field] ?? invoice[field];
  return (
    <section className="card" aria-labelledby="edit-heading">
      <h2 id="edit-heading">Edit details</h2>
      <p className="muted small">Saving a change makes any summary requested before it out of date.</p>
      <form action={action}>
        <input type="hidden" name="invoice_id" value={invoice.id} />
        <input type="hidden" name="expected_version" value={invoice.version} />
        <div className="field-grid">
          <div className="field">
            <label htmlFor="edit-counterparty">Counterparty</label>
            <input id="edit-counterparty" name="counterparty" defaultValue={value("counterparty")} required maxLength={200} />
          </div>
          <div className="field">
            <label htmlFor="edit-number">Invoice number</label>
            <input id="edit-number" name="number" defaultValue={value("number")} required maxLength={64} />
          </div>
          <div className="field">
            <label htmlFor="edit-issued">Issued on</label>
            <input id="edit-issued" name="issued_on" type="date" defaultValue={value("issued_on")} required />
          </div>
          <div className="field">
            <label htmlFor="edit-due">Due on</label>
            <input id="edit-due" name="due_on" type="date" defaultValue={value("due_on")} required />
          </div>
        </div>
        <SubmitButton className="button button--secondary">Save changes</SubmitButton>
        {state.message ? (
          <p role={state.ok ? "status" : "alert"} className={`notice ${state.ok ? "notice--ok" : "notice--error"}`}>
            {state.message}
          </p>
        ) : null}
      </form>
    </section>
  );
}
