"use server";
// Sign-out, offered on every signed-in page. It ends the server-side session (a replayed
// copy of the cookie stops working) and closes, as rejected, the leases this session opened.
// A summary waiting for review is not dropped unasked: the sign-out must name every such
// summary as confirmed (`discard`), else the user is shown what would go first — in a
// dialog (SignOutButton asks signOutCheck) or, without JavaScript, on /sign-out.
// A session that is no longer live (it ran out) still has its leases closed. Sign out
// everywhere ends every session of the user and all their leases, asked on /sign-out?scope=all.
import { redirect } from "next/navigation";
import { z } from "zod";
import { getDb, type Db } from "@/db/client";
import { canonicalId } from "@/lib/ids";
import { safeReturnPath, signInPath } from "@/lib/return-path";
import { inFlightAtSignOut, type AtSignOut } from "@/lib/sign-out";
import { action } from "@/app/_lib/action";
import { revokeAllSessions, revokeSession } from "@/app/_lib/leases";
import { cookieSession, requestedPage, sessionClaim } from "@/app/_lib/actor";

/**
 * The sign-out form: the page to come back to, and the summaries confirmed as discarded
 * (a repeated field, so read from the FormData itself). Anything but a form reads as an
 * empty one: signing out never needs a valid form.
 */
const SignOutForm = z
  .instanceof(FormData)
  .catch(() => new FormData())
  .transform((form) => ({
    next: safeReturnPath(form.get("next")),
    // As the database spells ids, so a lease named in upper case is the same lease.
    discard: new Set(form.getAll("discard").flatMap((v) => canonicalId(v) ?? [])),
  }));

export const signOutAction = action({
  who: "anyone",
  input: SignOutForm,
  // SignOutForm accepts any argument.
  invalid: () => redirect("/sign-in"),
  run: async (form, { actor }): Promise<void> => {
    // The page the user was on (the confirmation page passes it along): where signing in again returns.
    const next = form.next ?? (await requestedPage());
    const db = await getDb();
    if (actor) {
      const { proposals } = await inFlightAtSignOut(db, { actorId: actor.id, sessionId: actor.sessionId });
      if (proposals.some((p) => !form.discard.has(p.leaseId))) {
        redirect(next ? `/sign-out?${new URLSearchParams({ next })}` : "/sign-out");
      }
    }
    await endSession(db, actor ? { actorId: actor.id, sessionId: actor.sessionId } : await sessionClaim());
    redirect(signInPath(next, { "signed-out": "1" }));
  },
});

/** Sign out everywhere: every session of the user, and every lease of theirs in flight. */
export const signOutEverywhereAction = action({
  who: "anyone",
  input: SignOutForm,
  invalid: () => redirect("/sign-in"),
  run: async (form, { actor }): Promise<void> => {
    const next = form.next ?? (await requestedPage());
    const db = await getDb();
    if (!actor) {
      // Not live: nothing to end elsewhere, but this session's leases are closed as at sign-out.
      await endSession(db, await sessionClaim());
      redirect(signInPath(next));
    }
    const { proposals } = await inFlightAtSignOut(db, { actorId: actor.id, sessionId: null });
    if (proposals.some((p) => !form.discard.has(p.leaseId))) {
      redirect(`/sign-out?${new URLSearchParams({ scope: "all", ...(next ? { next } : {}) })}`);
    }
    await revokeAllSessions(db, { actorId: actor.id, sessionId: actor.sessionId });
    (await cookieSession()).destroy();
    redirect(signInPath(next, { "signed-out": "all" }));
  },
});

/** Ends the cookie's session and closes its leases (whether or not it is still live), and clears the cookie. */
async function endSession(db: Db, claim: { actorId: string; sessionId: string } | null): Promise<void> {
  if (claim) await revokeSession(db, claim);
  (await cookieSession()).destroy();
}

/** What signing out now would discard, for the sign-out dialog. It takes no argument. */
export const signOutCheck = action({
  who: "anyone",
  input: z.unknown(),
  invalid: () => ({ proposals: [], generating: 0 }),
  run: async (_none, { actor }): Promise<AtSignOut> => {
    if (!actor) return { proposals: [], generating: 0 };
    return inFlightAtSignOut(await getDb(), { actorId: actor.id, sessionId: actor.sessionId });
  },
});
