"use client";
import Link from "next/link";
import { useActionState } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import { importAction, type ImportState } from "./actions";

const initial: ImportState = { stage: "start", message: null };

const plural = (n: number, one: string, many: string) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

export function ImportForm({ columns }: { columns: string }) {
  const [state, action] = useActionState(importAction, initial);
  if (state.stage === "done") {
    return (
      <section className="card" aria-labelledby="done-heading">
        <h2 id="done-heading">Imported</h2>
        <p role="status" className="notice notice--ok">
          {plural(state.created, "invoice", "invoices")} created
          {state.skipped > 0 ? `; ${plural(state.skipped, "invoice was", "invoices were")} already there and left as they were` : ""}.
        </p>
        <p>
          <Link href="/invoices">Back to the invoices</Link>
        </p>
      </section>
    );
  }
  if (state.stage === "preview") {
    return (
      <section className="card" aria-labelledby="preview-heading">
        <h2 id="preview-heading">Check before importing</h2>
        <p>
          {plural(state.rows, "row", "rows")} read. Confirm will create {plural(state.creating, "invoice", "invoices")}
          {state.skip.length > 0 ? ` and skip ${plural(state.skip.length, "invoice", "invoices")} already there` : ""}.
        </p>
        {state.create.length > 0 ? (
          <>
            <h3>To be created{state.creating > state.create.length ? ` (the first ${state.create.length})` : ""}</h3>
            <ul data-testid="import-create">
              {state.create.map((i) => (
                <li key={i.number}>
                  {i.number}, {i.counterparty}, {plural(i.lines, "line", "lines")}
                </li>
              ))}
            </ul>
          </>
        ) : null}
        {state.skip.length > 0 ? (
          <>
            <h3>Already there, to be skipped</h3>
            <p>{state.skip.slice(0, 50).join(", ")}</p>
          </>
        ) : null}
        <form action={action}>
          <input type="hidden" name="confirmed_file" value={state.file} />
          <input type="hidden" name="intent" value="confirm" />
          <SubmitButton pendingLabel="Importing…">Confirm import</SubmitButton>
        </form>
        <p>
          <Link href="/invoices/import">Start again with another file</Link>
        </p>
      </section>
    );
  }
  return (
    <form action={action} encType="multipart/form-data">
      <input type="hidden" name="intent" value="preview" />
      {state.stage === "refused" ? (
        <div role="alert" className="notice notice--error">
          <p>Nothing was imported. Correct these rows and try again:</p>
          <ul data-testid="import-errors">
            {state.errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
          {state.truncated ? <p>Only the first {state.errors.length} problems are listed.</p> : null}
        </div>
      ) : state.message ? (
        <p role="alert" className="notice notice--error">
          {state.message}
        </p>
      ) : null}
      <section className="card" aria-labelledby="file-heading">
        <h2 id="file-heading">The file</h2>
        <p className="muted small">
          A CSV file with a header row of these columns, one row per invoice line (rows with the same number make one invoice):{" "}
          <code>{columns}</code>. Up to 10,000 rows; dates like 2026-12-31; prices in cents.
        </p>
        <div className="field">
          <label htmlFor="import-file">CSV file</label>
          <input id="import-file" name="file" type="file" accept=".csv,text/csv" />
        </div>
        <div className="field">
          <label htmlFor="import-csv">Or paste the CSV text</label>
          <textarea id="import-csv" name="csv" rows={8} spellCheck={false} />
        </div>
        <SubmitButton pendingLabel="Checking…">Preview</SubmitButton>
      </section>
    </form>
  );
}
