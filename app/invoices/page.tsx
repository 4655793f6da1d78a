import type { Metadata } from "next";
import Form from "next/form";
import Link from "next/link";
import { getDb } from "@/db/client";
import { DUE_FILTERS, listInvoicesWithState, ListQuery, listQueryString, SORTS, type ListRow } from "@/lib/invoice-list";
import type { ListState } from "@/lib/lease-codes";
import { requireActor } from "@/app/_lib/actor";
import { formatDate, formatDateTime, formatMoney, formatMoneyWithCode, type Viewer } from "@/app/_lib/format";
import { listStoppedWords } from "@/app/_lib/lease-words";
import { shownStatus, STATUS_FILTER_WORDS, STATUS_WORDS } from "@/app/_lib/status-words";
import { staleWords } from "@/app/_lib/history-words";
import { staleSummaries } from "@/lib/summary-staleness";
import { getViewer } from "@/app/_lib/viewer";
import { ZoneSync } from "@/app/invoices/[id]/zone-sync";
import { ListRefresher, TimeLeft } from "./list-live";

export const metadata: Metadata = { title: "Invoices" };

// The filters' words, in the order the menus list them.
const STATE_OPTIONS: Record<"all" | ListState, string> = {
  all: "Any",
  proposed: "Ready for review",
  generating: "Being written",
  expired: "Time ran out",
  stopped: "Discarded or stopped",
  none: "Not summarized",
  applied: "Applied",
};
const DUE_OPTIONS: Record<(typeof DUE_FILTERS)[number], string> = {
  any: "Any date",
  overdue: "Overdue",
  week: "In the next 7 days",
  month: "In the next 30 days",
};
const SORT_OPTIONS: Record<(typeof SORTS)[number], string> = {
  "issued-newest": "Issue date, newest first",
  attention: "Needs attention first",
  "due-soonest": "Due date, soonest first",
  "due-latest": "Due date, latest first",
};

function StateLine({ row, viewer, serverNow }: { row: ListRow; viewer: Viewer; serverNow: string }) {
  const lease = row.lease;
  const when = (d: Date | null) => (d ? formatDateTime(d.toISOString(), viewer) : null);
  let words: React.ReactNode;
  switch (row.state) {
    case "none":
      words = "No summary requested yet.";
      break;
    case "generating":
      words = (
        <>
          Summary being written · <TimeLeft deadline={lease!.deadlineAt.toISOString()} serverNow={serverNow} />
        </>
      );
      break;
    case "proposed":
      words = (
        <>
          <strong>Summary ready for review</strong> · <TimeLeft deadline={lease!.deadlineAt.toISOString()} serverNow={serverNow} /> to apply
          it
        </>
      );
      break;
    case "expired":
      words = `Time ran out on the summary${lease!.closedAt ? ` at ${when(lease!.closedAt)}` : ""}. Nothing was changed.`;
      break;
    case "applied":
      words = `Summary applied by ${lease!.actorName}${lease!.closedAt ? ` on ${when(lease!.closedAt)}` : ""}.`;
      break;
    case "stopped":
      words = listStoppedWords(lease!.closedReason);
      break;
  }
  return (
    <p className={`list-state list-state--${row.state}`} data-testid="list-state">
      {words}
    </p>
  );
}

