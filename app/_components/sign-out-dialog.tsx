"use client";
// The question the header's Sign out asks when summaries wait for review: a modal dialog,
// open from the moment it mounts. Loaded only when it is needed (sign-out-button.tsx), since
// most sign-outs never ask.
import { useEffect, useRef } from "react";
import { signOutAction } from "@/app/actions";
import type { AtSignOut } from "@/lib/sign-out";
import { SubmitButton } from "./submit-button";
import { DiscardFields, SignOutNotice, signOutQuestion } from "./sign-out-notice";

export default function SignOutDialog({ pending, onClose }: { pending: AtSignOut; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, []);
  return (
    <dialog ref={dialog} className="sign-out-dialog" aria-labelledby="sign-out-title" aria-describedby="sign-out-details" onClose={onClose}>
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
    </dialog>
  );
}
