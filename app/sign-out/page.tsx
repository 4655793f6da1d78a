// Sign out, asked first: where signOutAction sends a sign-out that would discard a summary
// waiting for review without having named it (the header's button without JavaScript, or a
// summary that arrived while the dialog was open). The same words as the dialog.
import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { getDb } from "@/db/client";
import { safeReturnPath } from "@/lib/return-path";
import { inFlightAtSignOut } from "@/lib/sign-out";
import { signOutAction } from "@/app/actions";
import { getActor } from "@/app/_lib/actor";
import { SubmitButton } from "@/app/_components/submit-button";
import { DiscardFields, SignOutNotice, signOutQuestion } from "@/app/_components/sign-out-notice";

export const metadata: Metadata = { title: "Sign out" };

type Search = Promise<Record<string, string | string[] | undefined>>;

export default async function SignOutPage({ searchParams }: { searchParams: Search }) {
  const raw = (await searchParams).next;
  const next = safeReturnPath(Array.isArray(raw) ? raw[0] : raw);
  const actor = await getActor();
  if (!actor) redirect("/sign-in");
  const pending = await inFlightAtSignOut(await getDb(), { actorId: actor.id, sessionId: actor.sessionId });
  const asking = pending.proposals.length > 0;
  return (
    <div className="sign-in">
      <section className="card" aria-labelledby="sign-out-heading">
        <h1 id="sign-out-heading">{asking ? signOutQuestion(pending) : "Sign out?"}</h1>
        {asking ? <SignOutNotice pending={pending} describedBy="sign-out-details" /> : <p>No summary you asked for in this browser is waiting for review.</p>}
        <form action={signOutAction} className="sign-out__actions">
          {next ? <input type="hidden" name="next" value={next} /> : null}
          <DiscardFields pending={pending} />
          <Link href={next ?? "/invoices"} className="button button--quiet">
            Stay signed in
          </Link>
          <SubmitButton className={asking ? "button button--danger" : "button"} pendingLabel="Signing out…">
            {asking ? "Sign out and discard" : "Sign out"}
          </SubmitButton>
        </form>
      </section>
    </div>
  );
}
