// The words a finance user reads about a lease (app/_lib/lease-words.ts): every kind, reason
// and refusal has its own sentence, and a notice in the address says only what an action sent.
import { describe, expect, it } from "vitest";
import {
  applyRefusal,
  changedWords,
  channelWords,
  closedWords,
  countdown,
  eventWords,
  heldByWords,
  listStoppedWords,
  noticeOf,
  type LeaseEventJson,
  type LeaseJson,
  type NoticeCode,
} from "@/app/_lib/lease-words";
import { TEAM_WORDS, teammateReviewWords, teammateWritingWords } from "@/app/_lib/team-words";
import { CLOSED_REASONS, displayOf, EVENT_KINDS, type EventKind } from "@/lib/lease-codes";
import { DEVELOPER_WORDS, doubledWord } from "../e2e/support/plain-words";
import { type Purpose, PURPOSES, purposeOf } from "@/lib/purposes";

/** A purpose's words, as the page hands them to its panels. */
const wordsOf = (purpose: Purpose) => purposeOf(purpose).words;

const at = "2026-11-30T10:00:00.000Z";
const event = (kind: EventKind, detail: unknown = null): LeaseEventJson => ({ at, kind, detail });
const lease = (over: Partial<LeaseJson>): Pick<LeaseJson, "status" | "closed_reason" | "events"> => ({
  status: "rejected",
  closed_reason: null,
  events: [event("opened")],
  ...over,
});

/** Words for people: no code names leaking through (an underscore), nothing empty. */
const plain = (words: string) => words.length > 0 && !words.includes("_");

describe("eventWords", () => {
  it("has plain words of its own for every event kind", () => {
    const all = EVENT_KINDS.map((kind) => eventWords(event(kind)));
    for (const words of all) expect(plain(words), words).toBe(true);
    expect(new Set(all).size).toBe(EVENT_KINDS.length);
  });

  it("says why a generation failed, from the event's own code; an unknown code adds nothing", () => {
    expect(eventWords(event("generation_failed", { code: "model_output_invalid" }))).toBe(
      "The summary could not be written: the AI service's answer could not be used",
    );
    expect(eventWords(event("generation_failed", { code: "DROP TABLE" }))).toBe("The summary could not be written");
  });

  it("says why apply and discard were refused: apply by its code, discard by the status it found", () => {
    expect(eventWords(event("apply_refused", { code: "lease_expired" }))).toBe("Apply refused: time had run out");
    expect(eventWords(event("cancel_refused", { status: "applied" }))).toBe("Discard refused: already applied");
    expect(eventWords(event("cancel_refused", { status: "nonsense" }))).toBe("Discard refused");
  });

  it("a cancel before any proposal is a cancel, after one a discard; an edit's withdrawal names the fields", () => {
    expect(eventWords(event("cancelled"), [event("opened")])).toBe("Summary cancelled while it was being written");
    // A page of a long timeline may not reach back to `proposed`: the lease's proposal says it was.
    expect(eventWords(event("cancelled"), [event("apply_refused")], { summary: "S" })).toBe("Summary discarded");
    expect(eventWords(event("cancelled"), [event("opened"), event("proposed")])).toBe("Summary discarded");
    expect(eventWords(event("invoice_changed", { by: "edit", fields: ["counterparty", "due_on"] }))).toBe(
      "Withdrawn: the counterparty and due date were changed",
    );
  });
});

describe("closedWords and displayOf", () => {
  it("has plain words for a lease rejected for every closed reason, and for none", () => {
    for (const reason of [...CLOSED_REASONS, null]) {
      const words = closedWords(lease({ closed_reason: reason }));
      expect(plain(words), `${reason}: ${words}`).toBe(true);
      expect(words).toMatch(/Nothing was changed/);
    }
  });

  it("tells a failure, an edit's withdrawal and a user's own close apart", () => {
    expect(displayOf({ status: "rejected", closed_reason: "generation_failed" })).toBe("failed");
    expect(displayOf({ status: "rejected", closed_reason: "invoice_changed" })).toBe("outdated");
    expect(displayOf({ status: "rejected", closed_reason: "cancelled" })).toBe("rejected");
    expect(displayOf({ status: "open", closed_reason: null })).toBe("generating");
  });

  it("an expiry says whether the summary had been ready", () => {
    expect(closedWords(lease({ status: "expired", closed_reason: "deadline_passed" }))).toMatch(/before the summary was ready/);
    expect(
      closedWords(lease({ status: "expired", closed_reason: "deadline_passed", events: [event("opened"), event("proposed")] })),
    ).toMatch(/before the summary was applied/);
    // The latest page of a long timeline, without its `proposed` event: the proposal tells.
    const refusals = Array.from({ length: 50 }, () => event("apply_refused", { code: "lease_expired" }));
    expect(
      closedWords({ ...lease({ status: "expired", closed_reason: "deadline_passed", events: refusals }), proposal: { summary: "S" } }),
    ).toMatch(/before the summary was applied/);
    expect(closedWords({ ...lease({ closed_reason: "cancelled", events: refusals }), proposal: { summary: "S" } })).toMatch(
      /You discarded this summary/,
    );
    expect(closedWords({ ...lease({ closed_reason: "cancelled", events: refusals }), proposal: null })).toMatch(/before it was ready/);
  });
});

