"use client";
import { useActionState } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import { STATUS_ACTION_WORDS, STATUS_WORDS, type ShownStatus } from "@/app/_lib/status-words";
import type { InvoiceStatus } from "@/lib/org-codes";
import { setStatusAction, type StatusResult } from "./actions";

const initial: StatusResult = { message: null };

/**
 * The invoice's status, and for its owner or an admin the controls that change it: "Mark paid"
 * with the day (the database's today to start with; a later one is refused by the server, in words), "Void", "Reopen". Plain form posts to a
 * server action, so they work without JavaScript; a refusal comes back in the form's state.
 */
export function StatusControls(props: {
  invoiceId: string;
  version: number;
  status: InvoiceStatus;
  shown: ShownStatus;
  paidOnText: string | null;
  editable: boolean;
  today: string;
}) {
  const [state, action] = useActionState(setStatusAction, initial);
  const { invoiceId, version, status } = props;
  const hidden = (
    <>
      <input type="hidden" name="invoice_id" value={invoiceId} />
      <input type="hidden" name="expected_version" value={version} />
    </>
  );
  return (
    <section className="card" aria-labelledby="status-heading">
      <h2 id="status-heading">Status</h2>
      <p>
        <span className={`status-badge status-badge--${props.shown}`} data-testid="invoice-status">
          {STATUS_WORDS[props.shown]}
        </span>
        {props.paidOnText ? <span className="muted"> · paid on {props.paidOnText}</span> : null}
      </p>
      {props.editable ? (
        <div className="status-actions">
          {status !== "paid" ? (
            <form action={action} className="status-actions__paid">
              {hidden}
              <input type="hidden" name="status" value="paid" />
              <div className="field">
                <label htmlFor="status-paid-on">Paid on</label>
                <input id="status-paid-on" name="paid_on" type="date" defaultValue={props.today} required />
              </div>
              <SubmitButton className="button">{STATUS_ACTION_WORDS.paid}</SubmitButton>
            </form>
          ) : null}
          {status !== "void" ? (
            <form action={action}>
              {hidden}
              <input type="hidden" name="status" value="void" />
              <SubmitButton className="button button--secondary">{STATUS_ACTION_WORDS.void}</SubmitButton>
            </form>
          ) : null}
          {status !== "open" ? (
            <form action={action}>
              {hidden}
              <input type="hidden" name="status" value="open" />
              <SubmitButton className="button button--secondary">{STATUS_ACTION_WORDS.open}</SubmitButton>
            </form>
          ) : null}
        </div>
      ) : (
        <p className="muted small">Only the invoice&apos;s owner or an administrator can change its status.</p>
      )}
      {state.message ? (
        <p role="alert" className="notice notice--error">
          {state.message}
        </p>
      ) : null}
    </section>
  );
}
