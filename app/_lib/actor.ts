import "server-only";
// The page layer's one way to learn who is asking: the iron-session cookie, checked against
// the server-side session row. Pages and actions call these; nothing below app/ reads cookies.
import { getIronSession } from "iron-session";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { getDb } from "@/db/client";
import { deviceOptions, type DeviceCookie, type DeviceData } from "@/lib/device-cookie";
import { isUuid } from "@/lib/ids";
import { REQUEST_PATH_HEADER, safeReturnPath, signInPath } from "@/lib/return-path";
import { resolveActor, SESSION_COOKIE, sessionOptions, type Actor, type Session, type SessionData } from "@/lib/sessions";

export type PageActor = Actor & { sessionId: string };

/** The cookie's session, for actions that write it (sign-in, sign-out). A cookie that does not unseal reads as empty. */
export async function cookieSession(): Promise<Session> {
  const store = await cookies();
  try {
    return await getIronSession<SessionData>(store, sessionOptions());
  } catch {
    // Unsealing threw (see lib/sessions.ts requestSession): read it as no cookie; writes still go to the store.
    return getIronSession<SessionData>({ get: () => undefined, set: store.set.bind(store) }, sessionOptions());
  }
}

/** The browser's device cookie (lib/device-cookie.ts), for the sign-in action. One that does not unseal reads as none. */
export async function cookieDevice(): Promise<DeviceCookie> {
  const store = await cookies();
  try {
    return await getIronSession<DeviceData>(store, deviceOptions());
  } catch {
    return getIronSession<DeviceData>({ get: () => undefined, set: store.set.bind(store) }, deviceOptions());
  }
}

/**
 * The session the cookie names, live or not: its seal is ours, so it is who signed in there.
 * Only for sign-out, which closes that session's leases whatever the session's state.
 */
export async function sessionClaim(): Promise<{ actorId: string; sessionId: string } | null> {
  const session = await cookieSession();
  return isUuid(session.sid) && isUuid(session.uid) ? { actorId: session.uid, sessionId: session.sid } : null;
}

/** The signed-in actor, or null. Cached per request, so a page and its parts ask once. */
export const getActor = cache(async (): Promise<PageActor | null> => {
  const session = await cookieSession();
  return resolveActor(await getDb(), { sid: session.sid, uid: session.uid });
});

/** The page this request is for (or a server action was posted from), when it is one to come back to. */
export async function requestedPage(): Promise<string | null> {
  return safeReturnPath((await headers()).get(REQUEST_PATH_HEADER));
}

/**
 * The signed-in actor; anyone else is sent to sign in, with the page they asked for as
 * `next`, and a cookie that names no live session is cleared on the way: here in a server
 * action; a page cannot set cookies (Next throws), so it sends the browser by
 * /sign-in/reset, a route handler that clears it.
 */
export async function requireActor(): Promise<PageActor> {
  const actor = await getActor();
  if (actor) return actor;
  return sendToSignIn();
}

/** To sign in, with the page asked for as `next`, clearing the cookie on the way (see requireActor). */
export async function sendToSignIn(): Promise<never> {
  const next = await requestedPage();
  const store = await cookies();
  if (!store.has(SESSION_COOKIE)) redirect(signInPath(next));
  try {
    store.delete(SESSION_COOKIE);
  } catch {
    redirect(next ? `/sign-in/reset?${new URLSearchParams({ next })}` : "/sign-in/reset");
  }
  redirect(signInPath(next));
}
