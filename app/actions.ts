"use server";
// Sign-out, offered on every signed-in page. It ends the server-side session (a replayed
// copy of the cookie stops working) and closes, as rejected, the leases this session opened.
import { redirect } from "next/navigation";
import { getDb } from "@/db/client";
import { revokeSession } from "@/lib/leases";
import { inngestDispatch } from "@/inngest/dispatch";
import { cookieSession, getActor } from "@/app/_lib/actor";

export async function signOutAction(): Promise<void> {
  const actor = await getActor();
  if (actor) await revokeSession(await getDb(), { actorId: actor.id, sessionId: actor.sessionId }, inngestDispatch);
  (await cookieSession()).destroy();
  redirect("/sign-in");
}
