"use client";
// The lease panel only shows the lease as the server last described it: pushed over
// server-sent events, or polled every 2 s while they fail (the stream is tried again, with
// backoff, until it works). It decides nothing: the countdown is the server's deadline minus
// the server's `now` (counted down on a monotonic clock, not the browser's wall clock), and at
// the deadline it asks the server, whatever the transport, so an expiry shows within a second
// or two. The buttons are plain forms posting server actions, so they work before (or
// without) JavaScript; the action sends the browser back to the page with what to say.
// How it follows the lease is in lease-hooks.ts; every word it shows is in lease-words.ts.
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useSyncExternalStore, type FormEvent, type ReactNode, type RefObject } from "react";
import { useFormStatus } from "react-dom";
import { SubmitButton } from "@/app/_components/submit-button";
import { formatDateTime, localizeDates, type Viewer } from "@/app/_lib/format";
import {
  BADGE_WORDS,
  BUTTON_WORDS,
  channelWords,
  closedWords,
  countdown,
  durationWords,
  eventWords,
  heldByWords,
  PANEL_WORDS,
  type LeaseEventJson,
  type LeaseJson,
  type Notice,
} from "@/app/_lib/lease-words";
import { LANE_WORDS } from "@/app/_lib/approval-words";
import { displayOf, isInFlight, isTerminal, summaryOf, type ApplyPolicy, type ApprovalDecision } from "@/lib/lease-codes";
import type { Purpose } from "@/lib/purposes";
import type { PlannedChange, PurposeWords } from "@/lib/purposes/types";
import { applyAction, cancelAction, discardAction, submitAction, summarizeAction } from "./actions";
import { newer, useDeadlineCheck, useLeaseFeed, useServerCountdown, type Channel } from "./lease-hooks";

/**
 * What applying a proposed lease would change, as the server read it for the page (lib/purposes
 * plannedChanges against the invoice's current values); `items` null: the proposal is not one
 * its purpose accepts (apply then closes it as unusable). The panel only shows it: apply writes
 * the proposal the server holds, fenced by the version this was read at.
 */
export type PanelChanges = { leaseId: string; items: PlannedChange[] | null };

/**
 * The four-eyes lane as the owner's panel shows it (docs/decisions/0078): the purpose's policy,
 * who else may approve, and the owner's request behind the panel's lease, if it was submitted.
 */
export type PanelLane = {
  policy: ApplyPolicy;
  approvers: string[];
  request: {
    leaseId: string;
    decision: ApprovalDecision | null;
    approverName: string | null;
    comment: string | null;
    accept: string[] | null;
  } | null;
};

