"use server";
// The invitation sign-up: public by nature (the link is the proof), rate-limited as its API route
// is (lib/rate-limit.ts admitInvitation); the user, membership and session made in one
// transaction (lib/members.ts acceptInvitation), then the browser lands on /invitations.
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { z } from "zod";
import { getDb } from "@/db/client";
import { formOf, text } from "@/lib/input";
import { AcceptInput, acceptInvitation, isToken, tokenSha256 } from "@/lib/members";
import { admitInvitation, clientAddress } from "@/lib/rate-limit";
import { stateAction } from "@/app/_lib/action";
import { cookieSession } from "@/app/_lib/actor";
import { MEMBER_WORDS, SIGN_UP_WORDS } from "@/app/_lib/member-words";

export type SignUpState = { message: string | null; name: string };

const typedName = (raw: unknown) => (raw instanceof FormData ? String(raw.get("name") ?? "").slice(0, 200) : "");

const SignUpForm = formOf(AcceptInput.extend({ token: text().max(100), confirm: z.string().max(1024) }));

export const signUpAction = stateAction({
  who: "public",
  input: SignUpForm,
  invalid: (raw): SignUpState => ({ message: SIGN_UP_WORDS.invalid, name: typedName(raw) }),
  run: async ({ token, name, password, confirm }, { raw }): Promise<SignUpState> => {
    if (password !== confirm) return { message: MEMBER_WORDS.password_mismatch, name: typedName(raw) };
    if (!isToken(token)) return { message: MEMBER_WORDS.invitation_not_found, name: typedName(raw) };
    const db = await getDb();
    const gate = await admitInvitation(db, { tokenKey: tokenSha256(token), address: clientAddress(await headers()) });
    if (!gate.ok) return { message: MEMBER_WORDS.too_many_attempts, name: typedName(raw) };
    const result = await acceptInvitation(db, token, { name, password });
    if (!result.ok) return { message: MEMBER_WORDS[result.code], name: typedName(raw) };
    const session = await cookieSession();
    session.sid = result.sessionId;
    session.uid = result.actor.id;
    await session.save();
    redirect("/invitations");
  },
});
