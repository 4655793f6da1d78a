"use client";
// The lease panel only shows the lease as the server last described it: pushed over
// server-sent events, or polled every 2 s when they fail. It decides nothing: the countdown
// is the server's deadline minus the server's `now` (counted down on a monotonic clock, not
// the browser's wall clock), and the buttons send requests whose answers it then shows.
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import {
  clockTime,
  closedWords,
  countdown,
  displayOf,
  eventWords,
  summaryText,
  type LeaseDisplay,
  type LeaseJson,
} from "@/app/_lib/lease-words";
import { applyAction, discardAction, summarizeAction, type ActionResult } from "./actions";

const POLL_MS = 2_000;
/** An event stream that has not opened by then is given up for polling. */
const SSE_OPEN_TIMEOUT_MS = 5_000;

type Channel = "connecting" | "live" | "polling" | "lost";

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
  failed: "Failed",
};

export function LeasePanel({ invoiceId, initial }: { invoiceId: string; initial: LeaseJson | null }) {
  const [view, setView] = useState<LeaseJson | null>(initial);
  const [seenInitial, setSeenInitial] = useState(initial);
  const [message, setMessage] = useState<ActionResult | null>(null);
  const [channel, setChannel] = useState<Channel>("connecting");

  // A server render after an action (refresh) brings a newer reading: adopt it.
  if (initial !== seenInitial) {
    setSeenInitial(initial);
    if (newer(initial, view)) setView(initial);
  }

  const leaseId = view?.lease_id ?? null;
  // A terminal lease never changes again: nothing to follow (the server ends its stream too).
  const settled = view ? TERMINAL.has(view.status) : false;
  useLeaseFeed(settled ? null : leaseId, setView, setChannel);

  // An apply made elsewhere (another tab) changed the invoice too: re-read the page.
  const router = useRouter();
  const shownStatus = useRef(view?.status);
  useEffect(() => {
    const previous = shownStatus.current;
    shownStatus.current = view?.status;
    if (view?.status === "applied" && previous && previous !== "applied") router.refresh();
  }, [view?.status, router]);

  const display = view ? displayOf(view) : null;
  const inFlight = display === "generating" || display === "proposed";
  const remaining = useServerCountdown(view, inFlight);

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
          <SummarizeForm invoiceId={invoiceId} label="Summarize" onResult={setMessage} />
        </>
      ) : (
        <>
          <span className="lease__badge">{BADGE[display!]}</span>
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

          {inFlight ? (
            <p className="muted">
              {remaining > 0 ? (
                <>
                  {display === "generating" ? "Time left to finish: " : "Time left to apply: "}
                  <span className="lease__countdown" role="timer" aria-live="off" data-testid="countdown">
                    {countdown(remaining)}
                  </span>
                </>
              ) : (
                <>Time is up. Waiting for the server to confirm…</>
              )}
            </p>
          ) : null}

          {display === "proposed" ? (
            <>
              <h3>Proposed summary</h3>
              <blockquote className="proposal" data-testid="proposal">
                {summaryText(view.proposal) ?? "(empty summary)"}
              </blockquote>
              <div className="actions">
                <LeaseActionForm action={applyAction} leaseId={view.lease_id} label="Apply" onResult={setMessage} />
                <LeaseActionForm
                  action={discardAction}
                  leaseId={view.lease_id}
                  label="Discard"
                  secondary
                  onResult={setMessage}
                />
              </div>
            </>
          ) : null}

          {display === "applied" ? (
            <SummarizeForm invoiceId={invoiceId} label="Summarize" secondary onResult={setMessage} />
          ) : null}
          {display === "expired" || display === "rejected" || display === "failed" ? (
            <SummarizeForm invoiceId={invoiceId} label="Try again" onResult={setMessage} />
          ) : null}
        </>
      )}

      {message?.message ? (
        <p
          role={message.ok ? "status" : "alert"}
          className={`notice ${message.ok ? "notice--ok" : "notice--error"}`}
          data-testid="lease-message"
        >
          {message.message}
        </p>
      ) : null}

      {view && view.events.length > 0 ? (
        <>
          <h3>History</h3>
          <ol className="timeline" data-testid="timeline">
            {view.events.map((event, index) => (
              <li key={`${event.at}-${index}`} data-kind={event.kind}>
                <time dateTime={event.at}>{clockTime(event.at)}</time>
                <span>{eventWords(event)}</span>
              </li>
            ))}
          </ol>
        </>
      ) : null}

      {view && !settled ? (
        <p className="channel-note" data-testid="channel" data-channel={channel}>
          {channel === "live"
            ? "Updates arrive as they happen."
            : channel === "polling"
              ? "Checking for updates every 2 seconds."
              : channel === "lost"
                ? "You are signed out. Sign in again to follow this summary."
                : "Connecting for updates…"}
        </p>
      ) : null}
    </section>
  );
}

