// The words a person reads about the four-eyes lane (docs/decisions/0078, 0086): the invoice
// panel's Submit for approval and its waiting state, the approvals queue and one request's page,
// the policy form on /org. Keyed by the codes of lib/lease-codes.ts; a code without words fails
// `tsc`. Client-safe (no server imports). Every sentence is held to the finance-words rule by
// tests/unit/approval-words.test.ts.
import type { ApplyPolicy, ApprovalStatus, DecisionRefusal, SubmitRefusal } from "@/lib/lease-codes";

/** "Carol Nguyen", "Carol Nguyen or Alice Martin", "Carol Nguyen, Bo Li or Alice Martin". */
export function oneOf(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? "";
  return `${names.slice(0, -1).join(", ")} or ${names.at(-1)!}`;
}

/** The owner's panel under a four_eyes policy. */
export const LANE_WORDS = {
  submit: "Submit for approval",
  withdraw: "Withdraw",
  /** Before the submit: why there is no Apply. */
  needsApproval: (approvers: readonly string[]) =>
    approvers.length
      ? `Your team requires a second person's approval before this is saved to the invoice. ${oneOf(approvers)} can approve it.`
      : "Your team requires a second person's approval before this is saved to the invoice, and nobody else on the team can approve yet: ask an admin to give someone the Approver role.",
  waitingUntil: "Waiting for approval until ",
  timeLeft: "Time left for a decision: ",
  whoApproves: (approvers: readonly string[]) =>
    approvers.length ? `${oneOf(approvers)} can approve it.` : "Nobody else on the team can approve it yet: ask an admin.",
  waitingNote: "Nothing is saved to the invoice unless it is approved. Withdraw takes the request back.",
  badge: "Waiting for approval",
  /** Before the proposal's text in the summary's panel, in place of "After Apply:". */
  ifApproved: "If approved:",
  approvedBy: (name: string | null) => `Approved by ${name ?? "an approver"} and saved to the invoice.`,
  declinedBy: (name: string | null, comment: string | null) =>
    `${name ?? "An approver"} declined this request, so nothing was changed on the invoice.${comment ? ` Their comment: “${comment}”` : ""}`,
  expired: "No one approved this request before its time ran out. Nothing was changed on the invoice.",
  withdrawn: "You withdrew this request. Nothing was changed on the invoice.",
} as const;

/** Why Submit for approval was refused (the notice `submit.<code>`). */
export const SUBMIT_WORDS = {
  lease_not_found: "We could not find this proposal. Reload the page to see where things stand.",
  lease_open: "The proposal is still being written. You can submit it once it appears.",
  lease_applied: "This proposal has already been saved to the invoice.",
  lease_rejected: "This proposal was closed, so it cannot be submitted. Nothing was changed on the invoice.",
  lease_expired: "Time ran out on this proposal before it was submitted. Nothing was changed on the invoice.",
  invoice_changed: "This invoice was edited after the proposal was made, so it was not submitted. Ask for a new one.",
  proposal_unusable: "This proposal came back in a form that cannot be used, so it was not submitted. Ask for a new one.",
  invalid_lines: "Choose at least one of the proposed lines to submit, or discard the proposal. Nothing was changed on the invoice.",
  approval_not_required: "Your team no longer requires approval for this: you can apply it yourself. Nothing was changed on the invoice.",
  not_signed_in: "You were signed out, so nothing was submitted. Sign in again to continue.",
} as const satisfies Record<SubmitRefusal, string>;

/** An approver's Approve or Decline, refused (the notice `decision.<code>`), and the decision's own refusals of the form. */
export const DECISION_WORDS = {
  approval_not_found: "We could not find this request. It may belong to another team.",
  same_person: "You cannot approve your own request: someone else on your team must decide it.",
  forbidden: "Only an admin or an approver of your team can decide requests. Nothing was changed on the invoice.",
  approval_approved: "This request was already approved.",
  approval_declined: "This request was already declined. Nothing was changed on the invoice.",
  approval_expired: "The time for a decision ran out, so nothing was changed on the invoice.",
  approval_withdrawn: "The request was withdrawn, so nothing was changed on the invoice.",
  invoice_changed: "The invoice was edited after this request was made, so it was withdrawn. Nothing was changed on the invoice.",
  proposal_changed:
    "The proposal is no longer the one you were shown, so nothing was saved to the invoice. Reload the page and look again.",
  proposal_unusable: "This proposal cannot be saved as it is, so nothing was changed on the invoice.",
  not_signed_in: "You were signed out, so nothing was decided. Sign in again to continue.",
  comment_required: "Say why you decline: the requester reads it. Nothing was changed on the invoice.",
  invalid_request: "The form could not be read. Reload the page and try again. Nothing was changed on the invoice.",
} as const satisfies Record<DecisionRefusal | "comment_required" | "invalid_request", string>;

