// Inngest's request signing, as the self-hosted server does it and the pinned SDK (inngest
// 4.24.0) verifies it:
//   - X-Inngest-Signature: t=<unix seconds>&s=<hex HMAC-SHA256>, over the body's canonical
//     JSON (RFC 8785, the SDK re-canonicalizes what it parsed) followed by t, keyed with the
//     signing key's text after its `signkey-<env>-` prefix. Valid for 5 minutes either way.
//   - Calls to the server's API (register, checkpoints) carry `Authorization: Bearer <hashed
//     key>`: the prefix kept, the rest replaced by the hex SHA-256 of the key's bytes.
//   - Events are POSTed to /e/<event key>.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import canonicalize from "canonicalize";

const PREFIX = /^signkey-\w+-/;

/** The exact text to send as a signed body, so what is signed is what the SDK checks. */
export function canonicalBody(body: unknown): string {
  return body === undefined || body === "" ? "" : (canonicalize(body) ?? "");
}

/** The X-Inngest-Signature value for a body text (as sent: canonicalBody's output). */
export function signBody(bodyText: string, signingKey: string, at = new Date()): string {
  const t = Math.floor(at.getTime() / 1000).toString();
  const s = createHmac("sha256", signingKey.replace(PREFIX, "")).update(bodyText).update(t).digest("hex");
  return `t=${t}&s=${s}`;
}

/** The bearer token the SDK sends to the server: see hashSigningKey in the SDK. */
export function hashSigningKey(signingKey: string): string {
  const prefix = PREFIX.exec(signingKey)?.[0] ?? "";
  return `${prefix}${createHash("sha256").update(Buffer.from(signingKey.replace(PREFIX, ""), "hex")).digest("hex")}`;
}

/** Constant-time equality for secrets of any length. */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** Whether a request's `Authorization` header is the bearer of one of the signing keys. */
export function bearerMatches(authorization: string | undefined, signingKeys: string[]): boolean {
  const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
  return token !== undefined && signingKeys.some((key) => sameSecret(token, hashSigningKey(key)));
}