describe("noticeOf", () => {
  const rejected = { closed_reason: "signed_out" as const };

  it("turns every code an action sends into words", () => {
    expect(noticeOf("summarize.lease_in_flight", null)).toMatchObject({
      ok: false,
      action: "summarize",
      text: expect.stringMatching(/already under way/),
    });
    expect(noticeOf("summarize.invalid_request", null)?.text).toBe("The summary could not be started. Try again in a moment.");
    expect(noticeOf("discard.lease_not_cancelable", null)?.text).toMatch(/can no longer be discarded/);
    expect(noticeOf("cancel.lease_not_cancelable", null)?.text).toMatch(/can no longer be cancelled/);
    expect(noticeOf("edit.saved", null)).toEqual({ ok: true, text: "Changes saved.", action: "edit", code: "saved" });
    expect(noticeOf("edit.invalid_request", null, "DD.MM.YYYY")?.text).toMatch(/dates are written DD\.MM\.YYYY/);
  });

  it("a refused apply says why that lease was closed: from the notice when it carries the reason, else from the page's lease", () => {
    expect(noticeOf("apply.lease_rejected.cancelled", rejected)?.text).toMatch(/^This summary was discarded \(perhaps in another tab\)/);
    expect(noticeOf("apply.lease_rejected", rejected)?.text).toMatch(/^This summary was stopped when you signed out/);
    expect(noticeOf("apply.lease_rejected", null)?.text).toBe(applyRefusal("lease_rejected"));
  });

  it("says nothing for a code no action sends, so the address cannot put words in the page", () => {
    for (const param of [
      undefined,
      "",
      "summarize",
      "summarize.",
      "summarize.You have been hacked",
      "apply.lease_rejected.not_a_reason",
      "apply.lease_open.cancelled",
      "discard.lease_not_cancelable.extra",
      "apply.lease_rejected.cancelled.extra",
      "edit.toString",
      "apply.__proto__",
      "unknown.lease_open",
    ]) {
      expect(noticeOf(param, rejected), String(param)).toBeNull();
    }
  });
});

describe("the rest of the panel's and list's words", () => {
  it("changedWords lists one, two or more fields in a sentence, and ignores unknown ones", () => {
    expect(changedWords(["number"])).toBe("The invoice number was changed");
    expect(changedWords(["number", "issued_on", "due_on"])).toBe("The invoice number, issue date and due date were changed");
    expect(changedWords(["owner_id"])).toBeNull();
    expect(changedWords("number")).toBeNull();
  });

  it("countdown writes whole minutes and seconds, never below zero", () => {
    expect(countdown(65.9)).toBe("1:05");
    expect(countdown(0)).toBe("0:00");
    expect(countdown(-3)).toBe("0:00");
  });

  it("every channel and every stopped reason in the list has plain words", () => {
    for (const channel of ["connecting", "live", "polling", "offline", "lost"] as const) expect(plain(channelWords(channel))).toBe(true);
    for (const reason of [...CLOSED_REASONS, null]) expect(plain(listStoppedWords(reason))).toBe(true);
  });

  it("a lease in flight held by the invoice's former owner: their name, and no promise the page cannot keep", () => {
    const words = heldByWords("Alice Example");
    expect(plain(words)).toBe(true);
    expect(words).toContain("Alice Example");
    expect(words).not.toMatch(/reload/i);
  });
});

/** Every notice an action sends (lib-side codes, as NoticeCode spells them), but the edit's: they name no purpose. */
const NOTICES = [
  ...["dispatch_failed", "lease_in_flight", "invoice_not_found", "forbidden", "not_signed_in", "purpose_not_allowed"].map(
    (c) => `summarize.${c}`,
  ),
  ...["budget_exhausted", "invalid_request"].map((c) => `summarize.${c}`),
  ...["invoice_changed", "lease_expired", "lease_applied", "lease_open", "lease_not_found", "lease_rejected"].map((c) => `apply.${c}`),
  ...["proposal_unusable", "invalid_lines"].map((c) => `apply.${c}`),
  ...CLOSED_REASONS.map((r) => `apply.lease_rejected.${r}`),
  ...["lease_not_cancelable", "lease_not_found"].flatMap((c) => [`discard.${c}`, `cancel.${c}`]),
] satisfies string[] as NoticeCode[];

