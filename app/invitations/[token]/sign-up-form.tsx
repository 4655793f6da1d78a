"use client";
import { useActionState } from "react";
import { NEW_PASSWORD_MIN } from "@/lib/member-rules";
import { SubmitButton } from "@/app/_components/submit-button";
import { signUpAction, type SignUpState } from "./actions";

const initial: SignUpState = { message: null, name: "" };

/** Posts to a server action: without JavaScript a plain form post that signs in and redirects. */
export function SignUpForm({ token, email }: { token: string; email: string }) {
  const [state, action] = useActionState(signUpAction, initial);
  return (
    <form action={action} noValidate>
      <input type="hidden" name="token" value={token} />
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" type="email" autoComplete="username" value={email} readOnly />
      </div>
      <div className="field">
        <label htmlFor="name">Your name</label>
        <input id="name" name="name" autoComplete="name" required defaultValue={state.name} />
      </div>
      <div className="field">
        <label htmlFor="password">Password (at least {NEW_PASSWORD_MIN} characters)</label>
        <input id="password" name="password" type="password" autoComplete="new-password" minLength={NEW_PASSWORD_MIN} required />
      </div>
      <div className="field">
        <label htmlFor="confirm">Password again</label>
        <input id="confirm" name="confirm" type="password" autoComplete="new-password" required />
      </div>
      <SubmitButton pendingLabel="Joining…">Join the team</SubmitButton>
      {state.message ? (
        <p role="alert" className="notice notice--error" data-testid="sign-up-message">
          {state.message}
        </p>
      ) : null}
    </form>
  );
}
