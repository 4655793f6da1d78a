import "server-only";
// Sign-in attempt limits, counted in PostgreSQL (table rate_limit) so that every app instance
// sees the same counters. Why these numbers and which address is trusted:
// docs/decisions/0010-sign-in-rate-limit.md.
import { createHash } from "node:crypto";
import { RateLimiterDrizzle, RateLimiterRes } from "rate-limiter-flexible";
import type { Db } from "@/db/client";
import { rateLimit } from "@/db/schema";

export const SIGN_IN_LIMITS = {
  // Per email, known or not: 10 failed attempts in 15 minutes, then 5 minutes refused. Short,
  // so that someone guessing at a real user's email locks them out for minutes, not hours.
  email: { keyPrefix: "sign_in_email", points: 10, duration: 15 * 60, blockDuration: 5 * 60 },
  // Per client address (only when TRUST_PROXY says how to find it): a larger budget against
  // one address spraying many emails.
  address: { keyPrefix: "sign_in_address", points: 100, duration: 60 * 60, blockDuration: 15 * 60 },
} as const;

type Limiters = { email: RateLimiterDrizzle; address: RateLimiterDrizzle };
// One pair per database handle: each limiter keeps a timer that sweeps expired rows.
const limiters = new WeakMap<Db, Limiters>();

function limitersFor(db: Db): Limiters {
  let pair = limiters.get(db);
  if (!pair) {
    const make = (opts: (typeof SIGN_IN_LIMITS)[keyof typeof SIGN_IN_LIMITS]) =>
      new RateLimiterDrizzle({ ...opts, storeClient: db, schema: rateLimit });
    pair = { email: make(SIGN_IN_LIMITS.email), address: make(SIGN_IN_LIMITS.address) };
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
const emailKey = (email: string) => createHash("sha256").update(email.trim().toLowerCase()).digest("hex");

export type SignInGate = { ok: true; succeeded(): Promise<void> } | { ok: false; retryAfterSeconds: number };

/**
 * Counts one sign-in attempt before the password is checked, so that a burst of parallel
 * attempts cannot all slip in under the limit; a success then takes its attempt back (the
 * email's counter is cleared, the address's one point returned), so only failures add up.
 */
export async function admitSignIn(db: Db, input: { email: string; address: string | null }): Promise<SignInGate> {
  const { email, address } = limitersFor(db);
  const key = emailKey(input.email);
  try {
    if (input.address) await address.consume(input.address);
    await email.consume(key);
  } catch (refused) {
    if (!(refused instanceof RateLimiterRes)) throw refused;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(refused.msBeforeNext / 1000)) };
  }
  return {
    ok: true,
    async succeeded() {
      await email.delete(key);
      if (input.address) await address.reward(input.address);
    },
  };
}