/** One labelled menu of the filter form; options in the record's order. */
function SelectField(props: { id: string; name: string; label: string; options: Record<string, string>; value: string }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} name={props.name} defaultValue={props.value}>
        {Object.entries(props.options).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

type Search = Promise<Record<string, string | string[] | undefined>>;

export default async function InvoicesPage({ searchParams }: { searchParams: Search }) {
  const actor = await requireActor();
  const query = ListQuery.parse(await searchParams);
  const viewer = await getViewer();
  const db = await getDb();
  const [{ rows, totals, total, now }, stale] = await Promise.all([listInvoicesWithState(db, actor, query), staleSummaries(db, actor)]);
  const serverNow = now.toISOString();
  const filtered = query.state !== "all" || query.due !== "any" || query.status !== "any" || query.q !== "";
  const queryString = listQueryString(query);

  return (
    <>
      {/* Every invoice of the team, whoever owns it: each card names its owner. */}
      <h1>{actor.orgName}: invoices</h1>
      <p className="list-actions">
        <Link href="/invoices/new" className="button button--secondary">
          New invoice
        </Link>{" "}
        <Link href="/invoices/import" className="button button--secondary">
          Import CSV
        </Link>
      </p>
      <ListRefresher />
      <ZoneSync zone={viewer.timeZone} />
      {total === 0 ? (
        <p className="muted">Your team has no invoices yet.</p>
      ) : (
        <>
          {/* A plain GET form: filters and sorting work without JavaScript, and the URL keeps them. */}
          <Form action="/invoices" className="list-filters" aria-label="Filter and sort invoices">
            <div className="field list-filters__search">
              <label htmlFor="filter-q">Search number or counterparty</label>
              <input id="filter-q" name="q" type="search" defaultValue={query.q} maxLength={200} autoComplete="off" />
            </div>
            <SelectField id="filter-status" name="status" label="Status" options={STATUS_FILTER_WORDS} value={query.status} />
            <SelectField id="filter-state" name="state" label="Summary" options={STATE_OPTIONS} value={query.state} />
            <SelectField id="filter-due" name="due" label="Due" options={DUE_OPTIONS} value={query.due} />
            <SelectField id="filter-sort" name="sort" label="Sort by" options={SORT_OPTIONS} value={query.sort} />
            <div className="list-filters__actions">
              <button type="submit" className="button button--secondary">
                Show
              </button>
              {filtered || query.sort !== "issued-newest" ? (
                <Link href="/invoices" className="list-filters__clear">
                  Clear
                </Link>
              ) : null}
            </div>
          </Form>
          <div className="list-summary">
            <p className="muted small" data-testid="list-count">
              {filtered ? `Showing ${rows.length} of ${total} invoices.` : `${total} invoice${total === 1 ? "" : "s"}.`}
            </p>
            {totals.length > 0 ? (
              <p className="small" data-testid="list-totals">
                <span className="muted">Total shown: </span>
                {totals.map((t) => formatMoneyWithCode(t.cents, t.currency, viewer.locale)).join(" · ")}
              </p>
            ) : null}
            {/* The same query string: the file holds exactly the rows shown here. */}
            <a href={`/api/invoices/export${queryString ? `?${queryString}` : ""}`} className="button button--secondary" download>
              Export CSV
            </a>
          </div>
          {rows.length === 0 ? (
            <p className="muted">No invoices match these filters.</p>
          ) : (
            <ul className="invoice-list">
              {rows.map((inv) => (
                <li
                  key={inv.id}
                  className="card"
                  data-testid="invoice-row"
                  data-state={inv.state}
                  data-status={shownStatus(inv)}
                  data-number={inv.number}
                >
                  <Link href={`/invoices/${inv.id}`}>
                    <div className="invoice-list__top">
                      <span className="invoice-list__number">
                        {inv.number}{" "}
                        <span className={`status-badge status-badge--${shownStatus(inv)}`}>{STATUS_WORDS[shownStatus(inv)]}</span>
                      </span>
                      <span className="invoice-list__total">{formatMoney(inv.totalCents, inv.currency, viewer.locale)}</span>
                    </div>
                    <div>{inv.counterparty}</div>
                    <div className="muted small">
                      Issued {formatDate(inv.issuedOn, viewer.locale)} · due {formatDate(inv.dueOn, viewer.locale)}
                      {inv.paidOn ? ` · paid ${formatDate(inv.paidOn, viewer.locale)}` : ""}
                    </div>
                    <div className="muted small" data-testid="invoice-owner">
                      {`Owner: ${inv.ownerName}`}
                    </div>
                  </Link>
                  <StateLine row={inv} viewer={viewer} serverNow={serverNow} />
                  {stale.has(inv.id) ? (
                    <p className="list-state list-state--stale" data-testid="summary-stale">
                      Out of date: {staleWords(stale.get(inv.id)!)}
                    </p>
                  ) : null}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </>
  );
}
