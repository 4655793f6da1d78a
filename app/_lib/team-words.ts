// The words a teammate reads on an invoice someone else owns, and the header's organization line.
// Client-safe (no server imports): the teammate panel is a client component.
import type { Purpose } from "@/lib/lease-codes";
import type { Role } from "@/lib/org-codes";

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

/** What a teammate reads of someone else's lease of one purpose in flight. */
export type TeammatePurposeWords = {
  /** Being written: "Alice Martin is writing a summary — 1:12 left", the countdown between. */
  writing: (name: string) => { before: string; after: string };
  /** Waiting for its author's review, and until when; the proposal itself is theirs alone. */
  review: (name: string, until: string) => string;
};

/**
 * Each purpose's words, keyed by the registry's codes: a purpose without words fails `tsc`. The
 * summary's are the panel's words from before there were purposes, unchanged.
 */
export const TEAMMATE_WORDS = {
  summarize_invoice: {
    writing: (name) => ({ before: `${name} is writing a summary — `, after: " left" }),
    review: (name, until) => `A summary by ${name} waits for their review until ${until}`,
  },
  review_invoice: {
    writing: (name) => ({ before: `${name} is reviewing the invoice — `, after: " left" }),
    // Not "waits for their review": the noun is the purpose's, the act of checking it its author's.
    review: (name, until) => `A review by ${name} waits for their decision until ${until}`,
  },
  categorize_lines: {
    writing: (name) => ({ before: `${name} is suggesting categories — `, after: " left" }),
    review: (name, until) => `Categories suggested by ${name} wait for their review until ${until}`,
  },
} as const satisfies Record<Purpose, TeammatePurposeWords>;

/** Someone else's summary being written: "Alice Martin is writing a summary — 1:12 left", the countdown between. */
export const teammateWritingWords = (name: string, purpose: Purpose = "summarize_invoice") => TEAMMATE_WORDS[purpose].writing(name);

/**
 * Someone else's summary waiting for their review, and until when: "A summary by Alice Martin
 * waits for their review until 14:32". The proposal itself is theirs alone.
 */
export const teammateReviewWords = (name: string, until: string, purpose: Purpose = "summarize_invoice") =>
  TEAMMATE_WORDS[purpose].review(name, until);