function SummarizeForm({
  invoiceId,
  label,
  secondary = false,
  onResult,
}: {
  invoiceId: string;
  label: string;
  secondary?: boolean;
  onResult: (result: ActionResult) => void;
}) {
  return (
    <ActionForm action={summarizeAction} fields={{ invoice_id: invoiceId }} onResult={onResult}>
      <SubmitButton className={secondary ? "button button--secondary" : "button"}>{label}</SubmitButton>
    </ActionForm>
  );
}

function LeaseActionForm({
  action,
  leaseId,
  label,
  secondary = false,
  onResult,
}: {
  action: (formData: FormData) => Promise<ActionResult>;
  leaseId: string;
  label: string;
  secondary?: boolean;
  onResult: (result: ActionResult) => void;
}) {
  return (
    <ActionForm action={action} fields={{ lease_id: leaseId }} onResult={onResult}>
      <SubmitButton className={secondary ? "button button--secondary" : "button"}>{label}</SubmitButton>
    </ActionForm>
  );
}

/** A form that sends its server action once at a time and reports the answer. */
function ActionForm({
  action,
  fields,
  onResult,
  children,
}: {
  action: (formData: FormData) => Promise<ActionResult>;
  fields: Record<string, string>;
  onResult: (result: ActionResult) => void;
  children: ReactNode;
}) {
  const busy = useRef(false);
  // A second submit before React re-renders the disabled button is dropped here.
  const guard = (event: FormEvent<HTMLFormElement>) => {
    if (busy.current) event.preventDefault();
  };
  return (
    <form
      onSubmit={guard}
      action={async (formData) => {
        busy.current = true;
        try {
          onResult(await action(formData));
        } finally {
          busy.current = false;
        }
      }}
    >
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      {children}
    </form>
  );
}

/**
 * Follows one lease: EventSource first; polling GET /api/leases/:id every 2 s when the
 * stream fails or never opens. Every answer replaces the view if it is a later reading.
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
    let polling = false;
    let inFlight = false;
    const url = `/api/leases/${encodeURIComponent(leaseId)}`;

    const accept = (next: LeaseJson) => {
      if (!stopped && next.lease_id === leaseId) setView((current) => (newer(next, current) ? next : current));
    };
    const stop = (channel: Channel) => {
      stopped = true;
      source?.close();
      clearInterval(pollTimer);
      clearTimeout(openTimer);
      setChannel(channel);
    };

    const poll = async () => {
      if (stopped || inFlight) return;
      inFlight = true;
      try {
        const response = await fetch(url, { cache: "no-store", headers: { accept: "application/json" } });
        if (response.status === 401 || response.status === 404) return stop("lost");
        if (response.ok) accept((await response.json()) as LeaseJson);
      } catch {
        // Offline for a moment: the next tick tries again.
      } finally {
        inFlight = false;
      }
    };
    const startPolling = () => {
      if (stopped || polling) return;
      polling = true;
      source?.close();
      clearTimeout(openTimer);
      setChannel("polling");
      void poll();
      pollTimer = setInterval(() => void poll(), POLL_MS);
    };

    if (typeof EventSource === "undefined") {
      startPolling();
    } else {
      let failures = 0;
      source = new EventSource(`${url}/events`);
      openTimer = setTimeout(() => {
        if (source?.readyState !== EventSource.OPEN) startPolling();
      }, SSE_OPEN_TIMEOUT_MS);
      source.onopen = () => {
        failures = 0;
        clearTimeout(openTimer);
        if (!polling) setChannel("live");
      };
      source.addEventListener("lease", (event) => {
        try {
          accept(JSON.parse((event as MessageEvent<string>).data) as LeaseJson);
        } catch {
          // A malformed message is ignored; the next one replaces it.
        }
      });
      source.onerror = () => {
        failures += 1;
        // CLOSED: the server refused (401, 404, 429 too many streams, 503); repeated errors:
        // it keeps dropping. A stream the server ended after a terminal state is not an error
        // to act on: that state is in the view, and this effect is being torn down.
        if (source?.readyState === EventSource.CLOSED || failures >= 3) startPolling();
      };
    }
    return () => {
      stopped = true;
      source?.close();
      clearInterval(pollTimer);
      clearTimeout(openTimer);
    };
  }, [leaseId, setView, setChannel]);
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
