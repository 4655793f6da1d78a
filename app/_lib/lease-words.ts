// The words a person reads about a lease: plain words for a finance user, what its state, its
// timeline and every refusal mean. Keyed by the codes of lib/lease-codes.ts (the strings the
// machine reads), which this module never defines; a code without words here fails `tsc`.
// Client-safe (no server imports): the lease panel and the server actions both use it. A
// purpose's own words are its definition's (lib/purposes, PurposeWords), which this module never
// imports: the page hands them to the panel, and they come here as an argument.
import type { UpdateInvoiceResult } from "@/lib/invoices";
import type {
  ApplyRefusal,
  CancelRefusal,
  ClosedReason,
  EventKind,
  GenerationFailureCode,
  LeaseDisplay,
  LeaseStatus,
  OpenRefusal,
  SubmitRefusal,
} from "@/lib/lease-codes";
import { isClosedReason } from "@/lib/lease-codes";
import type { PurposeWords } from "@/lib/purposes/types";
import type { CapField } from "@/lib/spend/budget";
import type { leaseJson } from "@/app/_lib/serialize";
import { SUBMIT_WORDS } from "@/app/_lib/approval-words";

export type LeaseJson = ReturnType<typeof leaseJson>;
export type LeaseEventJson = LeaseJson["events"][number];

/** The lease panel's badge for each display. */
export const BADGE_WORDS = {
  generating: "Generating",
  proposed: "Ready for review",
  applied: "Applied",
  expired: "Expired",
  rejected: "Not applied",
  outdated: "Out of date",
  failed: "Failed",
} as const satisfies Record<LeaseDisplay, string>;

/** The lease panel's fixed sentences and headings, the same for every purpose (a purpose's own are its PurposeWords). */
export const PANEL_WORDS = {
  timeToFinish: "Time left to finish: ",
  timeToApply: "Time left to apply: ",
  timeUp: "Time is up. Checking with the server…",
  emptySummary: "(empty summary)",
  readingChanges: "Reading what will change…",
  timelineHeading: "What happened",
  earlierEvents: "Earlier events are not shown here. The history below lists every event.",
  earlierEventsFailed: "The earlier events could not be loaded. Try again in a moment.",
} as const;

export type { PurposeWords };

/** The words of a purpose the shared sentences below use: its noun and phrases. */
export type SentenceWords = Pick<PurposeWords, "noun" | "openAgain" | "readyEvent" | "appliedEvent" | "unusable" | "applied">;

/**
 * The noun and phrases the shared sentences of this module are written with: a summary's (they
 * were written before there were purposes). A purpose's words replace them in each sentence;
 * the summary's own words (lib/purposes/summarize-invoice.ts) are these, so its sentences pass
 * unchanged (a unit test holds them equal).
 */
export const WRITTEN_WITH = {
  noun: "summary",
  openAgain: "Summarize again",
  readyEvent: "Summary ready for review",
  appliedEvent: "Summary applied to the invoice",
  unusable: "came back empty",
  applied: "The summary was applied to the invoice.",
} as const satisfies SentenceWords;

/**
 * A sentence written with WRITTEN_WITH, said of a purpose's proposal: its own phrases where the
 * summary's would not read well of it (its timeline lines, what made a proposal unusable), then its
 * noun and its button in place of the summary's. No words: the sentence as written.
 */
export function forPurpose(words: SentenceWords | null | undefined, text: string): string {
  if (!words) return text;
  const base = WRITTEN_WITH;
  if (text === base.readyEvent) return words.readyEvent;
  if (text === base.appliedEvent) return words.appliedEvent;
  const noun = words.noun;
  return text
    .replaceAll(base.unusable, words.unusable)
    .replaceAll(base.openAgain, words.openAgain)
    .replaceAll(base.openAgain.toLowerCase(), words.openAgain.toLowerCase())
    .replaceAll("Summary", noun.charAt(0).toUpperCase() + noun.slice(1))
    .replaceAll("summary", noun);
}

/**
 * The invoice came to this user while someone else's summary of it was still under way
 * (GET /api/invoices/:id's `lease_held_by`, POST /api/leases's 409 lease_in_flight `held_by`).
 */
