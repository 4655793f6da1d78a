// Everything that happened to the invoice, newest first, a page at a time: each change (created,
// imported, edited, owner or status changed: who, when, each field before and after) and each
// attempt of any purpose (a summary, a review, categories), named by its purpose, with its own timeline, interleaved by time (lib/leases/timeline.ts). Times in
// the viewer's date format, time and zone. Rendered on the server; the invoice's event stream
// refreshes it when the invoice changes (invoice-live.tsx), and a reload does without JavaScript.
import Link from "next/link";
import type { ChangeView, NumberedAttempt, TimelineEntry } from "@/lib/leases";
import { formatDateTime, type Viewer } from "@/app/_lib/format";
import { attemptWords, CHANGE_WORDS, changeLines, HISTORY_INTRO } from "@/app/_lib/history-words";
import { eventWords } from "@/app/_lib/lease-words";
import { CAUSED_BY_ACTOR, displayOf, isEventKind, type LeaseDisplay } from "@/lib/lease-codes";
import { purposeOf } from "@/lib/purposes";

export const HISTORY_PAGE_SIZE = 5;

/**
 * An attempt's anchor: by its lease id when it is the viewer's own (the owner's links and tests
 * name it), else by its purpose and number (numbers count per purpose), since another member's
 * lease id is theirs alone and would travel in the markup and the RSC payload.
 */
export const attemptAnchor = (attempt: { id: string; mine: boolean; purpose: string }, number: number) =>
  attempt.mine ? `attempt-${attempt.id}` : `attempt-${attempt.purpose}-${number}`;

const STATUS_WORDS: Record<LeaseDisplay, string> = {
  generating: "Being written",
  proposed: "Waiting for review",
  applied: "Applied",
  expired: "Expired",
  rejected: "Not applied",
  outdated: "Withdrawn: the invoice changed",
  failed: "Failed",
};

export function History({
  invoiceId,
  currency,
  page,
  total,
  entries,
  names,
  viewer,
  appliedId,
}: {
  invoiceId: string;
  currency: string;
  page: number;
  total: number;
  entries: TimelineEntry[];
  names: Record<string, string>;
  viewer: Viewer;
  appliedId: string | null;
}) {
  const pages = Math.max(1, Math.ceil(total / HISTORY_PAGE_SIZE));
  const pageHref = (n: number) => `/invoices/${invoiceId}?history=${n}#history-heading`;
  return (
    <section className="card history" aria-labelledby="history-heading" data-testid="history">
      <h2 id="history-heading">History</h2>
      {total === 0 ? (
        <p className="muted">Nothing has been recorded for this invoice yet.</p>
      ) : (
        <>
          <p className="muted small">
            {HISTORY_INTRO} Times are in {zoneName(viewer)}.
          </p>
          {entries.length === 0 ? <p className="muted">There is nothing on this page.</p> : null}
          <ol className="attempts">
            {entries.map((entry) =>
              entry.type === "change" ? (
                <Change key={changeKey(entry.change)} change={entry.change} names={names} currency={currency} viewer={viewer} />
              ) : (
                // Keyed by its anchor: keys travel in the RSC payload, and another member's lease id must not.
                <Attempt
                  key={attemptAnchor(entry.attempt, entry.attempt.number)}
                  attempt={entry.attempt}
                  viewer={viewer}
                  appliedId={appliedId}
                />
              ),
            )}
          </ol>
          {pages > 1 ? (
            <nav className="pager" aria-label="History pages">
              {page > 1 ? (
                <Link href={pageHref(page - 1)} rel="prev">
                  Newer entries
                </Link>
              ) : (
                <span />
              )}
              <span className="muted small">
                Page {Math.min(page, pages)} of {pages}
              </span>
              {page < pages ? (
                <Link href={pageHref(page + 1)} rel="next">
                  Older entries
                </Link>
              ) : (
                <span />
              )}
            </nav>
          ) : null}
        </>
      )}
    </section>
  );
}

/**
 * A change's name on the page, from the invoice's own version and time: not invoice_change.id,
 * one counter for every organization's changes, which keys and ids would carry to the browser.
 */