export type DecisionNotice = keyof typeof DECISION_WORDS | "approved" | "declined";

export const DECISION_DONE_WORDS = {
  approved: "Approved. The invoice was changed as shown.",
  declined: "Declined. The requester sees your comment; the invoice was not changed.",
} as const;

export function isDecisionNotice(code: string | undefined): code is DecisionNotice {
  return Boolean(code && (Object.hasOwn(DECISION_WORDS, code) || Object.hasOwn(DECISION_DONE_WORDS, code)));
}

export function decisionNoticeWords(code: DecisionNotice): string {
  return code === "approved" || code === "declined" ? DECISION_DONE_WORDS[code] : DECISION_WORDS[code];
}

/** Where one request stands, on its page and in the queue. */
export const REQUEST_STATUS_WORDS = {
  pending: "Waiting for a decision",
  approved: "Approved",
  declined: "Declined",
  expired: "Time ran out",
  withdrawn: "Withdrawn",
} as const satisfies Record<ApprovalStatus, string>;

/** The sentence under a request that is no longer waiting, by how it ended. */
export function requestEndWords(r: {
  status: ApprovalStatus;
  approverName: string | null;
  comment: string | null;
  closedReason: string | null;
}): string {
  switch (r.status) {
    case "pending":
      return "";
    case "approved":
      return `${r.approverName ?? "An approver"} approved this request and the invoice was changed.`;
    case "declined":
      return `${r.approverName ?? "An approver"} declined this request, so the invoice was not changed.${r.comment ? ` Their comment: “${r.comment}”` : ""}`;
    case "expired":
      return "No one decided this request before its time ran out. The invoice was not changed.";
    case "withdrawn":
      return r.closedReason === "invoice_changed"
        ? "The invoice was edited after this request was made, so it was withdrawn. The invoice was not changed by it."
        : r.closedReason === "signed_out"
          ? "The request was withdrawn when its requester left the team. The invoice was not changed."
          : "The requester withdrew this request. The invoice was not changed.";
  }
}

export const APPROVALS_PAGE_WORDS = {
  title: "Waiting for your approval",
  intro: "Requests from your team to change an invoice. Open one to see exactly what would change, then approve or decline it.",
  empty: "Nothing is waiting for your approval.",
  notApprover: "Only an admin or an approver decides requests. Ask an admin if you should.",
  ownRequest: "You cannot approve your own request. Someone else on your team with the Approver or Admin role decides it.",
  changesHeading: "What will change if approved",
  // Once decided, the heading says what the list is: what approve wrote (the invoice now holds it,
  // so "before → after" against it would read "X → X"), or what the request would have changed.
  savedHeading: "What was saved to the invoice",
  notSavedHeading: "What it would have changed",
  unchangedSince: "The invoice has not changed since the request was made.",
  comment: "Comment (optional)",
  declineComment: "Why you decline (required)",
  approve: "Approve",
  decline: "Decline",
  cannotShow: "What this request would change cannot be shown: the proposal is not one that can be saved.",
} as const;

/** The policy form on /org. */
export const POLICY_WORDS = {
  heading: "Approval before saving",
  intro:
    "For each task, choose whether its owner saves it to the invoice alone or a second person must approve it first. A change applies to the next request; requests already waiting keep their own time.",
  self: "The owner saves it",
  four_eyes: "A second person approves it",
  hours: "Time to decide (hours)",
  save: "Save",
  readOnly: "Only an admin can change these.",
  noApprover:
    "Nobody but the admins can approve yet: a request made by the only person who could approve it waits until its time runs out.",
  saved: "saved. It applies to the next request.",
  invalid: "choose how it is saved and a time between 1 and 720 hours. Nothing was changed.",
  forbidden: "only an admin can change how tasks are approved. Nothing was changed.",
} as const;

export const POLICY_CHOICE_WORDS = {
  self: POLICY_WORDS.self,
  four_eyes: POLICY_WORDS.four_eyes,
} as const satisfies Record<ApplyPolicy, string>;

export type PolicyNotice = "saved" | "invalid" | "forbidden";
export const isPolicyNotice = (v: string | undefined): v is PolicyNotice => v === "saved" || v === "invalid" || v === "forbidden";
