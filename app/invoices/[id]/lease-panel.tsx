"use client";
// The lease panel only shows the lease as the server last described it: pushed over
// server-sent events, or polled every 2 s while they fail (the stream is tried again, with
// backoff, until it works). It decides nothing: the countdown is the server's deadline minus
// the server's `now` (counted down on a monotonic clock, not the browser's wall clock), and at
// the deadline it asks the server, whatever the transport, so an expiry shows within a second
// or two. The buttons are plain forms posting server actions, so they work before (or
// without) JavaScript; the action sends the browser back to the page with what to say.
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, type FormEvent, type ReactNode, type RefObject } from "react";
import { useFormStatus } from "react-dom";
import { SubmitButton } from "@/app/_components/submit-button";
import { formatDateTime, localizeDates, type Viewer } from "@/app/_lib/format";
import {
  closedWords,
  countdown,
  displayOf,
  eventWords,
  summaryText,
  type LeaseDisplay,
  type LeaseJson,
  type Notice,
} from "@/app/_lib/lease-words";
import { applyAction, cancelAction, discardAction, summarizeAction } from "./actions";

const POLL_MS = 2_000;
/** An event stream that has not opened by then is given up for polling (and tried again later). */
const SSE_OPEN_TIMEOUT_MS = 5_000;
/** After a fallback to polling, the stream is tried again after 2 s, 4 s, 8 s... at most 30 s apart. */
const SSE_RETRY_FIRST_MS = 2_000;
const SSE_RETRY_MAX_MS = 30_000;
/** After the deadline, the server is asked this soon, then every second until it says. */
const DEADLINE_CHECK_MS = 500;
const DEADLINE_RECHECK_MS = 1_000;

/**
 * How the page hears of changes. Only the words are for people: "live" (pushed), "polling"
 * (asked every 2 s) and "connecting" read alike to a finance user, the page keeps itself
 * current; `data-channel` tells them apart for tests and support.
 */
type Channel = "connecting" | "live" | "polling" | "offline" | "lost";

const TERMINAL = new Set<string>(["applied", "rejected", "expired"]);

/** The later of two readings of the same lease, by the database clock. */
function newer(candidate: LeaseJson | null, current: LeaseJson | null): boolean {
  if (!candidate) return false;
  if (!current || candidate.lease_id !== current.lease_id) return true;
  return Date.parse(candidate.server_now) >= Date.parse(current.server_now);
}

const BADGE: Record<LeaseDisplay, string> = {
  generating: "Generating",
  proposed: "Ready for review",
  applied: "Applied",
  expired: "Expired",
  rejected: "Not applied",
  outdated: "Out of date",
  failed: "Failed",
};

