// The proposal's hash the four-eyes lane binds an approval to (docs/decisions/0078): the sha256,
// in hex, of the RFC 8785 canonical JSON (the `canonicalize` package) of the lease's proposal as
// stored, `model` included. Taken at submit and again by approve from the proposal it is about to
// write; the approver's body must carry the same.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

export function proposalSha256(proposal: unknown): string {
  // A proposal is jsonb, so always JSON; a lease seeded by hand may hold none (null).
  return createHash("sha256")
    .update(canonicalize(proposal ?? null) ?? "null", "utf8")
    .digest("hex");
}

/** What a body's `proposal_sha256` must look like: 64 lower-case hex digits (upper case is read as lower). */
export const SHA256_HEX = /^[0-9a-f]{64}$/;
