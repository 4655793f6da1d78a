// The four-eyes lane's words (app/_lib/approval-words.ts), as a finance user reads them: every
// refusal of Submit, Approve and Decline, every way a request ends, the queue's, the request
// page's and the policy form's sentences, in plain words (the finance-words rule of
// tests/e2e/support/plain-words.ts), none said twice in a breath; and a notice in the address says
// only what an action sent.
import { describe, expect, it } from "vitest";
import {
  APPROVALS_PAGE_WORDS,
  DECISION_WORDS,
  decisionNoticeWords,
  isDecisionNotice,
  LANE_WORDS,
  oneOf,
  POLICY_WORDS,
  REQUEST_STATUS_WORDS,
  requestEndWords,
  SUBMIT_WORDS,
} from "@/app/_lib/approval-words";
import { noticeOf } from "@/app/_lib/lease-words";
import { APPROVAL_STATUSES, CLOSED_REASONS, DECISION_REFUSALS, SUBMIT_REFUSALS } from "@/lib/lease-codes";
import { DEVELOPER_WORDS, doubledWord } from "../e2e/support/plain-words";

const names = [[], ["Carol Nguyen"], ["Alice Martin", "Carol Nguyen"]];

function everySentence(): string[] {
  const ends = APPROVAL_STATUSES.flatMap((status) =>
    [...CLOSED_REASONS, null].flatMap((closedReason) =>
      [null, "Not agreed yet"].map((comment) => requestEndWords({ status, approverName: "Carol Nguyen", comment, closedReason })),
    ),
  ).filter(Boolean);
  return [
    ...Object.values(SUBMIT_WORDS),
    ...Object.values(DECISION_WORDS),
    ...Object.values(REQUEST_STATUS_WORDS),
    ...Object.values(APPROVALS_PAGE_WORDS),
    ...Object.values(POLICY_WORDS),
    ...names.flatMap((n) => [LANE_WORDS.needsApproval(n), LANE_WORDS.whoApproves(n)]),
    LANE_WORDS.submit,
    LANE_WORDS.withdraw,
    LANE_WORDS.waitingUntil,
    LANE_WORDS.timeLeft,
    LANE_WORDS.waitingNote,
    LANE_WORDS.badge,
    LANE_WORDS.ifApproved,
    LANE_WORDS.approvedBy("Carol Nguyen"),
    LANE_WORDS.approvedBy(null),
    LANE_WORDS.declinedBy("Carol Nguyen", "The hours are not agreed"),
    LANE_WORDS.declinedBy(null, null),
    LANE_WORDS.expired,
    LANE_WORDS.withdrawn,
    ...ends,
  ];
}

describe("the lane's words", () => {
  it("every sentence is plain: no machinery's word, no code name, none said twice", () => {
    const all = everySentence();
    expect(all.length).toBeGreaterThan(60);
    for (const words of all) {
      expect(words.trim().length, words).toBeGreaterThan(0);
      expect(words, words).not.toMatch(/_/);
      expect(words.match(DEVELOPER_WORDS)?.[0], words).toBeUndefined();
      expect(doubledWord(words), words).toBeNull();
    }
  });

  it("every refusal has its own words (a code without words fails tsc; here, none is a copy of another)", () => {
    expect(new Set(SUBMIT_REFUSALS.map((c) => SUBMIT_WORDS[c])).size).toBe(SUBMIT_REFUSALS.length);
    expect(new Set(DECISION_REFUSALS.map((c) => DECISION_WORDS[c])).size).toBe(DECISION_REFUSALS.length);
  });

  it("a request's end names who decided and what they said", () => {
    expect(requestEndWords({ status: "declined", approverName: "Carol Nguyen", comment: "Not agreed", closedReason: "declined" })).toBe(
      "Carol Nguyen declined this request, so the invoice was not changed. Their comment: “Not agreed”",
    );
    expect(requestEndWords({ status: "withdrawn", approverName: null, comment: null, closedReason: "invoice_changed" })).toMatch(
      /^The invoice was edited after this request was made/,
    );
    expect(requestEndWords({ status: "pending", approverName: null, comment: null, closedReason: null })).toBe("");
  });

  it("who can approve, as one list", () => {
    expect(oneOf([])).toBe("");
    expect(oneOf(["Carol Nguyen"])).toBe("Carol Nguyen");
    expect(oneOf(["Alice Martin", "Bo Li", "Carol Nguyen"])).toBe("Alice Martin, Bo Li or Carol Nguyen");
  });
});

describe("notices in the address", () => {
  it("submit.<code> reads as the submit's words, in the panel of its purpose", () => {
    for (const code of SUBMIT_REFUSALS) expect(noticeOf(`submit.${code}`, null)).toMatchObject({ ok: false, text: SUBMIT_WORDS[code] });
    expect(noticeOf("submit.nope", null)).toBeNull();
    expect(noticeOf("submit.lease_expired.cancelled", null)).toBeNull();
  });

  it("a decision's notice is one an action sends, or nothing", () => {
    for (const code of [...DECISION_REFUSALS, "approved", "declined", "comment_required"]) {
      expect(isDecisionNotice(code), code).toBe(true);
      expect(decisionNoticeWords(code as Parameters<typeof decisionNoticeWords>[0]).length).toBeGreaterThan(0);
    }
    for (const code of [undefined, "", "toString", "constructor", "__proto__", "approved.x"])
      expect(isDecisionNotice(code), String(code)).toBe(false);
  });
});