export function LeasePanel({
  invoiceId,
  initial,
  viewer,
  notice,
}: {
  invoiceId: string;
  initial: LeaseJson | null;
  viewer: Viewer;
  /** What the last action said (from the page's `notice` parameter), if about a lease. */
  notice: Notice | null;
}) {
  const [view, setView] = useState<LeaseJson | null>(initial);
  const [seenInitial, setSeenInitial] = useState(initial);
  const [channel, setChannel] = useState<Channel>("connecting");

  // A server render after an action brings a newer reading: adopt it.
  if (initial !== seenInitial) {
    setSeenInitial(initial);
    if (newer(initial, view)) setView(initial);
  }

  const leaseId = view?.lease_id ?? null;
  // A terminal lease never changes again: nothing to follow (the server ends its stream too).
  const settled = view ? TERMINAL.has(view.status) : false;
  useLeaseFeed(settled ? null : leaseId, setView, setChannel);
  useDeadlineCheck(settled ? null : view, setView);

  // A change pushed to the panel changed more than the panel: an apply wrote the summary, an
  // edit elsewhere the details, and the history has a new line. Re-read the page.
  const router = useRouter();
  const shownStatus = useRef(view?.status);
  useEffect(() => {
    const previous = shownStatus.current;
    shownStatus.current = view?.status;
    if (view?.status && previous && previous !== view.status) router.refresh();
  }, [view?.status, router]);

  // The notice arrives with one server render; the next (a refresh after a pushed change) no
  // longer carries it, since it has left the address. Kept while the lease stands where the
  // notice found it.
  const [kept, setKept] = useState<{ notice: Notice; status: string | undefined } | null>(
    notice ? { notice, status: initial?.status } : null,
  );
  if (notice && (notice.text !== kept?.notice.text || initial?.status !== kept?.status)) {
    setKept({ notice, status: initial?.status });
  }
  const shownNotice = kept && kept.status === view?.status ? kept.notice : null;

  const display = view ? displayOf(view) : null;
  const inFlight = display === "generating" || display === "proposed";
  const remaining = useServerCountdown(view, inFlight);
  // A refusal says, once, why the lease is where it is: for a closed lease it takes the place
  // of the state line, which would say the same thing in other words.
  const refusal = shownNotice && !shownNotice.ok ? shownNotice : null;
  const replacesState = Boolean(refusal && view && settled);

  return (
    <section
      className="card lease"
      aria-labelledby="lease-heading"
      data-testid="lease-panel"
      data-display={display ?? "none"}
      data-lease-id={leaseId ?? ""}
    >
      <h2 id="lease-heading">AI summary</h2>

      {!view ? (
        <>
          <p>Ask for a summary of this invoice. You review it before anything is saved to the invoice.</p>
          <SummarizeForm invoiceId={invoiceId} label="Summarize" />
        </>
      ) : (
        <>
          <span className="lease__badge">{BADGE[display!]}</span>
          {replacesState ? null : (
            <div role="status" aria-live="polite" data-testid="lease-state">
              {display === "generating" ? (
                <p>
                  Writing the summary… It will wait here for your review; nothing is saved to the invoice until you
                  apply it. You can close this tab.
                </p>
              ) : display === "proposed" ? (
                <p>The summary is ready. Apply saves it to the invoice; Discard throws it away.</p>
              ) : (
                <p>{closedWords(view)}</p>
              )}
            </div>
          )}
          {refusal ? <NoticeLine notice={refusal} /> : null}

          {inFlight ? (
            <p className="lease__time">
              {remaining > 0 ? (
                <>
                  {display === "generating" ? "Time left to finish: " : "Time left to apply: "}
                  <span className="lease__countdown" role="timer" aria-live="off" data-testid="countdown">
                    {countdown(remaining)}
                  </span>
                </>
              ) : (
                <>Time is up. Checking with the server…</>
              )}
            </p>
          ) : null}

          {display === "generating" ? (
            <div className="actions">
              <LeaseActionForm action={cancelAction} invoiceId={invoiceId} leaseId={view.lease_id} label="Cancel" secondary />
            </div>
          ) : null}

          {display === "proposed" ? (
            <>
              <div className="actions">
                <LeaseActionForm action={applyAction} invoiceId={invoiceId} leaseId={view.lease_id} label="Apply" />
                <LeaseActionForm action={discardAction} invoiceId={invoiceId} leaseId={view.lease_id} label="Discard" secondary />
              </div>
              <h3>Proposed summary</h3>
              <blockquote className="proposal" data-testid="proposal" suppressHydrationWarning>
                {localizeDates(summaryText(view.proposal) ?? "(empty summary)", viewer.locale)}
              </blockquote>
            </>
          ) : null}

          {display === "applied" ? <SummarizeForm invoiceId={invoiceId} label="Summarize" secondary /> : null}
          {display === "outdated" ? <SummarizeForm invoiceId={invoiceId} label="Summarize again" /> : null}
          {display === "expired" || display === "rejected" || display === "failed" ? (
            <SummarizeForm invoiceId={invoiceId} label="Try again" />
          ) : null}
        </>
      )}

      {!view && refusal ? <NoticeLine notice={refusal} /> : null}

      {view && view.events.length > 0 ? (
        <>
          <h3>What happened</h3>
          <ol className="timeline" data-testid="timeline">
            {view.events.map((event, index) => (
              <li key={`${event.at}-${index}`} data-kind={event.kind}>
                <time dateTime={event.at} suppressHydrationWarning>
                  {formatDateTime(event.at, viewer)}
                </time>
                <span>{eventWords(event, view.events.slice(0, index))}</span>
              </li>
            ))}
          </ol>
        </>
      ) : null}

      {view && !settled ? (
        <p className="channel-note" data-testid="channel" data-channel={channel}>
          {channel === "live" || channel === "polling"
            ? "This status updates by itself."
            : channel === "offline"
              ? "The server cannot be reached right now, so this status may be out of date. Trying again…"
              : channel === "lost"
                ? "You are signed out. Sign in again to follow this summary."
                : "Status as of when the page loaded. Reload the page to see changes."}
        </p>
      ) : null}
    </section>
  );
}

