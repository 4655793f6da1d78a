"use client";
import { useActionState, useState } from "react";
import { ROLES } from "@/lib/org-codes";
import { ROLE_HINTS, ROLE_WORDS } from "@/app/_lib/member-words";
import { SubmitButton } from "@/app/_components/submit-button";
import { inviteAction, type InviteState } from "./actions";

const initial: InviteState = { message: null, ok: false, url: null, email: "", expiresAt: null };

/**
 * The Invite form. Its answer, the link, comes back as the action's state (a plain form post
 * without JavaScript renders it the same): it is never put in a URL and shown only this once.
 */
export function InviteForm() {
  const [state, action] = useActionState(inviteAction, initial);
  return (
    <form action={action} noValidate className="invite-form">
      <div className="field">
        <label htmlFor="invite-email">Email</label>
        <input id="invite-email" name="email" type="email" autoComplete="off" required defaultValue={state.ok ? "" : state.email} />
      </div>
      <div className="field">
        <label htmlFor="invite-role">Role</label>
        <select id="invite-role" name="role" defaultValue="member">
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {ROLE_WORDS[role]} — {ROLE_HINTS[role]}
            </option>
          ))}
        </select>
      </div>
      <SubmitButton pendingLabel="Inviting…">Invite</SubmitButton>
      {state.message ? (
        <p
          role={state.ok ? "status" : "alert"}
          className={`notice ${state.ok ? "notice--ok" : "notice--error"}`}
          data-testid="invite-message"
        >
          {state.message}
        </p>
      ) : null}
      {state.ok && state.url ? <InvitationLink url={state.url} email={state.email} /> : null}
    </form>
  );
}

function InvitationLink({ url, email }: { url: string; email: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="field invite-link">
      <label htmlFor="invite-link">Link for {email} (works once, for 7 days)</label>
      <input id="invite-link" readOnly value={url} data-testid="invite-link" onFocus={(e) => e.currentTarget.select()} />
      <button
        type="button"
        className="button button--secondary"
        onClick={() => void navigator.clipboard?.writeText(url).then(() => setCopied(true))}
      >
        {copied ? "Copied" : "Copy link"}
      </button>
    </div>
  );
}