export function LeasePanel({
  purpose,
  words,
  byLine,
  invoiceId,
  initial,
  changes,
  heldBy,
  viewer,
  notice,
  lane = { policy: "self", approvers: [], request: null },
}: {
  lane?: PanelLane;
  purpose: Purpose;
  /** Its purpose's words (its definition's, lib/purposes), handed over by the server page: this client module imports no definition. */
  words: PurposeWords;
  /** Its purpose applies by line: Apply lists a ticked box per planned change. */
  byLine: boolean;
  invoiceId: string;
  changes: PanelChanges | null;
  initial: LeaseJson | null;
  /** Someone else's name whose lease is in flight on this invoice (it changed hands meanwhile). */
  heldBy: string | null;
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
  const settled = view ? isTerminal(view.status) : false;
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

  const earlier = useEarlierEvents(view);

  const display = view ? displayOf(view) : null;
  const inFlight = view ? isInFlight(view.status) : false;
  const remaining = useServerCountdown(view, inFlight);
  // A refusal says, once, why the lease is where it is: for a closed lease it takes the place
  // of the state line, which would say the same thing in other words.
  const refusal = shownNotice && !shownNotice.ok ? shownNotice : null;
  const replacesState = Boolean(refusal && view && settled);
  // The lease's own buttons name it, its invoice and its purpose; the open button the invoice and the purpose.
  const leaseFields = view ? { lease_id: view.lease_id, invoice_id: invoiceId, purpose } : null;
  const invoiceFields = { invoice_id: invoiceId, purpose };
  // The summary's panel keeps the names the pages and tests have always known it by.
  const isSummary = purpose === "summarize_invoice";
  const headingId = isSummary ? "lease-heading" : `lease-heading-${purpose}`;
  // The changes read for this very lease; one read for an earlier lease (a push got here first) waits for the page's refresh.
  const shownChanges = changes && view && changes.leaseId === view.lease_id ? changes : null;
  // Submitted for approval: the page's request for this very lease, or its `submitted` event.
  const request = lane.request && view && lane.request.leaseId === view.lease_id ? lane.request : null;
  const submitted = Boolean(view && (request || view.events.some((e) => e.kind === "submitted")));
  const waiting = submitted && display === "proposed";
  // Under four_eyes the owner submits instead of applying; once submitted, only Withdraw is left.
  const primary =
    lane.policy === "four_eyes" ? { action: submitAction, label: LANE_WORDS.submit } : { action: applyAction, label: BUTTON_WORDS.apply };
  const secondaryLabel = waiting ? LANE_WORDS.withdraw : BUTTON_WORDS.discard;
  // A submitted lease's end, in the lane's words; any other end as before.
  const endWords = (): string => {
    if (!view || !submitted) return view ? closedWords(view, words) : "";
    if (view.status === "applied") return LANE_WORDS.approvedBy(request?.approverName ?? null);
    if (view.status === "expired") return LANE_WORDS.expired;
    if (view.closed_reason === "declined") return LANE_WORDS.declinedBy(request?.approverName ?? null, request?.comment ?? null);
    if (view.closed_reason === "cancelled") return LANE_WORDS.withdrawn;
    return closedWords(view, words);
  };

  return (
    <section
      className="card lease"
      aria-labelledby={headingId}
      data-testid={isSummary ? "lease-panel" : `lease-panel-${purpose}`}
      data-purpose={purpose}
      data-display={display ?? "none"}
      data-lease-id={leaseId ?? ""}
      data-lane={waiting ? "waiting" : lane.policy}
    >
      <h2 id={headingId}>{words.heading}</h2>

      {heldBy && !inFlight ? <p data-testid="lease-held-by">{heldByWords(heldBy)}</p> : null}
      {!view ? (
        <>
          {heldBy ? null : <p>{words.none}</p>}
          <ActionForm action={summarizeAction} fields={invoiceFields} label={words.open} />
        </>
      ) : (
        <>
          <span className="lease__badge">{waiting ? LANE_WORDS.badge : display === "proposed" ? words.ready : BADGE_WORDS[display!]}</span>
          {replacesState ? null : (
            <div role="status" aria-live="polite" data-testid="lease-state">
              {display === "generating" ? (
                <p>{words.generating}</p>
              ) : waiting ? (
                <>
                  <p data-testid="waiting-until">
                    {LANE_WORDS.waitingUntil}
                    <time dateTime={view.deadline_at} suppressHydrationWarning>
                      {formatDateTime(view.deadline_at, viewer)}
                    </time>
                    .
                  </p>
                  <p data-testid="who-approves">
                    {LANE_WORDS.whoApproves(lane.approvers)} {LANE_WORDS.waitingNote}
                  </p>
                </>
              ) : display === "proposed" && lane.policy === "four_eyes" ? (
                <p data-testid="needs-approval">{LANE_WORDS.needsApproval(lane.approvers)}</p>
              ) : display === "proposed" ? (
                <p>{words.proposed}</p>
              ) : (
                <p>{endWords()}</p>
              )}
            </div>
          )}
          {refusal ? <NoticeLine notice={refusal} /> : null}

          {inFlight ? (
            <p className="lease__time">
              {remaining > 0 ? (
                <>
                  {waiting ? LANE_WORDS.timeLeft : display === "generating" ? PANEL_WORDS.timeToFinish : PANEL_WORDS.timeToApply}
                  <span className="lease__countdown" role="timer" aria-live="off" data-testid="countdown">
                    {waiting ? durationWords(remaining * 1000) : countdown(remaining)}
                  </span>
                </>
              ) : (
                <>{PANEL_WORDS.timeUp}</>
              )}
            </p>
          ) : null}

          {display === "generating" ? (
            <div className="actions">
              <ActionForm action={cancelAction} fields={leaseFields!} label={BUTTON_WORDS.cancel} secondary />
            </div>
          ) : null}

          {display === "proposed" && isSummary ? (
            <>
              <div className="actions">
                {waiting ? null : <ActionForm action={primary.action} fields={leaseFields!} label={primary.label} />}
                <ActionForm action={discardAction} fields={leaseFields!} label={secondaryLabel} secondary />
              </div>
              <h3>{words.changesHeading}</h3>
              <div data-testid="planned-change" data-key="summary">
                {shownChanges?.items?.[0] ? (
                  <p className="muted small">
                    {shownChanges.items[0].label} now:{" "}
                    <span data-testid="change-before" suppressHydrationWarning>
                      {shownChanges.items[0].before === null ? "none" : localizeDates(shownChanges.items[0].before, viewer.locale)}
                    </span>
                    . {lane.policy === "four_eyes" || waiting ? LANE_WORDS.ifApproved : "After Apply:"}
                  </p>
                ) : null}
                <blockquote className="proposal" data-testid="proposal" suppressHydrationWarning>
                  {localizeDates(summaryOf(view.proposal) ?? PANEL_WORDS.emptySummary, viewer.locale)}
                </blockquote>
              </div>
            </>
          ) : null}

          {display === "proposed" && !isSummary ? (
            shownChanges ? (
              <>
                <div className="actions">
                  {waiting ? null : byLine && shownChanges.items ? (
                    // One box per proposed line, ticked: the ones left ticked are what apply (or the submit) writes.
                    <ActionForm action={primary.action} fields={{ ...leaseFields!, lines_form: "1" }} label={primary.label}>
                      <fieldset className="planned-changes">
                        <legend>{words.changesHeading}</legend>
                        <ul>
                          {shownChanges.items.map((change) => (
                            <li key={change.key} data-testid="planned-change" data-key={change.key}>
                              <label>
                                <input type="checkbox" name="line" value={change.key} defaultChecked /> {change.label}:{" "}
                                <ChangeValues change={change} locale={viewer.locale} />
                              </label>
                            </li>
                          ))}
                        </ul>
                      </fieldset>
                    </ActionForm>
                  ) : (
                    <ActionForm action={primary.action} fields={leaseFields!} label={primary.label} />
                  )}
                  <ActionForm action={discardAction} fields={leaseFields!} label={secondaryLabel} secondary />
                </div>
                {(!byLine || waiting) && shownChanges.items ? (
                  <>
                    <h3>{words.changesHeading}</h3>
                    <ul className="planned-changes">
                      {shownChanges.items
                        .filter((change) => !request?.accept || request.accept.includes(change.key))
                        .map((change) => (
                          <li key={change.key} data-testid="planned-change" data-key={change.key}>
                            <strong>{change.label}</strong>: <ChangeValues change={change} locale={viewer.locale} />
                          </li>
                        ))}
                    </ul>
                  </>
                ) : null}
              </>
            ) : (
              <p className="muted">{PANEL_WORDS.readingChanges}</p>
            )
          ) : null}

          {display === "applied" ? <ActionForm action={summarizeAction} fields={invoiceFields} label={words.open} secondary /> : null}
          {display === "outdated" ? <ActionForm action={summarizeAction} fields={invoiceFields} label={words.openAgain} /> : null}
          {display === "expired" || display === "rejected" || display === "failed" ? (
            <ActionForm action={summarizeAction} fields={invoiceFields} label={BUTTON_WORDS.tryAgain} />
          ) : null}
        </>
      )}

      {!view && refusal ? <NoticeLine notice={refusal} /> : null}

      {view && view.events.length > 0 ? (
        <>
          <h3>{PANEL_WORDS.timelineHeading}</h3>
          {earlier.before ? (
            <div className="timeline-earlier" data-testid="earlier-events">
              <p className="muted small">{PANEL_WORDS.earlierEvents}</p>
              {/* Only with JavaScript, which it needs; without, the words above say where they are. */}
              {earlier.canLoad ? (
                <button type="button" className="button button--secondary" onClick={earlier.load} disabled={earlier.loading}>
                  {BUTTON_WORDS.showEarlier}
                </button>
              ) : null}
              {earlier.failed ? (
                <p role="alert" className="notice notice--error">
                  {PANEL_WORDS.earlierEventsFailed}
                </p>
              ) : null}
            </div>
          ) : null}
          <ol className="timeline" data-testid="timeline">
            {earlier.timeline.map((event, index) => (
              <li key={`${event.at}-${index}`} data-kind={event.kind}>
                <time dateTime={event.at} suppressHydrationWarning>
                  {formatDateTime(event.at, viewer)}
                </time>
                <span>{eventWords(event, earlier.timeline.slice(0, index), view.proposal, words)}</span>
              </li>
            ))}
          </ol>
        </>
      ) : null}

      {view && !settled ? (
        <p className="channel-note" data-testid="channel" data-channel={channel}>
          {channelWords(channel)}
        </p>
      ) : null}
    </section>
  );
}

/**
 * The lease's timeline as the panel shows it: the page the server sent (its latest events),
 * after any earlier pages the user asked for (GET /api/leases/:id?events_before=). Earlier
 * pages are joined only while the sent page still starts where they end; once a new event
 * pushes the page on, they are let go rather than shown with a gap.
 */
const subscribeToNothing = () => () => {};

function useEarlierEvents(view: LeaseJson | null) {
  const [loaded, setLoaded] = useState<{ anchor: string; events: LeaseEventJson[]; before: string | null } | null>(null);
  const [loading, setLoading] = useState(false);
  const [failed, setFailed] = useState(false);
  // False in the server's HTML and while hydrating (a plain page offers no button that needs
  // JavaScript), true once the client renders: React's way to tell the two apart.
  const canLoad = useSyncExternalStore(
    subscribeToNothing,
    () => true,
    () => false,
  );

  const joined = loaded && view && loaded.anchor === view.events_before ? loaded : null;
  const timeline = view ? (joined ? [...joined.events, ...view.events] : view.events) : [];
  const before = joined ? joined.before : (view?.events_before ?? null);

  const load = async () => {
    if (!view || !before || loading) return;
    const anchor = joined?.anchor ?? view.events_before!;
    setLoading(true);
    try {
      const res = await fetch(`/api/leases/${view.lease_id}?events_before=${encodeURIComponent(before)}`, { cache: "no-store" });
      if (!res.ok) throw new Error(`GET earlier events: ${res.status}`);
      const page = (await res.json()) as LeaseJson;
      setLoaded({ anchor, events: [...page.events, ...(joined?.events ?? [])], before: page.events_before });
      setFailed(false);
    } catch {
      setFailed(true);
    } finally {
      setLoading(false);
    }
  };
  return { timeline, before, load, loading, failed, canLoad };
}

/** A change's value before and after ("none" where there is none), each line of a multi-line value on its own line. */
/** A change as "before → after"; `savedOnly` for one already written, whose "before" is not kept beside it. */
export function ChangeValues({ change, locale, savedOnly = false }: { change: PlannedChange; locale: string; savedOnly?: boolean }) {
  const lines = (value: string | null) =>
    value === null
      ? "none"
      : localizeDates(value, locale)
          .split("\n")
          .map((line, i) => (
            <span key={i} className="planned-change__line">
              {i > 0 ? <br /> : null}
              {line}
            </span>
          ));
  if (savedOnly)
    return (
      <span data-testid="change-after" className="planned-change__after" suppressHydrationWarning>
        {lines(change.after)}
      </span>
    );
  return (
    <>
      <span data-testid="change-before" className="planned-change__before" suppressHydrationWarning>
        {lines(change.before)}
      </span>{" "}
      →{" "}
      <span data-testid="change-after" className="planned-change__after" suppressHydrationWarning>
        {lines(change.after)}
      </span>
    </>
  );
}

function NoticeLine({ notice }: { notice: Notice }) {
  return (
    <p role={notice.ok ? "status" : "alert"} className={`notice ${notice.ok ? "notice--ok" : "notice--error"}`} data-testid="lease-message">
      {notice.text}
    </p>
  );
}

/**
 * The panel's one kind of form: a button posting a server action, with the ids it needs as
 * hidden fields. With JavaScript, once at a time (a second submit before React re-renders
 * the disabled button is dropped); without it, a plain POST that the action answers with a
 * redirect back to the page.
 */
function ActionForm({
  action,
  fields,
  label,
  secondary = false,
  children,
}: {
  action: (formData: FormData) => Promise<void>;
  fields: Record<string, string>;
  label: string;
  secondary?: boolean;
  /** Fields the user fills in before the button (the lines to apply). */
  children?: ReactNode;
}) {
  const busyRef = useRef(false);
  const guard = (event: FormEvent<HTMLFormElement>) => {
    if (busyRef.current) event.preventDefault();
    else busyRef.current = true;
  };
  return (
    <form onSubmit={guard} action={action}>
      <ReleaseWhenDone busyRef={busyRef} />
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      {children}
      <SubmitButton className={secondary ? "button button--secondary" : "button"}>{label}</SubmitButton>
    </form>
  );
}

/** Lets the form submit again once its action has finished. */
function ReleaseWhenDone({ busyRef }: { busyRef: RefObject<boolean> }) {
  const { pending } = useFormStatus();
  useEffect(() => {
    if (!pending) busyRef.current = false;
  }, [pending, busyRef]);
  return null;
}