function NoticeLine({ notice }: { notice: Notice }) {
  return (
    <p role={notice.ok ? "status" : "alert"} className={`notice ${notice.ok ? "notice--ok" : "notice--error"}`} data-testid="lease-message">
      {notice.text}
    </p>
  );
}

function SummarizeForm({ invoiceId, label, secondary = false }: { invoiceId: string; label: string; secondary?: boolean }) {
  return (
    <ActionForm action={summarizeAction} fields={{ invoice_id: invoiceId }}>
      <SubmitButton className={secondary ? "button button--secondary" : "button"}>{label}</SubmitButton>
    </ActionForm>
  );
}

function LeaseActionForm({
  action,
  invoiceId,
  leaseId,
  label,
  secondary = false,
}: {
  action: (formData: FormData) => Promise<void>;
  invoiceId: string;
  leaseId: string;
  label: string;
  secondary?: boolean;
}) {
  return (
    <ActionForm action={action} fields={{ lease_id: leaseId, invoice_id: invoiceId }}>
      <SubmitButton className={secondary ? "button button--secondary" : "button"}>{label}</SubmitButton>
    </ActionForm>
  );
}

/**
 * A form posting a server action: with JavaScript, once at a time (a second submit before
 * React re-renders the disabled button is dropped); without it, a plain POST that the action
 * answers with a redirect back to the page.
 */
function ActionForm({
  action,
  fields,
  children,
}: {
  action: (formData: FormData) => Promise<void>;
  fields: Record<string, string>;
  children: ReactNode;
}) {
  const busy = useRef(false);
  const guard = (event: FormEvent<HTMLFormElement>) => {
    if (busy.current) event.preventDefault();
    else busy.current = true;
  };
  return (
    <form onSubmit={guard} action={action}>
      <ReleaseWhenDone busy={busy} />
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      {children}
    </form>
  );
}

/** Lets the form submit again once its action has finished. */
function ReleaseWhenDone({ busy }: { busy: RefObject<boolean> }) {
  const { pending } = useFormStatus();
  useEffect(() => {
    if (!pending) busy.current = false;
  }, [pending, busy]);
  return null;
}

/**
 * Follows one lease: EventSource first; when it fails (or never opens), polling GET
 * /api/leases/:id every 2 s while the stream is tried again with backoff; once it opens,
 * polling stops. Every answer replaces the view if it is a later reading.
 */
