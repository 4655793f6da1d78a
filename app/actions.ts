"use server";
// Sign-out, offered on every signed-in page. It ends the server-side session (a replayed
// copy of the cookie stops working) and closes, as rejected, the leases this session opened.
// A summary waiting for review is not dropped unasked: the sign-out must name every such
// summary as confirmed (`discard`), else the user is shown what would go first — in a
// dialog (SignOutButton asks signOutCheck) or, without JavaScript, on /sign-out.
import { redirect } from "next/navigation";
import { getDb } from "@/db/client";
import { revokeSession } from "@/lib/leases";
import { safeReturnPath, signInPath } from "@/lib/return-path";
import { inFlightAtSignOut, type AtSignOut } from "@/lib/sign-out";
import { inngestDispatch } from "@/inngest/dispatch";
import { cookieSession, getActor, requestedPage } from "@/app/_lib/actor";

export async function signOutAction(formData: FormData): Promise<void> {
  const form = formData instanceof FormData ? formData : new FormData();
  // The page the user was on (the confirmation page passes it along): where signing in again returns.
  const next = safeReturnPath(form.get("next")) ?? (await requestedPage());
  const actor = await getActor();
  if (actor) {
    const db = await getDb();
    const confirmed = new Set(form.getAll("discard").filter((v): v is string => typeof v === "string"));
    const { proposals } = await inFlightAtSignOut(db, { actorId: actor.id, sessionId: actor.sessionId });
    if (proposals.some((p) => !confirmed.has(p.leaseId))) {
      redirect(next ? `/sign-out?${new URLSearchParams({ next })}` : "/sign-out");
    }
    await revokeSession(db, { actorId: actor.id, sessionId: actor.sessionId }, inngestDispatch);
  }
  (await cookieSession()).destroy();
  redirect(signInPath(next, { "signed-out": "1" }));
}

/** What signing out now would discard, for the sign-out dialog. */
export async function signOutCheck(): Promise<AtSignOut> {
  const actor = await getActor();
  if (!actor) return { proposals: [], generating: 0 };
  return inFlightAtSignOut(await getDb(), { actorId: actor.id, sessionId: actor.sessionId });
}