const changeKey = (change: ChangeView) => `change-${change.version}-${change.kind}-${change.at.getTime()}`;

/** One recorded change: what, who and when, then each field before and after. */
function Change({
  change,
  names,
  currency,
  viewer,
}: {
  change: ChangeView;
  names: Record<string, string>;
  currency: string;
  viewer: Viewer;
}) {
  const at = change.at.toISOString();
  const lines = changeLines(change.changes, { locale: viewer.locale, currency, names });
  const heading = `${changeKey(change)}-heading`;
  return (
    <li className="attempt change" data-testid="change" data-kind={change.kind} aria-labelledby={heading}>
      <h3 id={heading} className="attempt__heading">
        {CHANGE_WORDS[change.kind]}
      </h3>
      <p className="small attempt__who">
        By {change.actorName ?? "a former member"} on <time dateTime={at}>{formatDateTime(at, viewer)}</time>
      </p>
      {lines.length ? (
        <ul className="change__fields">
          {lines.map((line) => (
            <li key={line.field} data-field={line.field}>
              {line.text}
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** One attempt, named by its purpose ("Review attempt 2"), with its own timeline in its purpose's words. */
function Attempt({ attempt, viewer, appliedId }: { attempt: NumberedAttempt; viewer: Viewer; appliedId: string | null }) {
  const number = attempt.number;
  const opened = attempt.events.find((e) => e.kind === "opened");
  const json = attempt.events.map((e) => ({ at: e.at.toISOString(), kind: e.kind, detail: e.detail }));
  const display = displayOf({ status: attempt.status, closed_reason: attempt.closedReason });
  const anchor = attemptAnchor(attempt, number);
  const words = purposeOf(attempt.purpose).words;
  return (
    <li
      id={anchor}
      className="attempt"
      data-testid="attempt"
      data-lease-id={attempt.mine ? attempt.id : undefined}
      data-display={display}
      data-attempt-purpose={attempt.purpose}
      aria-labelledby={`${anchor}-heading`}
    >
      <h3 id={`${anchor}-heading`} className="attempt__heading">
        {attemptWords(words, number)}: {STATUS_WORDS[display]}
        {attempt.id === appliedId ? <span className="attempt__current"> (the summary on the invoice)</span> : null}
      </h3>
      <p className="small attempt__who">
        Requested by {attempt.actorName}
        {opened ? (
          <>
            {" "}
            on <time dateTime={opened.at.toISOString()}>{formatDateTime(opened.at.toISOString(), viewer)}</time>
          </>
        ) : null}
      </p>
      {attempt.receipt ? (
        <p className="small attempt__receipt" data-testid="receipt">
          Written by {attempt.receipt.writtenBy}
          {attempt.receipt.approvedBy ? <>, approved by {attempt.receipt.approvedBy}</> : null},{" "}
          <time dateTime={new Date(attempt.receipt.at).toISOString()}>
            {formatDateTime(new Date(attempt.receipt.at).toISOString(), viewer)}
          </time>
        </p>
      ) : null}
      <ol className="timeline">
        {json.map((event, i) => (
          // By place, not by lease_event.id: that id counts every lease's events, and
          // keys travel in the RSC payload. An attempt's events only ever grow at the end.
          <li key={i} data-kind={event.kind}>
            <time dateTime={event.at}>{formatDateTime(event.at, viewer)}</time>
            <span>
              {eventWords(event, json.slice(0, i), null, words)}
              {isEventKind(event.kind) && CAUSED_BY_ACTOR[event.kind] ? <span className="muted"> · {attempt.actorName}</span> : null}
            </span>
          </li>
        ))}
      </ol>
    </li>
  );
}

/** "Europe/Berlin (CET)", or "UTC": the zone the times are written in. */
function zoneName(viewer: Viewer): string {
  if (viewer.timeZone === "UTC") return "UTC";
  const short = new Intl.DateTimeFormat(viewer.locale, { timeZone: viewer.timeZone, timeZoneName: "short" })
    .formatToParts(new Date())
    .find((p) => p.type === "timeZoneName")?.value;
  return short ? `${viewer.timeZone.replaceAll("_", " ")} (${short})` : viewer.timeZone;
}
