import "server-only";
// Sign-in attempt limits, counted in PostgreSQL (table rate_limit) so that every app instance
// sees the same counters. Why these numbers and which address is trusted:
// docs/decisions/0010-sign-in-rate-limit.md.
import { createHash } from "node:crypto";
import { RateLimiterDrizzle, RateLimiterRes } from "rate-limiter-flexible";
import type { Db } from "@/db/client";
import { rateLimit } from "@/db/schema";
import { DEVICE_TTL_SECONDS, type DeviceToken } from "./device-cookie";

export const SIGN_IN_LIMITS = {
  // Per email, known or not: 10 failed attempts in 15 minutes, then 5 minutes refused. Short,
  // so that someone guessing at a real user's email locks them out for minutes, not hours.
  email: { keyPrefix: "sign_in_email", points: 10, duration: 15 * 60, blockDuration: 5 * 60 },
  // Per client address (only when TRUST_PROXY says how to find it): a larger budget against
  // one address spraying many emails.
  address: { keyPrefix: "sign_in_address", points: 100, duration: 60 * 60, blockDuration: 15 * 60 },
  // Per device token (lib/device-cookie.ts), which exempts its browser from the email's limit:
  // 5 wrong passwords with no success between, and the token is refused for the rest of its
  // life, so a stolen or shared browser's token buys an attacker 5 guesses, not a bypass.
  device: { keyPrefix: "sign_in_device", points: 5, duration: DEVICE_TTL_SECONDS, blockDuration: DEVICE_TTL_SECONDS },
} as const;

type Limiters = Record<keyof typeof SIGN_IN_LIMITS, RateLimiterDrizzle>;
// One pair per database handle: each limiter keeps a timer that sweeps expired rows.
const limiters = new WeakMap<Db, Limiters>();

function limitersFor(db: Db): Limiters {
  let pair = limiters.get(db);
  if (!pair) {
    const make = (opts: (typeof SIGN_IN_LIMITS)[keyof typeof SIGN_IN_LIMITS]) =>
      new RateLimiterDrizzle({ ...opts, storeClient: db, schema: rateLimit });
    pair = { email: make(SIGN_IN_LIMITS.email), address: make(SIGN_IN_LIMITS.address), device: make(SIGN_IN_LIMITS.device) };
    limiters.set(db, pair);
  }
  return pair;
}

type Env = Record<string, string | undefined>;

/**
 * The client's address, from X-Forwarded-For as written by `TRUST_PROXY` proxies in front of
 * the app (each appends the address it saw): the entry that many places from the right. With
 * no trusted proxy (the default) the header is the client's own word, so there is no address.
 */
export function clientAddress(headers: Headers, env: Env = process.env): string | null {
  const hops = trustedProxyHops(env);
  if (hops === 0) return null;
  const chain = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  return chain.length >= hops ? chain[chain.length - hops]!.slice(0, 64) : null;
}

export function trustedProxyHops(env: Env = process.env): number {
  const raw = env.TRUST_PROXY?.trim() || "0";
  if (!/^\d{1,2}$/.test(raw)) throw new Error(`TRUST_PROXY must be the number of proxies in front of the app (0-99), not "${raw}".`);
  return Number(raw);
}

// Attempted emails can be anything, a mistyped password included: the table holds a hash.
export const emailKey = (email: string) => createHash("sha256").update(email.trim().toLowerCase()).digest("hex");

export type SignInGate = { ok: true; succeeded(): Promise<void> } | { ok: false; retryAfterSeconds: number };

const refusal = (refused: RateLimiterRes) => ({
  ok: false as const,
  retryAfterSeconds: Math.max(1, Math.ceil(refused.msBeforeNext / 1000)),
});

/**
 * Counts one sign-in attempt before the password is checked, so that a burst of parallel
 * attempts cannot all slip in under the limit; a success then takes its attempt back (the
 * counter is cleared, the address's one point returned), so only failures add up.
 *
 * A browser whose device cookie carries a token for this email (OWASP's trusted client) is
 * counted on that token instead of the email, so an email locked by someone else's guesses
 * stays open to it; a token past its own limit counts for nothing and the attempt is counted
 * on the email as from any other browser.
 */
export async function admitSignIn(db: Db, input: { email: string; address: string | null; device?: DeviceToken[] }): Promise<SignInGate> {
  const { email, address, device } = limitersFor(db);
  const key = emailKey(input.email);
  const token = input.device?.find((t) => t.user === key)?.token;
  const reward = async () => {
    if (input.address) await address.reward(input.address);
  };
  try {
    if (input.address) await address.consume(input.address);
  } catch (refused) {
    if (!(refused instanceof RateLimiterRes)) throw refused;
    return refusal(refused);
  }
  if (token) {
    try {
      await device.consume(token);
      // The email's counter is left as it is: this browser's success says nothing about the others.
      return { ok: true, succeeded: async () => void (await Promise.all([device.delete(token), reward()])) };
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
    }
  }
  try {
    await email.consume(key);
  } catch (refused) {
    if (!(refused instanceof RateLimiterRes)) throw refused;
    return refusal(refused);
  }
  return { ok: true, succeeded: async () => void (await Promise.all([email.delete(key), reward()])) };
}

// ---------------------------------------------------------------------------------------
// Invitation links (GET and POST /api/invitations/:token): the one other door open without a
// session. A token is 256 random bits, so guessing one is hopeless; the limits bound what a
// script costs us (each POST may hash a password) and what one link can be hammered with.

export const INVITATION_LIMITS = {
  // Per link (its token's sha256, known or not): 20 uses in 15 minutes, then 5 minutes refused.
  token: { keyPrefix: "invitation_token", points: 20, duration: 15 * 60, blockDuration: 5 * 60 },
  // Per client address, when TRUST_PROXY says how to find it: as sign-in's.
  address: { keyPrefix: "invitation_address", points: 100, duration: 60 * 60, blockDuration: 15 * 60 },
} as const;

const invitationLimiters = new WeakMap<Db, Record<keyof typeof INVITATION_LIMITS, RateLimiterDrizzle>>();

/** Counts one use of an invitation link; refused (with the wait) past either limit. */
export async function admitInvitation(
  db: Db,
  input: { tokenKey: string; address: string | null },
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  let pair = invitationLimiters.get(db);
  if (!pair) {
    const make = (opts: (typeof INVITATION_LIMITS)[keyof typeof INVITATION_LIMITS]) =>
      new RateLimiterDrizzle({ ...opts, storeClient: db, schema: rateLimit });
    pair = { token: make(INVITATION_LIMITS.token), address: make(INVITATION_LIMITS.address) };
    invitationLimiters.set(db, pair);
  }
  try {
    if (input.address) await pair.address.consume(input.address);
    await pair.token.consume(input.tokenKey);
  } catch (refused) {
    if (!(refused instanceof RateLimiterRes)) throw refused;
    return refusal(refused);
  }
  return { ok: true };
}
