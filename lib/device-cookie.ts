import "server-only";
// OWASP's device cookies ("Slow Down Online Guessing Attacks with Device Cookies"): a browser
// that signed in as a user carries a token for that user, sealed by iron-session with the
// session's password (so it cannot be forged, read or moved to another user), and that token
// exempts it from the per-email lockout an attacker can trigger. Its own limit and its
// numbers: lib/rate-limit.ts and docs/decisions/0010-sign-in-rate-limit.md.
import { randomBytes } from "node:crypto";
import { getIronSession, type IronSession, type SessionOptions } from "iron-session";
import { z } from "zod";
import { appEnv } from "./env";

export const DEVICE_COOKIE = "claimcheck_device";
/** A token's life: the seal's and the cookie's. Every successful sign-in writes a new one. */
export const DEVICE_TTL_SECONDS = 30 * 24 * 60 * 60;
/** Users per browser (a shared computer); the one signed in longest ago drops out first. */
export const MAX_DEVICE_TOKENS = 5;

/** `user`: the attempted email's key (lib/rate-limit.ts emailKey), so it is checked before any lookup. */
export type DeviceToken = { user: string; token: string };
export type DeviceData = { tokens?: unknown };
export type DeviceCookie = IronSession<DeviceData>;

const Tokens = z
  .array(z.object({ user: z.string().regex(/^[0-9a-f]{64}$/), token: z.string().regex(/^[0-9a-f]{32}$/) }))
  .max(MAX_DEVICE_TOKENS);

export function deviceOptions(): SessionOptions {
  const env = appEnv();
  return {
    cookieName: DEVICE_COOKIE,
    password: env.sessionPasswords,
    ttl: DEVICE_TTL_SECONDS,
    cookieOptions: { httpOnly: true, sameSite: "lax", secure: env.cookieSecure, path: "/" },
  };
}

/** The tokens a device cookie carries; anything that is not exactly that (another seal's data) is none. */
export function deviceTokens(data: DeviceData): DeviceToken[] {
  const parsed = Tokens.safeParse(data.tokens);
  return parsed.success ? parsed.data : [];
}

/** The browser's tokens after `user` signed in on it: a fresh token for that user, first. */
export function withNewDeviceToken(tokens: DeviceToken[], user: string): DeviceToken[] {
  const fresh = { user, token: randomBytes(16).toString("hex") };
  return [fresh, ...tokens.filter((t) => t.user !== user)].slice(0, MAX_DEVICE_TOKENS);
}

/** A route handler's device cookie; `save()` writes Set-Cookie onto `res`. One that does not unseal reads as none. */
export async function requestDevice(req: Request, res: Response): Promise<DeviceCookie> {
  try {
    return await getIronSession<DeviceData>(req, res, deviceOptions());
  } catch {
    // As requestSession (lib/sessions.ts): some bad seals throw rather than read as empty.
    return getIronSession<DeviceData>(new Request(req.url), res, deviceOptions());
  }
}
