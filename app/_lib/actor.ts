import "server-only";
// The page layer's one way to learn who is asking: the iron-session cookie, checked against
// the server-side session row. Pages and actions call these; nothing below app/ reads cookies.
import { getIronSession } from "iron-session";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { getDb } from "@/db/client";
import { sessionOptions } from "@/lib/auth";
import { resolveActor, type Actor, type SessionData } from "@/lib/sessions";

export type PageActor = Actor & { sessionId: string };

/** The cookie's session, for actions that write it (sign-in, sign-out). */
export async function cookieSession() {
  return getIronSession<SessionData>(await cookies(), sessionOptions());
}

/** The signed-in actor, or null. Cached per request, so a page and its parts ask once. */
export const getActor = cache(async (): Promise<PageActor | null> => {
  const session = await cookieSession();
  return resolveActor(await getDb(), { sid: session.sid, uid: session.uid });
});

/** The signed-in actor; anyone else is sent to /sign-in. */
export async function requireActor(): Promise<PageActor> {
  const actor = await getActor();
  if (!actor) redirect("/sign-in");
  return actor;
}
