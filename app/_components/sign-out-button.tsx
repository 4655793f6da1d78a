"use client";
// The header's Sign out. Without JavaScript it is a plain form post to signOutAction, which
// sends the user to /sign-out first when a summary waits for review. With JavaScript it asks
// the server what would be discarded and, if anything waits, asks in a dialog instead.
import { useEffect, useRef, useState, type FormEvent } from "react";
import { signOutAction, signOutCheck } from "@/app/actions";
import type { AtSignOut } from "@/lib/sign-out";
import { SubmitButton } from "./submit-button";
import { DiscardFields, SignOutNotice, signOutQuestion } from "./sign-out-notice";

export function SignOutButton() {
  const form = useRef<HTMLFormElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const checked = useRef(false);
  const [checking, setChecking] = useState(false);
  const [pending, setPending] = useState<AtSignOut | null>(null);

  useEffect(() => {
    if (pending && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [pending]);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    if (checked.current) return; // asked already: let the action run
    event.preventDefault();
    setChecking(true);
    let found: AtSignOut = { proposals: [], generating: 0 };
    try {
      found = await signOutCheck();
    } catch {
      // Could not ask: sign out anyway; the server still stops at /sign-out if a summary waits.
    }
    setChecking(false);
    if (found.proposals.length > 0) {
      setPending(found);
      return;
    }
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
      <dialog
        ref={dialog}
        className="sign-out-dialog"
        aria-labelledby="sign-out-title"
        aria-describedby="sign-out-details"
        onClose={() => setPending(null)}
      >
        {pending ? (
          <>
            <h2 id="sign-out-title">{signOutQuestion(pending)}</h2>
            <SignOutNotice pending={pending} describedBy="sign-out-details" />
            <form action={signOutAction} className="sign-out__actions">
              <DiscardFields pending={pending} />
              {/* First, so the dialog opens on the choice that loses nothing. */}
              <button type="button" className="button button--quiet" autoFocus onClick={() => dialog.current?.close()}>
                Stay signed in
              </button>
              <SubmitButton className="button button--danger" pendingLabel="Signing out…">
                Sign out and discard
              </SubmitButton>
            </form>
          </>
        ) : null}
      </dialog>
    </>
  );
}
