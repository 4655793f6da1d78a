"use client";
import { useActionState } from "react";
import { signInAction, type SignInState } from "./actions";

const initial: SignInState = { message: null, email: "" };

/** Posts to a server action: without JavaScript it is a plain form post that redirects. */
export function SignInForm({ next }: { next: string | null }) {
  const [state, action, pending] = useActionState(signInAction, initial);
  return (
    <form action={action} noValidate>
      {next ? <input type="hidden" name="next" value={next} /> : null}
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required defaultValue={state.email} />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
      </div>
      <button type="submit" className="button" disabled={pending}>
        Sign in
      </button>
      {state.message ? (
        <p role="alert" className="notice notice--error">
          {state.message}
        </p>
      ) : null}
    </form>
  );
}
