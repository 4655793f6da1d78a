import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getActor } from "@/app/_lib/actor";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage() {
  if (await getActor()) redirect("/invoices");
  // The demo logins are a development convenience; a production page never shows them.
  const showDemo = process.env.NODE_ENV === "development";
  return (
    <div className="sign-in">
      <div className="card">
        <h1>Sign in</h1>
        <p className="muted">Summaries of your invoices, written by a model and saved only when you apply them.</p>
        <SignInForm />
        {showDemo ? (
          <p className="notice notice--info small">
            Demo logins: <code>alice@example.com</code> or <code>bob@example.com</code>, password{" "}
            <code>claimcheck-demo</code> (unless <code>SEED_PASSWORD</code> was set).
          </p>
        ) : null}
      </div>
    </div>
  );
}
