"use server";
// The invitation's two forms: public by nature (the link is the proof), rate-limited as its API
// route is (lib/rate-limit.ts admitInvitation). A new person signs up (signUpAction); someone whose
// email has an account (a member removed before, invited back) signs in with that account's
// password (joinAction), counted against sign-in's limits as the sign-in page is. Either way the
// membership and the session are made in one transaction (lib/members.ts acceptInvitation), then
// the browser lands on /invitations.
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { z } from "zod";
import { getDb } from "@/db/client";
import { deviceTokens } from "@/lib/device-cookie";
import { formOf, text } from "@/lib/input";
import { AcceptInput, acceptInvitation, isToken, tokenSha256, type AcceptOutcome } from "@/lib/members";
import { NEW_PASSWORD_MAX } from "@/lib/member-rules";
import { admitInvitation, clientAddress } from "@/lib/rate-limit";
import { stateAction } from "@/app/_lib/action";
import { cookieDevice, cookieSession } from "@/app/_lib/actor";
import { MEMBER_WORDS, SIGN_UP_WORDS, tooManySignInAttempts } from "@/app/_lib/member-words";

export type SignUpState = { message: string | null; name: string };
export type JoinState = { message: string | null };

const typedName = (raw: unknown) => (raw instanceof FormData ? String(raw.get("name") ?? "").slice(0, 200) : "");

const SignUpForm = formOf(AcceptInput.extend({ token: text().max(100), confirm: z.string().max(1024) }));
const JoinForm = formOf(z.object({ token: text().max(100), password: z.string().min(1).max(NEW_PASSWORD_MAX) }));

/**
 * The link's use, counted per link and address, then the acceptance; on success the session
 * cookie (and, for an account that signed in, the device cookie as sign-in writes it), and the
 * browser is sent on. A refusal comes back in words.
 */
async function accept(token: string, body: { name?: string; password: string }): Promise<string> {
  if (!isToken(token)) return MEMBER_WORDS.invitation_not_found;
  const db = await getDb();
  const address = clientAddress(await headers());
  const gate = await admitInvitation(db, { tokenKey: tokenSha256(token), address });
  if (!gate.ok) return MEMBER_WORDS.too_many_attempts;
  const device = await cookieDevice();
  const result: AcceptOutcome = await acceptInvitation(db, token, body, { address, device: deviceTokens(device) });
  if (!result.ok) return result.code === "too_many_attempts" ? tooManySignInAttempts(result.retryAfterSeconds) : MEMBER_WORDS[result.code];
  const session = await cookieSession();
  session.sid = result.sessionId;
  session.uid = result.actor.id;
  await session.save();
  if (result.device) {
    device.tokens = result.device;
    await device.save();
  }
  redirect("/invitations");
}

export const signUpAction = stateAction({
  who: "public",
  input: SignUpForm,
  invalid: (raw): SignUpState => ({ message: SIGN_UP_WORDS.invalid, name: typedName(raw) }),
  run: async ({ token, name, password, confirm }, { raw }): Promise<SignUpState> => {
    if (password !== confirm) return { message: MEMBER_WORDS.password_mismatch, name: typedName(raw) };
    return { message: await accept(token, { name, password }), name: typedName(raw) };
  },
});

export const joinAction = stateAction({
  who: "public",
  input: JoinForm,
  invalid: (): JoinState => ({ message: SIGN_UP_WORDS.invalidPassword }),
  run: async ({ token, password }): Promise<JoinState> => ({ message: await accept(token, { password }) }),
});
