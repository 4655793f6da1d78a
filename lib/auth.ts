import "server-only";
import { getIronSession, type IronSession, type SessionOptions } from "iron-session";
import { appEnv } from "./env";
import { SESSION_TTL_SECONDS, type SessionData } from "./sessions";

export const SESSION_COOKIE = "claimcheck_session";

export function sessionOptions(): SessionOptions {
  const env = appEnv();
  return {
    cookieName: SESSION_COOKIE,
    password: env.sessionPasswords,
    ttl: SESSION_TTL_SECONDS,
    cookieOptions: { httpOnly: true, sameSite: "lax", secure: env.cookieSecure, path: "/" },
  };
}

export type Session = IronSession<SessionData>;

// iron-session reads some cookies that do not unseal as an empty session (bad MAC, expired)
// and throws on others (a changed prefix, a non-numeric expiry, bad base64). Either way the
// cookie names nobody: we open the session again as if no cookie had come, which still
// throws on a configuration error and still writes Set-Cookie where the first would have.
// (app/_lib/actor.ts does the same for pages and server actions.)

/** The session of a route handler's request; `save()` and `destroy()` write Set-Cookie onto `res`. */
export async function requestSession(req: Request, res: Response): Promise<Session> {
  try {
    return await getIronSession<SessionData>(req, res, sessionOptions());
  } catch {
    return getIronSession<SessionData>(new Request(req.url), res, sessionOptions());
  }
}

/** Whether a request header `cookie` carries the session cookie at all, readable or not. */
export function sentSessionCookie(cookieHeader: string | null): boolean {
  return (cookieHeader ?? "").split(";").some((part) => part.trim().startsWith(`${SESSION_COOKIE}=`));
}

/**
 * A route's answer to a cookie that names no live session (unreadable, revoked, expired):
 * clear it, so the browser stops sending it. No cookie sent, nothing to clear.
 */
export function discardSession(req: Request, session: Session): void {
  if (sentSessionCookie(req.headers.get("cookie"))) session.destroy();
}