export function heldByWords(name: string): string {
  // Apply writes only an invoice its actor owns, so that summary can no longer change this one.
  return `A summary that ${name} asked for before this invoice came to you is still open. It cannot change the invoice; you can ask for your own once it ends (at the latest when its time runs out).`;
}

/** The lease panel's buttons. */
export const BUTTON_WORDS = {
  summarize: "Summarize",
  summarizeAgain: "Summarize again",
  tryAgain: "Try again",
  cancel: "Cancel",
  apply: "Apply",
  discard: "Discard",
  showEarlier: "Show earlier events",
} as const;

/**
 * How the page hears of changes (app/invoices/[id]/lease-hooks.ts). Only the words are for
 * people: "live" (pushed), "polling" (asked every 2 s) and "connecting" read alike to a
 * finance user, the page keeps itself current; `data-channel` tells them apart for tests and
 * support.
 */
export type Channel = "connecting" | "live" | "polling" | "offline" | "lost";

export function channelWords(channel: Channel): string {
  switch (channel) {
    case "live":
    case "polling":
      return "This status updates by itself.";
    case "offline":
      return "The server cannot be reached right now, so this status may be out of date. Trying again…";
    case "lost":
      return "You are signed out. Sign in again to follow this summary.";
    case "connecting":
      return "Status as of when the page loaded. Reload the page to see changes.";
  }
}

const FIELD_WORDS: Record<string, string> = {
  number: "invoice number",
  counterparty: "counterparty",
  issued_on: "issue date",
  due_on: "due date",
  status: "status",
  paid_on: "payment date",
  owner: "owner",
};

