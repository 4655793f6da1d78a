"use server";
import { redirect } from "next/navigation";
import { getDb } from "@/db/client";
import { signIn, SignInInput } from "@/lib/sessions";
import { cookieSession } from "@/app/_lib/actor";

export type SignInState = { message: string | null; email: string };

export async function signInAction(_previous: SignInState, formData: FormData): Promise<SignInState> {
  const form = SignInInput.safeParse(Object.fromEntries(formData));
  const email = String(formData.get("email") ?? "").slice(0, 320);
  if (!form.success) return { message: "Enter your email and your password.", email };
  const result = await signIn(await getDb(), form.data.email, form.data.password);
  if (!result.ok) return { message: "That email and password do not match an account.", email };
  const session = await cookieSession();
  session.sid = result.sessionId;
  session.uid = result.actor.id;
  await session.save();
  redirect("/invoices");
}
