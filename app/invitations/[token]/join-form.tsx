"use client";
import { useActionState } from "react";
import { SubmitButton } from "@/app/_components/submit-button";
import { joinAction, type JoinState } from "./actions";

const initial: JoinState = { message: null };

/**
 * For an email that has an account (someone removed from a team, invited back): that account's
 * password, nothing new. Posts to a server action: without JavaScript a plain form post that
 * signs in and redirects.
 */
export function JoinForm({ token, email }: { token: string; email: string }) {
  const [state, action] = useActionState(joinAction, initial);
  return (
    <form action={action} noValidate>
      <input type="hidden" name="token" value={token} />
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" type="email" autoComplete="username" value={email} readOnly />
      </div>
      <div className="field">
        <label htmlFor="password">Your password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
      </div>
      <SubmitButton pendingLabel="Joining…">Sign in and join</SubmitButton>
      {state.message ? (
        <p role="alert" className="notice notice--error" data-testid="sign-up-message">
          {state.message}
        </p>
      ) : null}
    </form>
  );
}