/** "The counterparty and due date were changed", from an invoice_changed event's fields. */
export function changedWords(fields: unknown): string | null {
  if (!Array.isArray(fields)) return null;
  const names = fields.map((f) => FIELD_WORDS[String(f)]).filter((n): n is string => Boolean(n));
  if (names.length === 0) return null;
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names.at(-1)!}`;
  return `The ${list} ${names.length === 1 ? "was" : "were"} changed`;
}

type Detail = Record<string, unknown> | null;
const detailOf = (event: { detail: unknown }): Detail =>
  event.detail && typeof event.detail === "object" ? (event.detail as Detail) : null;

/** An invoice_changed event recorded by the change itself (an edit, an owner change), not found at apply. */
const isWithdrawal = (event: { kind: string; detail: unknown }) =>
  event.kind === "invoice_changed" && ["edit", "owner_change"].includes(String(detailOf(event)?.by));

/** The change that withdrew this lease, if one did (see withdrawOutdated in lib/leases/close.ts). */
function withdrawal(lease: Pick<LeaseJson, "events">): Detail {
  const event = lease.events.find(isWithdrawal);
  return event ? detailOf(event) : null;
}

/**
 * Whether the lease was ever proposed: its `proposed` event, or its proposal, which only a
 * propose writes and nothing clears; a lease's events come a page at a time (the latest
 * LEASE_EVENTS_PAGE), so its `proposed` event may be on an earlier page.
 */
function wasProposed(lease: Pick<LeaseJson, "events"> & { proposal?: unknown }): boolean {
  return lease.events.some((e) => e.kind === "proposed") || (lease.proposal !== undefined && lease.proposal !== null);
}

/** One sentence saying where a closed lease stands and that the invoice was not touched, in its purpose's words (none: a summary's). */
export function closedWords(
  lease: Pick<LeaseJson, "status" | "closed_reason" | "events"> & { proposal?: unknown },
  words?: SentenceWords | null,
): string {
  if (lease.status === "applied") return (words ?? WRITTEN_WITH).applied;
  return forPurpose(words, summaryClosedWords(lease));
}

function summaryClosedWords(lease: Pick<LeaseJson, "status" | "closed_reason" | "events"> & { proposal?: unknown }): string {
  if (lease.status === "expired") {
    return wasProposed(lease)
      ? "Time ran out before the summary was applied, so nothing was changed on the invoice."
      : "Time ran out before the summary was ready, so nothing was changed on the invoice.";
  }
  const reason = lease.closed_reason;
  switch (reason) {
    case "cancelled":
      return wasProposed(lease)
        ? "You discarded this summary. Nothing was changed on the invoice."
        : "You cancelled this summary before it was ready. Nothing was changed on the invoice.";
    case "signed_out":
      return "The summary was stopped because you signed out. Nothing was changed on the invoice.";
    case "invoice_changed": {
      const edit = withdrawal(lease);
      if (edit) {
        const what = changedWords(edit.fields) ?? "The invoice was edited";
        return `Out of date: ${what.charAt(0).toLowerCase()}${what.slice(1)} after this summary was requested, so it was withdrawn. Nothing was changed on the invoice. Summarize again for one that matches the invoice.`;
      }
      return "Not applied: the invoice was edited after this summary was requested. Nothing was changed by the summary; summarize again for one that matches the invoice.";
    }
    case "generation_failed":
      return "The summary could not be written. Nothing was changed on the invoice.";
    case "dispatch_failed":
      return "The AI service could not be reached, so no summary was started. Nothing was changed on the invoice.";
    case "actor_mismatch":
      return "The summary was refused because it was written for a different user. Nothing was changed on the invoice.";
    case "proposal_unusable":
      return `The summary ${WRITTEN_WITH.unusable}, so it was not applied. Nothing was changed on the invoice; summarize again for a new one.`;
    case "declined":
      return "An approver declined this summary. Nothing was changed on the invoice.";
    // deadline_passed goes with status expired (above); a rejected lease without a reason was
    // closed by hand, outside the app.
    case "deadline_passed":
    case null:
      return "This summary was stopped. Nothing was changed on the invoice.";
    default:
      return unreachable(reason);
  }
}

/** A switch that forgot a value of its union fails `tsc` here. */
function unreachable(value: never): never {
  throw new Error(`no words for ${String(value)}`);
}

const APPLY_WORDS = {
  invoice_changed: "This invoice was edited after the summary was requested, so it was not applied. Summarize again.",
  lease_expired: "Time ran out on this summary before it was applied. Nothing was changed on the invoice. Summarize again.",
  lease_applied: "This summary has already been applied to the invoice.",
  lease_open: "The summary is still being written. You can apply it once it appears.",
  lease_not_found: "We could not find this summary. Reload the page to see where things stand.",
  lease_rejected: "This summary was closed, so it cannot be applied. Nothing was changed on the invoice.",
  proposal_unusable: `This summary ${WRITTEN_WITH.unusable}, so it was not applied. Nothing was changed on the invoice. Summarize again.`,
  invalid_lines: "Choose at least one of the proposed lines to apply, or discard the proposal. Nothing was changed on the invoice.",
  approval_required:
    "This task needs a second person's approval in your organization: submit it for approval instead. Nothing was changed on the invoice.",
  approval_pending:
    "This summary waits for an approver's decision, so only an approver can apply it now. Nothing was changed on the invoice.",
} as const satisfies Record<ApplyRefusal, string>;

/** Why Apply was refused. A rejected lease says why it was closed (discarded elsewhere, signed out...). */
export function applyRefusal(code: ApplyRefusal, closedReason?: ClosedReason | null): string {
  if (code === "lease_rejected") {
    if (closedReason === "cancelled")
      return "This summary was discarded (perhaps in another tab), so it cannot be applied. Nothing was changed on the invoice.";
    if (closedReason === "signed_out")
      return "This summary was stopped when you signed out, so it cannot be applied. Nothing was changed on the invoice.";
    if (closedReason === "invoice_changed") return APPLY_WORDS.invoice_changed;
    if (closedReason === "proposal_unusable") return APPLY_WORDS.proposal_unusable;
  }
  return APPLY_WORDS[code];
}

const NOT_FOUND = "We could not find this summary. Reload the page to see where things stand.";

const DISCARD_WORDS = {
  lease_not_cancelable: "This summary can no longer be discarded: it was already applied, discarded, or its time ran out.",
  lease_not_found: NOT_FOUND,
} as const satisfies Record<CancelRefusal, string>;

const CANCEL_WORDS = {
  lease_not_cancelable: "This summary can no longer be cancelled: it was already finished, applied, discarded, or its time ran out.",
  lease_not_found: NOT_FOUND,
} as const satisfies Record<CancelRefusal, string>;

export function discardRefusal(code: CancelRefusal): string {
  return DISCARD_WORDS[code];
}

export function cancelRefusal(code: CancelRefusal): string {
  return CANCEL_WORDS[code];
}

/** Summarize's refusals: the domain's, and a form that did not parse. */
export type SummarizeRefusal = OpenRefusal | "invalid_request";

const SUMMARIZE_WORDS = {
  dispatch_failed: "The AI service did not respond, so no summary was started. Try again in a moment.",
  lease_in_flight: "A summary for this invoice is already under way. Reload the page to see it.",
  invoice_not_found: "We could not find this invoice.",
  forbidden: "Only the invoice's owner can request a summary. Ask them, or ask an admin to give you the invoice.",
  not_signed_in: "You were signed out, so no summary was started. Sign in again to continue.",
  purpose_not_allowed: "The summary could not be started. Try again in a moment.",
  budget_exhausted:
    "Your team's AI budget is used up, so nothing was started and nothing was charged. It resets at 00:00 UTC, at the start of the next day or month. An admin can raise it on the Usage page.",
  invalid_request: "The summary could not be started. Try again in a moment.",
} as const satisfies Record<SummarizeRefusal, string>;

export function summarizeRefusal(code: SummarizeRefusal): string {
  return SUMMARIZE_WORDS[code];
}

/** Whose budget a cap is and for which period, as a refusal names it. */
export const CAP_REFUSAL_WORDS = {
  organization_daily_cents: { budget: "Your team's AI budget for today", period: "day" },
  organization_monthly_cents: { budget: "Your team's AI budget for this month", period: "month" },
  member_daily_cents: { budget: "Your own AI budget for today (each member's daily limit)", period: "day" },
  member_monthly_cents: { budget: "Your own AI budget for this month (each member's monthly limit)", period: "month" },
} as const satisfies Record<CapField, { budget: string; period: "day" | "month" }>;

/** "3 h 12 min", "45 min", "2 days 4 h", "less than a minute": how long until an instant. */
export function durationWords(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "less than a minute";
  const [days, hours, mins] = [Math.floor(minutes / 1440), Math.floor((minutes % 1440) / 60), minutes % 60];
  if (days > 0) return `${days} ${days === 1 ? "day" : "days"}${hours ? ` ${hours} h` : ""}`;
  return hours ? `${hours} h${mins ? ` ${mins} min` : ""}` : `${mins} min`;
}

/**
 * A budget refusal as Summarize (or Review, Categorize) sends it back: which cap (`cap`) and when
 * it resets (`resets`, ISO), from the address; anything else there reads as the general words.
 */
export type BudgetContext = { cap?: string; resets?: string; now: Date; locale: string };

export function budgetRefusal(context?: BudgetContext): string {
  const cap = context?.cap;
  const resets = context?.resets ? new Date(context.resets) : null;
  if (!context || !cap || !known(CAP_REFUSAL_WORDS, cap) || !resets || Number.isNaN(resets.getTime()))
    return SUMMARIZE_WORDS.budget_exhausted;
  const words = CAP_REFUSAL_WORDS[cap];
  const left = resets.getTime() - context.now.getTime();
  // A reset more than a month and a day away is no reset this app announced.
  if (left > 32 * 86_400_000) return SUMMARIZE_WORDS.budget_exhausted;
  const used = `${words.budget} is used up, so nothing was started and nothing was charged.`;
  if (left <= 0) return `${used} It has reset since then: you can try again.`;
  const time = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" }).format(resets);
  const day = new Intl.DateTimeFormat(context.locale, { day: "numeric", month: "long", timeZone: "UTC" }).format(resets);
  const when = words.period === "day" ? `at ${time} UTC` : `on ${day} at ${time} UTC`;
  return `${used} It resets ${when} (in ${durationWords(left)}). An admin can raise it on the Usage page.`;
}

export type EditRefusal = Extract<UpdateInvoiceResult, { ok: false }>["code"];

/** `pattern`: how a date is typed in the viewer's locale (datePattern in format.ts). */
export function editRefusal(code: EditRefusal, pattern = "YYYY-MM-DD"): string {
  switch (code) {
    case "invoice_changed":
      return "This invoice was changed somewhere else after you opened it, so your edit was not saved. Reload the page to see the latest version, then edit again.";
    case "invoice_not_found":
      return "We could not find this invoice.";
    case "invalid_request":
      return `Check the fields: every field needs a value, dates are written ${pattern}, and the due date cannot be before the issue date.`;
    case "forbidden":
      return "Only the invoice's owner or an admin of your organization can edit this invoice.";
    case "invoice_number_taken":
      return "Another invoice of your organization already has this number. Choose a different one.";
    default:
      return unreachable(code);
  }
}

/**
 * What an action has to say after it sent the browser back to the page (a `notice` search
 * parameter, so it works as a plain form post too): "<action>.<code>". Only the codes an
 * action sends have words; any other says nothing, so the parameter cannot put words of its
 * own in the page.
 */
export type Notice = { ok: boolean; text: string; action: string; code: string };

/** Every notice an action sends, as "<action>.<code>": what noticeOf reads back. */
export type NoticeCode =
  | `summarize.${SummarizeRefusal}`
  | `apply.${ApplyRefusal}`
  | `apply.lease_rejected.${ClosedReason}`
  | `submit.${SubmitRefusal}`
  | `discard.${CancelRefusal}`
  | `cancel.${CancelRefusal}`
  | `edit.${EditRefusal | "saved" | "unchanged"}`;

const known = <T extends string>(table: Record<T, unknown>, code: string): code is T => Object.hasOwn(table, code);

/** `words`: those of the purpose whose panel the notice is for (none: a summary's). */
export function noticeOf(
  param: string | undefined,
  lease: Pick<LeaseJson, "closed_reason"> | null,
  pattern?: string,
  words?: SentenceWords,
  more: { budget?: BudgetContext } = {},
): Notice | null {
  const found = summaryNoticeOf(param, lease, pattern);
  // The budget's words name no purpose: said as they are.
  if (found?.action === "summarize" && found.code === "budget_exhausted") return { ...found, text: budgetRefusal(more.budget) };
  const notice = found;
  return notice && words && notice.action !== "edit" ? { ...notice, text: forPurpose(words, notice.text) } : notice;
}

function summaryNoticeOf(param: string | undefined, lease: Pick<LeaseJson, "closed_reason"> | null, pattern?: string): Notice | null {
  const [action = "", code = "", reason, ...rest] = (param ?? "").split(".");
  if (!code || rest.length || (reason !== undefined && !(action === "apply" && code === "lease_rejected"))) return null;
  const refusal = (text: string): Notice => ({ ok: false, text, action, code });
  switch (action) {
    case "summarize":
      return known(SUMMARIZE_WORDS, code) ? refusal(summarizeRefusal(code)) : null;
    case "apply":
      // A closed lease's reason comes with the notice, as apply found it; a notice without
      // one (an older link) reads it from the page's lease.
      if (reason !== undefined && !isClosedReason(reason)) return null;
      return known(APPLY_WORDS, code) ? refusal(applyRefusal(code, reason ?? lease?.closed_reason)) : null;
    case "submit":
      return known(SUBMIT_WORDS, code) ? refusal(SUBMIT_WORDS[code]) : null;
    case "discard":
      return known(DISCARD_WORDS, code) ? refusal(discardRefusal(code)) : null;
    case "cancel":
      return known(CANCEL_WORDS, code) ? refusal(cancelRefusal(code)) : null;
    case "edit":
      if (code === "saved") return { ok: true, text: "Changes saved.", action, code };
      if (code === "unchanged") return { ok: true, text: "Nothing to save: no field was changed.", action, code };
      return code === "invoice_changed" ||
        code === "invoice_not_found" ||
        code === "invalid_request" ||
        code === "forbidden" ||
        code === "invoice_number_taken"
        ? refusal(editRefusal(code, pattern))
        : null;
    default:
      return null;
  }
}

const EVENT_WORDS = {
  opened: "Summary requested",
  proposed: WRITTEN_WITH.readyEvent,
  applied: WRITTEN_WITH.appliedEvent,
  expired: "Time ran out",
  cancelled: "Summary discarded",
  revoked: "Stopped because you signed out",
  invoice_changed: "Not applied: the invoice had been edited",
  late_completion: "A summary arrived after this request had ended; it was ignored and nothing was written",
  actor_mismatch: "Refused: the summary named a different user",
  run_mismatch: "Refused: a summary arrived that this request did not start; it was ignored and nothing was written",
  generation_failed: "The summary could not be written",
  dispatch_failed: "The AI service could not be reached",
  apply_refused: "Apply refused",
  cancel_refused: "Discard refused",
  proposal_unusable: `Not applied: the summary ${WRITTEN_WITH.unusable}`,
  submitted: "Submitted for approval",
  declined: "Declined by an approver",
} as const satisfies Record<EventKind, string>;

/**
 * `earlier`: the events before this one, which some words depend on; `proposal`: the lease's,
 * when `earlier` may not reach back to its start (a page of a long timeline). A lease with a
 * proposal was proposed before it was cancelled: nothing proposes a closed lease. `words`: its
 * purpose's (none: a summary's).
 */
export function eventWords(
  event: LeaseEventJson,
  earlier: readonly LeaseEventJson[] = [],
  proposal: unknown = null,
  words: SentenceWords | null = null,
): string {
  return forPurpose(words, summaryEventWords(event, earlier, proposal));
}

function summaryEventWords(event: LeaseEventJson, earlier: readonly LeaseEventJson[], proposal: unknown): string {
  if (event.kind === "cancelled" && !wasProposed({ events: [...earlier], proposal })) return "Summary cancelled while it was being written";
  if (isWithdrawal(event)) {
    const what = changedWords(detailOf(event)?.fields) ?? "The invoice was edited";
    return `Withdrawn: ${what.charAt(0).toLowerCase()}${what.slice(1)}`;
  }
  const words = EVENT_WORDS[event.kind];
  if (event.kind === "generation_failed") {
    // The event's own short message (lib/leases/generate.ts GENERATION_FAILURES), never an error text.
    const code = detailOf(event)?.code;
    if (typeof code === "string" && known(FAILURE_SHORT, code)) return `${words}: ${FAILURE_SHORT[code]}`;
  }
  if (event.kind === "apply_refused" || event.kind === "cancel_refused") {
    // apply_refused names its code, cancel_refused the status it found.
    const detail = detailOf(event);
    const why = typeof detail?.code === "string" ? detail.code : typeof detail?.status === "string" ? `lease_${detail.status}` : "";
    if (known(REFUSAL_SHORT, why)) return `${words}: ${REFUSAL_SHORT[why]}`;
  }
  return words;
}

const FAILURE_SHORT = {
  model_unavailable: "the AI service could not be reached",
  model_output_invalid: "the AI service's answer could not be used",
  invalid_output: "the AI service's answer was not in the form this task needs",
  model_not_configured: "the AI service is not set up",
  invoice_not_found: "the invoice could not be read",
  internal_error: "something went wrong on our side",
} as const satisfies Record<GenerationFailureCode, string>;

const REFUSAL_SHORT = {
  lease_open: "the summary was not ready yet",
  lease_proposed: "the summary was still waiting for a decision",
  lease_applied: "already applied",
  lease_rejected: "the summary had been closed",
  lease_expired: "time had run out",
  lease_not_found: "the summary could not be found",
  invoice_changed: "the invoice had been edited",
  proposal_unusable: `the summary ${WRITTEN_WITH.unusable}`,
  invalid_lines: "no proposed line was chosen",
  approval_required: "it needs an approver's approval",
  approval_pending: "it waits for an approver's decision",
} as const satisfies Record<ApplyRefusal | `lease_${LeaseStatus}`, string>;

/** The invoice list's line for a stopped (rejected) lease, by why it was closed. */
export const LIST_STOPPED_WORDS = {
  cancelled: "Summary discarded. Nothing was changed.",
  signed_out: "Summary stopped when you signed out. Nothing was changed.",
  invoice_changed: "Summary out of date: the invoice was edited after it was requested. Nothing was changed.",
  generation_failed: "The summary could not be written. Nothing was changed.",
  dispatch_failed: "The summary could not be started. Nothing was changed.",
  actor_mismatch: "The summary was refused. Nothing was changed.",
  proposal_unusable: `The summary ${WRITTEN_WITH.unusable}. Nothing was changed.`,
  declined: "Summary declined by an approver. Nothing was changed.",
} as const satisfies Record<Exclude<ClosedReason, "deadline_passed">, string>;

export function listStoppedWords(reason: ClosedReason | null): string {
  return reason && known(LIST_STOPPED_WORDS, reason) ? LIST_STOPPED_WORDS[reason] : "Summary stopped. Nothing was changed.";
}

/** "1:05" for a number of whole seconds. */
export function countdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
