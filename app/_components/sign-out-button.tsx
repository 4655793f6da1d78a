"use client";
// The header's Sign out. Without JavaScript it is a plain form post to signOutAction, which
// sends the user to /sign-out first when a summary waits for review. With JavaScript it asks
// the server what would be discarded and, if anything waits, asks in a dialog instead
// (sign-out-dialog.tsx, fetched while the server is asked: most sign-outs never need it, so
// the page does not load it up front).
import { lazy, Suspense, useRef, useState, type FormEvent } from "react";
import { signOutAction, signOutCheck } from "@/app/actions";
import type { AtSignOut } from "@/lib/sign-out";
import { SubmitButton } from "./submit-button";

const loadDialog = () => import("./sign-out-dialog");
const SignOutDialog = lazy(loadDialog);

export function SignOutButton() {
  const form = useRef<HTMLFormElement>(null);
  const checked = useRef(false);
  const [checking, setChecking] = useState(false);
  const [pending, setPending] = useState<AtSignOut | null>(null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    if (checked.current) return; // asked already: let the action run
    event.preventDefault();
    setChecking(true);
    const dialog = loadDialog().catch(() => null);
    let found: AtSignOut = { proposals: [], generating: 0 };
    try {
      found = await signOutCheck();
    } catch {
      // Could not ask: sign out anyway; the server still stops at /sign-out if a summary waits.
    }
    if (found.proposals.length > 0 && (await dialog)) {
      setChecking(false);
      setPending(found);
      return;
    }
    // Nothing to ask, or the dialog could not be fetched: the plain post, which stops at
    // /sign-out when a summary waits.
    setChecking(false);
    checked.current = true;
    form.current?.requestSubmit();
  }

  return (
    <>
      <form ref={form} action={signOutAction} onSubmit={onSubmit}>
        <SubmitButton className="button button--quiet" pendingLabel="Signing out…" disabled={checking}>
          Sign out
        </SubmitButton>
      </form>
      {pending ? (
        <Suspense fallback={null}>
          <SignOutDialog pending={pending} onClose={() => setPending(null)} />
        </Suspense>
      ) : null}
    </>
  );
}
