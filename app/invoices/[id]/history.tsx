// Every summary attempt on the invoice, newest first, a page at a time, each with its
// timeline: when (the viewer's date format, time and zone), what, and who. Rendered on the
// server; a page reload (or the refresh after an action) brings it up to date.
import Link from "next/link";
import type { AttemptView } from "@/lib/leases";
import { formatDateTime, type Viewer } from "@/app/_lib/format";
import { eventWords } from "@/app/_lib/lease-words";
import { CAUSED_BY_ACTOR, displayOf, isEventKind, type LeaseDisplay } from "@/lib/lease-codes";

export const HISTORY_PAGE_SIZE = 5;

/**
 * An attempt's anchor: by its lease id when it is the viewer's own (the owner's links and tests
 * name it), else by its number, since another member's lease id is theirs alone and would
 * travel in the markup and the RSC payload.
 */
export const attemptAnchor = (attempt: { id: string; mine: boolean }, number: number) =>
  attempt.mine ? `attempt-${attempt.id}` : `attempt-n${number}`;

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
  page,
  total,
  attempts,
  viewer,
  appliedId,
}: {
  invoiceId: string;
  page: number;
  total: number;
  attempts: AttemptView[];
  viewer: Viewer;
  appliedId: string | null;
}) {
  const pages = Math.max(1, Math.ceil(total / HISTORY_PAGE_SIZE));
  const pageHref = (n: number) => `/invoices/${invoiceId}?history=${n}#history-heading`;
  return (
    <section className="card history" aria-labelledby="history-heading" data-testid="history">
      <h2 id="history-heading">History</h2>
      {total === 0 ? (
        <p className="muted">No summary has been requested for this invoice yet.</p>
      ) : (
        <>
          <p className="muted small">Every summary requested for this invoice, newest first. Times are in {zoneName(viewer)}.</p>
          {attempts.length === 0 ? <p className="muted">There are no attempts on this page.</p> : null}
          <ol className="attempts">
            {attempts.map((attempt, index) => {
              const number = total - ((page - 1) * HISTORY_PAGE_SIZE + index);
              const opened = attempt.events.find((e) => e.kind === "opened");
              const json = attempt.events.map((e) => ({ at: e.at.toISOString(), kind: e.kind, detail: e.detail }));
              const display = displayOf({ status: attempt.status, closed_reason: attempt.closedReason });
              const anchor = attemptAnchor(attempt, number);
              return (
                <li
                  key={anchor}
                  id={anchor}
                  className="attempt"
                  data-testid="attempt"
                  data-lease-id={attempt.mine ? attempt.id : undefined}
                  data-display={display}
                  aria-labelledby={`${anchor}-heading`}
                >
                  <h3 id={`${anchor}-heading`} className="attempt__heading">
                    Attempt {number}: {STATUS_WORDS[display]}
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
                  <ol className="timeline">
                    {json.map((event, i) => (
                      // By place, not by lease_event.id: that id counts every lease's events, and
                      // keys travel in the RSC payload. An attempt's events only ever grow at the end.
                      <li key={i} data-kind={event.kind}>
                        <time dateTime={event.at}>{formatDateTime(event.at, viewer)}</time>
                        <span>
                          {eventWords(event, json.slice(0, i))}
                          {isEventKind(event.kind) && CAUSED_BY_ACTOR[event.kind] ? (
                            <span className="muted"> · {attempt.actorName}</span>
                          ) : null}
                        </span>
                      </li>
                    ))}
                  </ol>
                </li>
              );
            })}
          </ol>
          {pages > 1 ? (
            <nav className="pager" aria-label="History pages">
              {page > 1 ? (
                <Link href={pageHref(page - 1)} rel="prev">
                  Newer attempts
                </Link>
              ) : (
                <span />
              )}
              <span className="muted small">
                Page {Math.min(page, pages)} of {pages}
              </span>
              {page < pages ? (
                <Link href={pageHref(page + 1)} rel="next">
                  Older attempts
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

/** "Europe/Berlin (CET)", or "UTC": the zone the times are written in. */
function zoneName(viewer: Viewer): string {
  if (viewer.timeZone === "UTC") return "UTC";
  const short = new Intl.DateTimeFormat(viewer.locale, { timeZone: viewer.timeZone, timeZoneName: "short" })
    .formatToParts(new Date())
    .find((p) => p.type === "timeZoneName")?.value;
  return short ? `${viewer.timeZone.replaceAll("_", " ")} (${short})` : viewer.timeZone;
}
