// Sign out, asked first: where signOutAction sends a sign-out that would discard a summary
// waiting for review without having named it (the header's button without JavaScript, or a
// summary that arrived while the dialog was open). The same words as the dialog.
// ?scope=all: sign out everywhere (the header's link), asked always, since it ends the
// sessions of every browser and discards what waits in any of them.
import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { getDb } from "@/db/client";
import { safeReturnPath } from "@/lib/return-path";
import { inFlightAtSignOut } from "@/lib/sign-out";
import { signOutAction, signOutEverywhereAction } from "@/app/actions";
import { getActor } from "@/app/_lib/actor";
import { SubmitButton } from "@/app/_components/submit-button";
import { DiscardFields, SignOutNotice, signOutQuestion } from "@/app/_components/sign-out-notice";

export const metadata: Metadata = { title: "Sign out" };

type Search = Promise<Record<string, string | string[] | undefined>>;

export default async function SignOutPage({ searchParams }: { searchParams: Search }) {
  const params = await searchParams;
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const next = safeReturnPath(first(params.next));
  const everywhere = first(params.scope) === "all";
  const actor = await getActor();
  if (!actor) redirect("/sign-in");
  const pending = await inFlightAtSignOut(await getDb(), { actorId: actor.id, sessionId: everywhere ? null : actor.sessionId });
  const asking = pending.proposals.length > 0;
  const heading = asking ? signOutQuestion(pending, everywhere) : everywhere ? "Sign out everywhere?" : "Sign out?";
  return (
    <div className="sign-in">
      <section className="card" aria-labelledby="sign-out-heading">
        <h1 id="sign-out-heading">{heading}</h1>
        {everywhere ? (
          <p>This ends your sessions in every browser, this one included, and stops every summary being written for you.</p>
        ) : null}
        {asking ? (
          <SignOutNotice pending={pending} describedBy="sign-out-details" />
        ) : (
          <p>No summary you asked for {everywhere ? "is waiting for review in any browser" : "in this browser is waiting for review"}.</p>
        )}
        <form action={everywhere ? signOutEverywhereAction : signOutAction} className="sign-out__actions">
          {next ? <input type="hidden" name="next" value={next} /> : null}
          <DiscardFields pending={pending} />
          <Link href={next ?? "/invoices"} className="button button--quiet">
            Stay signed in
          </Link>
          <SubmitButton className={asking || everywhere ? "button button--danger" : "button"} pendingLabel="Signing out…">
            {everywhere
              ? asking
                ? "Sign out everywhere and discard"
                : "Sign out everywhere"
              : asking
                ? "Sign out and discard"
                : "Sign out"}
          </SubmitButton>
        </form>
      </section>
    </div>
  );
}
