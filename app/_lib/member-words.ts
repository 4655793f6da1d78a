// The words a person reads about their team: roles, and every refusal of the member and
// invitation writes, keyed by the codes the routes answer (app/_lib/http.ts ERROR_STATUS). A
// code without words here fails `tsc`. Client-safe.
import type { Role } from "@/lib/org-codes";
import { NEW_PASSWORD_MIN } from "@/lib/member-rules";

export const ROLE_WORDS = {
  admin: "Admin",
  approver: "Approver",
  member: "Member",
} as const satisfies Record<Role, string>;

/** What each role may do, in a line, for the role picker and the team page. */
export const ROLE_HINTS = {
  admin: "Manages the team and may edit any invoice.",
  approver: "Works on their own invoices and reads the team's, as a member; the role that approves.",
  member: "Works on their own invoices; reads the team's.",
} as const satisfies Record<Role, string>;

export type MemberNotice =
  | "invited"
  | "revoked"
  | "role_changed"
  | "removed"
  | "forbidden"
  | "member_not_found"
  | "invitation_not_found"
  | "last_admin"
  | "already_member"
  | "invalid_credentials"
  | "invalid_request"
  | "too_many_attempts"
  | "password_mismatch";

export const MEMBER_WORDS = {
  invited: "Invitation made. Copy the link below and send it to them: it is shown only this once.",
  revoked: "The invitation was withdrawn; its link no longer works.",
  role_changed: "Role changed.",
  removed: "They were removed from the team and signed out. Their invoices stay with the team.",
  forbidden: "Only an admin can manage the team.",
  member_not_found: "That person is no longer on the team.",
  invitation_not_found: "That invitation link is not valid: it was used, withdrawn or has run out. Ask your admin for a new one.",
  last_admin: "The team needs at least one admin. Make someone else an admin first.",
  already_member: "That email belongs to someone who is on a team already (this one or another). A person can belong to one team for now.",
  invalid_credentials: "That password does not match the account for this email.",
  invalid_request: "Check the form: enter a valid email address and pick a role.",
  too_many_attempts: "Too many attempts with this link. Wait a few minutes and try again.",
  password_mismatch: "The two passwords are not the same.",
} as const satisfies Record<MemberNotice, string>;

export const SIGN_UP_WORDS = {
  invalid: `Enter your name and a password of at least ${NEW_PASSWORD_MIN} characters.`,
  /** The password form for an email that has an account (a member removed before, invited back). */
  invalidPassword: "Enter your password.",
} as const;

/** Sign-in's limit reached on an invitation's page, in words: the wait, in minutes. */
export function tooManySignInAttempts(retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return `Too many attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}

export function isMemberNotice(value: unknown): value is MemberNotice {
  return typeof value === "string" && Object.hasOwn(MEMBER_WORDS, value);
}
