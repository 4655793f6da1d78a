"use server";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { getDb } from "@/db/client";
import { formOf } from "@/lib/input";
import { deviceTokens } from "@/lib/device-cookie";
import { clientAddress } from "@/lib/rate-limit";
import { safeReturnPath } from "@/lib/return-path";
import { attemptSignIn, SignInInput, type SignInRefusal } from "@/lib/sessions";
import { stateAction } from "@/app/_lib/action";
import { cookieDevice, cookieSession } from "@/app/_lib/actor";

export type SignInState = { message: string | null; email: string };

/** Why sign-in was refused, in words; a code without words here fails `tsc`. */
const SIGN_IN_REFUSALS = {
  invalid_credentials: "That email and password do not match an account.",
  // Only after the right password: a wrong one never says whether the account is in a team.
  no_organization:
    "Your account is no longer part of any team, so there is nothing to sign in to. If you should still have access, ask an administrator of your team.",
} as const satisfies Record<SignInRefusal, string>;

/** The email as typed, kept in the form after a refusal. */
const typedEmail = (raw: unknown) => (raw instanceof FormData ? String(raw.get("email") ?? "").slice(0, 320) : "");

export const signInAction = stateAction({
  who: "public",
  input: formOf(SignInInput),
  invalid: (raw): SignInState => ({ message: "Enter your email and your password.", email: typedEmail(raw) }),
  run: async (form, { raw }): Promise<SignInState> => {
    const email = typedEmail(raw);
    const device = await cookieDevice();
    const result = await attemptSignIn(await getDb(), { ...form, address: clientAddress(await headers()), device: deviceTokens(device) });
    if (!result.ok && result.code === "too_many_attempts") {
      const minutes = Math.ceil(result.retryAfterSeconds / 60);
      return { message: `Too many attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`, email };
    }
    if (!result.ok) return { message: SIGN_IN_REFUSALS[result.code], email };
    const session = await cookieSession();
    session.sid = result.sessionId;
    session.uid = result.actor.id;
    await session.save();
    device.tokens = result.device;
    await device.save();
    // Back to the page the user was on, when it is one of ours; anything else is ignored.
    redirect((raw instanceof FormData && safeReturnPath(raw.get("next"))) || "/invoices");
  },
});
