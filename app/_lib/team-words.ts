// The words a teammate reads on an invoice someone else owns, and the header's organization line.
// Client-safe (no server imports): the teammate panel is a client component.
import type { Role } from "@/lib/org-codes";
import type { PurposeWords } from "@/lib/purposes/types";

/** A member's role as the header shows it. */
export const ROLE_WORDS = {
  admin: "Admin",
  approver: "Approver",
  member: "Member",
} as const satisfies Record<Role, string>;

/** The header's line: "Northwind Finance · Admin". */
export const orgLineWords = (orgName: string, role: Role) => `${orgName} · ${ROLE_WORDS[role]}`;

/** Who owns an invoice, in the list and on its page; `null` for the viewer's own. */
export const ownerWords = (name: string | null) => (name === null ? "Yours" : `Owner: ${name}`);

export const TEAM_WORDS = {
  /** The teammate panel's heading: it speaks of every purpose's lease. */
  heading: "AI assistance",
  /** The viewer's own invoice, on its page. */
  ownedByYou: "You own this invoice.",
  noLease: "No summary, review or category suggestion is under way for this invoice right now.",
  timeUp: "Time is up. Checking with the server…",
} as const;

/** Why a teammate sees no Summarize, Apply or Discard. */
export const onlyOwnerSummarizes = (owner: string) => `Only ${owner}, the owner, can summarize this invoice.`;

/** Why a teammate sees no edit form. */
export const onlyOwnerEdits = (owner: string) => `Only ${owner}, the owner, or an admin of your organization can edit this invoice.`;

/** A purpose's words for a teammate (its PurposeWords' `teammate…` templates), as the page hands them to the teammate panel. */
export type TeammatePurposeWords = Pick<PurposeWords, "teammateWriting" | "teammateReview">;

const fill = (template: string, values: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (whole, key: string) => (Object.hasOwn(values, key) ? values[key]! : whole));

/** Someone else's lease being written: "Alice Martin is writing a summary — 1:12 left", the countdown between. */
export const teammateWritingWords = (name: string, words: TeammatePurposeWords) => ({
  before: `${fill(words.teammateWriting, { name })} — `,
  after: " left",
});

/**
 * Someone else's lease waiting for their review, and until when: "A summary by Alice Martin
 * waits for their review until 14:32". The proposal itself is theirs alone.
 */
export const teammateReviewWords = (name: string, until: string, words: TeammatePurposeWords) =>
  fill(words.teammateReview, { name, until });
