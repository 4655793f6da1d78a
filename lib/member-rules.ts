// The numbers of the member rules, client-safe, for lib/members.ts and the words a person reads.

/** How long an invitation link works, by the database clock. */
export const INVITATION_TTL_DAYS = 7;
/**
 * A new password's shortest length (NIST SP 800-63B asks for 8 at least, 15 without a second
 * factor; 12 here). Sign-in itself accepts any stored password.
 */
export const NEW_PASSWORD_MIN = 12;
export const NEW_PASSWORD_MAX = 1024;
