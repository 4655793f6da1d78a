import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { DEMO_USERS, demoPassword as seededPassword } from "@/db/demo";
import { safeReturnPath } from "@/lib/return-path";
import { getActor } from "@/app/_lib/actor";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Sign in" };

type Search = Promise<Record<string, string | string[] | undefined>>;
const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export default async function SignInPage({ searchParams }: { searchParams: Search }) {
  const params = await searchParams;
  // Where to go once signed in: the page the user was on, if it is one of ours (lib/return-path.ts).
  const next = safeReturnPath(first(params.next));
  if (await getActor()) redirect(next ?? "/invoices");
  const signedOut = first(params["signed-out"]);
  // The demo logins are a development convenience; a production page never shows them.
  const demoPassword = process.env.NODE_ENV === "development" ? seededPassword() : null;
  return (
    <div className="sign-in">
      <div className="card">
        <h1>Sign in</h1>
        {signedOut === "1" || signedOut === "all" ? (
          <p role="status" className="notice notice--ok" data-testid="signed-out">
            {signedOut === "all" ? "You have signed out everywhere." : "You have signed out."}
          </p>
        ) : null}
        <p className="muted">Summaries of your invoices, written for you and saved only when you apply them.</p>
        <SignInForm next={next} />
        {demoPassword ? (
          <p className="notice notice--info small">
            Demo logins, password <code>{demoPassword}</code>:{" "}
            {DEMO_USERS.map((u, i) => (
              <span key={u.email}>
                {i > 0 ? "; " : ""}
                <code>{u.email}</code> {`(${u.org}, ${u.role})`}
              </span>
            ))}
          </p>
        ) : null}
      </div>
    </div>
  );
}
