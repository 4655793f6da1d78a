"use client";
import { useActionState, useState } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import { formatDate, type Viewer } from "@/app/_lib/format";
import type { Notice } from "@/app/_lib/lease-words";
import { editInvoiceAction, type EditResult } from "./actions";

type Shown = { id: string; number: string; counterparty: string; issued_on: string; due_on: string; version: number };

const initial: EditResult = { ok: true, message: null };

/**
 * Edits carry the version they were made on; the server refuses one made on an older version.
 * They carry the values the form was rendered with too, and the server writes only the fields
 * that differ from those.
 * Dates are plain text fields in the page's one date format (a browser's own date field
 * shows its own), read back by the server in the viewer's locale, ISO accepted too.
 * Keyed by version in the page, so a saved change shows the invoice as it now is.
 */
export function EditInvoiceForm({
  invoice,
  viewer,
  pattern,
  notice,
}: {
  invoice: Shown;
  viewer: Viewer;
  /** How a date is typed here: "MM/DD/YYYY"... */
  pattern: string;
  /** What the last save said, after it sent the browser back to the page. */
  notice: Notice | null;
}) {
  const [state, action] = useActionState(editInvoiceAction, initial);
  // The notice arrives with one server render and has left the address by the next (a refresh
  // after a pushed change): kept until the form is shown afresh for a new version.
  const [kept, setKept] = useState(notice);
  if (notice && notice.text !== kept?.text) setKept(notice);
  const shown = {
    number: invoice.number,
    counterparty: invoice.counterparty,
    issued_on: formatDate(invoice.issued_on, viewer.locale),
    due_on: formatDate(invoice.due_on, viewer.locale),
  };
  const value = (field: keyof typeof shown) => state.values?.[field] ?? shown[field];
  const message = state.message ? { ok: state.ok, text: state.message } : kept;
  return (
    <section className="card" aria-labelledby="edit-heading">
      <h2 id="edit-heading">Edit details</h2>
      <p className="muted small">Saving a change withdraws any summary requested before it.</p>
      <form action={action}>
        <input type="hidden" name="invoice_id" value={invoice.id} />
        <input type="hidden" name="expected_version" value={invoice.version} />
        {/* What each field was rendered with: the server reads only the fields that differ. */}
        {(Object.keys(shown) as (keyof typeof shown)[]).map((field) => (
          <input key={field} type="hidden" name={`was_${field}`} value={shown[field]} />
        ))}
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
            <input
              id="edit-issued"
              name="issued_on"
              defaultValue={value("issued_on")}
              required
              maxLength={20}
              inputMode="numeric"
              autoComplete="off"
              aria-describedby="edit-date-format"
            />
          </div>
          <div className="field">
            <label htmlFor="edit-due">Due on</label>
            <input
              id="edit-due"
              name="due_on"
              defaultValue={value("due_on")}
              required
              maxLength={20}
              inputMode="numeric"
              autoComplete="off"
              aria-describedby="edit-date-format"
            />
          </div>
        </div>
        <p id="edit-date-format" className="muted small">
          Dates as {pattern}.
        </p>
        <SubmitButton className="button button--secondary">Save changes</SubmitButton>
        {message ? (
          <p role={message.ok ? "status" : "alert"} className={`notice ${message.ok ? "notice--ok" : "notice--error"}`}>
            {message.text}
          </p>
        ) : null}
      </form>
    </section>
  );
}
