import "server-only";
import { getIronSession, type SessionOptions } from "iron-session";
import { appEnv } from "./env";
import type { SessionData } from "./sessions";

export const SESSION_COOKIE = "claimcheck_session";

export function sessionOptions(): SessionOptions {
  const env = appEnv();
  return {
    cookieName: SESSION_COOKIE,
    password: env.sessionPasswords,
    ttl: 60 * 60 * 12,
    cookieOptions: { httpOnly: true, sameSite: "lax", secure: env.cookieSecure, path: "/" },
  };
}

/** The session of a route handler's request; `save()` writes Set-Cookie onto `res`. */
export function requestSession(req: Request, res: Response) {
  return getIronSession<SessionData>(req, res, sessionOptions());
}