function useLeaseFeed(
  leaseId: string | null,
  setView: (update: (current: LeaseJson | null) => LeaseJson | null) => void,
  setChannel: (channel: Channel) => void,
) {
  useEffect(() => {
    if (!leaseId) return;
    let stopped = false;
    let source: EventSource | null = null;
    let pollTimer: ReturnType<typeof setInterval> | undefined;
    let openTimer: ReturnType<typeof setTimeout> | undefined;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let retryDelay = SSE_RETRY_FIRST_MS;
    let polling = false;
    let inFlight = false;
    const url = `/api/leases/${encodeURIComponent(leaseId)}`;

    const accept = (next: LeaseJson) => {
      if (!stopped && next.lease_id === leaseId) setView((current) => (newer(next, current) ? next : current));
    };
    const teardown = () => {
      stopped = true;
      source?.close();
      clearInterval(pollTimer);
      clearTimeout(openTimer);
      clearTimeout(retryTimer);
    };

    const poll = async () => {
      if (stopped || inFlight) return;
      inFlight = true;
      try {
        const response = await fetch(url, { cache: "no-store", headers: { accept: "application/json" } });
        if (response.status === 401 || response.status === 404) {
          teardown();
          return setChannel("lost");
        }
        if (response.ok) {
          accept((await response.json()) as LeaseJson);
          if (!stopped && polling) setChannel("polling");
        }
      } catch {
        // Offline for a moment: say so; the next tick tries again.
        if (!stopped && polling) setChannel("offline");
      } finally {
        inFlight = false;
      }
    };
    const startPolling = () => {
      if (stopped || polling) return;
      polling = true;
      setChannel("polling");
      void poll();
      pollTimer = setInterval(() => void poll(), POLL_MS);
    };
    const stopPolling = () => {
      polling = false;
      clearInterval(pollTimer);
    };

    /** Gives up on this stream for now: poll meanwhile, and try a new one after the backoff. */
    const fallBack = () => {
      source?.close();
      source = null;
      clearTimeout(openTimer);
      startPolling();
      if (stopped || typeof EventSource === "undefined") return;
      clearTimeout(retryTimer);
      retryTimer = setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, SSE_RETRY_MAX_MS);
    };

    function connect() {
      if (stopped) return;
      let failures = 0;
      const stream = new EventSource(`${url}/events`);
      source = stream;
      openTimer = setTimeout(() => {
        if (source === stream && stream.readyState !== EventSource.OPEN) fallBack();
      }, SSE_OPEN_TIMEOUT_MS);
      stream.onopen = () => {
        if (source !== stream) return;
        failures = 0;
        retryDelay = SSE_RETRY_FIRST_MS;
        clearTimeout(openTimer);
        stopPolling();
        setChannel("live");
      };
      stream.addEventListener("lease", (event) => {
        try {
          accept(JSON.parse((event as MessageEvent<string>).data) as LeaseJson);
        } catch {
          // A malformed message is ignored; the next one replaces it.
        }
      });
      stream.onerror = () => {
        if (source !== stream) return;
        failures += 1;
        // CLOSED: the server refused (401, 404, 429 too many streams, 503); repeated errors:
        // it keeps dropping. A stream the server ended after a terminal state is not an error
        // to act on: that state is in the view, and this effect is being torn down.
        if (stream.readyState === EventSource.CLOSED || failures >= 3) fallBack();
      };
    }

    if (typeof EventSource === "undefined") startPolling();
    else connect();
    return teardown;
  }, [leaseId, setView, setChannel]);
}

/**
 * At the deadline (by the server's clock, as the countdown counts), asks the server where the
 * lease stands, then every second until it is no longer in flight past its deadline. Whatever
 * the transport does (a stream gone quiet behind a proxy, a poll just missed), the expiry
 * shows within about a second.
 */
function useDeadlineCheck(
  view: LeaseJson | null,
  setView: (update: (current: LeaseJson | null) => LeaseJson | null) => void,
) {
  const leaseId = view?.lease_id ?? null;
  const untilDeadline = view ? Date.parse(view.deadline_at) - Date.parse(view.server_now) : 0;
  const reading = view ? `${view.lease_id}@${view.server_now}` : "";
  useEffect(() => {
    if (!leaseId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = async () => {
      try {
        const response = await fetch(`/api/leases/${encodeURIComponent(leaseId)}`, {
          cache: "no-store",
          headers: { accept: "application/json" },
        });
        if (stopped || !response.ok) return;
        const next = (await response.json()) as LeaseJson;
        setView((current) => (newer(next, current) ? next : current));
      } catch {
        // The next check tries again.
      }
      if (!stopped) timer = setTimeout(check, DEADLINE_RECHECK_MS);
    };
    timer = setTimeout(check, Math.max(0, untilDeadline) + DEADLINE_CHECK_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // A new reading restarts the wait from its own server_now.
  }, [leaseId, untilDeadline, reading, setView]);
}

/**
 * Seconds left until the deadline, by the server's clock: the reading's deadline minus the
 * reading's `server_now`, less the time elapsed since the reading arrived (monotonic).
 * The first render uses the reading alone, so the server and the browser render the same.
 */
function useServerCountdown(view: LeaseJson | null, running: boolean): number {
  const atReading = view ? (Date.parse(view.deadline_at) - Date.parse(view.server_now)) / 1000 : 0;
  const reading = view ? `${view.lease_id}@${view.server_now}` : "";
  const [tick, setTick] = useState({ reading, elapsed: 0 });
  useEffect(() => {
    if (!running) return;
    const start = performance.now();
    const timer = setInterval(() => setTick({ reading, elapsed: (performance.now() - start) / 1000 }), 250);
    return () => clearInterval(timer);
  }, [reading, running]);
  const elapsed = tick.reading === reading ? tick.elapsed : 0;
  return Math.ceil(atReading - elapsed);
}