/** Every sentence a person can read about a lease of this purpose: its panel, its timeline, its refusals, a teammate's view. */
function everySentence(purpose: Purpose): string[] {
  const proposed = event("proposed");
  const events = [
    ...EVENT_KINDS.map((kind) => eventWords(event(kind), [], null, wordsOf(purpose))),
    eventWords(event("cancelled"), [proposed], null, wordsOf(purpose)),
    eventWords(event("invoice_changed", { by: "edit", fields: ["due_on"] }), [], null, wordsOf(purpose)),
    ...["model_unavailable", "model_output_invalid", "invalid_output", "model_not_configured", "invoice_not_found", "internal_error"].map(
      (code) => eventWords(event("generation_failed", { code }), [], null, wordsOf(purpose)),
    ),
    ...["lease_open", "lease_proposed", "lease_applied", "lease_rejected", "lease_expired", "invoice_changed", "proposal_unusable"].map(
      (code) => eventWords(event("apply_refused", { code }), [], null, wordsOf(purpose)),
    ),
  ];
  const closed = [
    ...[[], [proposed]].map((earlier) => closedWords(lease({ status: "expired", events: earlier }), wordsOf(purpose))),
    closedWords(lease({ status: "applied" }), wordsOf(purpose)),
    ...[...CLOSED_REASONS, null].map((reason) => closedWords(lease({ closed_reason: reason }), wordsOf(purpose))),
    closedWords(lease({ closed_reason: "cancelled", events: [proposed] }), wordsOf(purpose)),
    closedWords(
      lease({ closed_reason: "invoice_changed", events: [event("invoice_changed", { by: "edit", fields: ["due_on"] })] }),
      wordsOf(purpose),
    ),
  ];
  const notices = NOTICES.map((code) => noticeOf(code, null, undefined, wordsOf(purpose))?.text ?? `no words for ${code}`);
  const writing = teammateWritingWords("Alice Martin", wordsOf(purpose));
  const teammate = [`${writing.before}1:12${writing.after}`, teammateReviewWords("Alice Martin", "14:32", wordsOf(purpose))];
  // The teammate panel's line for no lease at all names every purpose: read with the summary's.
  if (purpose === "summarize_invoice") teammate.push(TEAM_WORDS.noLease);
  // The teammate templates are read filled in (above), the history's attempt with its number.
  const { teammateWriting: _writing, teammateReview: _review, attempt, ...panel } = wordsOf(purpose);
  return [...Object.values(panel), `${attempt} 2`, ...events, ...closed, ...notices, ...teammate];
}

describe("every purpose's words, as a finance user reads them", () => {
  it.each(PURPOSES)('%s: no word said twice in a breath (not "Review ready for review"), no code, no machinery', (purpose) => {
    for (const words of everySentence(purpose)) {
      expect(plain(words), words).toBe(true);
      expect(doubledWord(words), words).toBeNull();
      expect(words.match(DEVELOPER_WORDS)?.[0], words).toBeUndefined();
    }
  });

  it.each(PURPOSES.filter((p) => p !== "summarize_invoice"))("%s speaks of itself, never of a summary", (purpose) => {
    for (const words of everySentence(purpose)) expect(words, words).not.toMatch(/summar/i);
  });

  it("each purpose's timeline says it in its own words", () => {
    expect(PURPOSES.map((p) => eventWords(event("proposed"), [], null, wordsOf(p)))).toEqual([
      "Summary ready for review",
      "Review findings ready to check",
      "Categories suggested, ready for review",
    ]);
    expect(closedWords(lease({ closed_reason: "proposal_unusable" }), wordsOf("categorize_lines"))).toMatch(
      /^The category suggestion named a line or an account this invoice does not have, so it was not applied\./,
    );
  });

  it("the rule finds a doubled word near, not far, and reads each sentence apart", () => {
    expect(doubledWord("Review ready for review")).toEqual({ word: "review", sentence: "Review ready for review" });
    expect(doubledWord("A review by Alice Martin waits for their review until 14:32")?.word).toBe("review");
    expect(doubledWord("The review could not be written. Review again.")).toBeNull();
    expect(doubledWord("Suggest categories for each line so the chart of accounts and the ledger stay aligned with categories")).toBeNull();
  });
});
