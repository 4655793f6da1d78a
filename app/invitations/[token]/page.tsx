import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { peekInvitation } from "@/lib/members";
import { getActor } from "@/app/_lib/actor";
import { formatDateTime } from "@/app/_lib/format";
import { MEMBER_WORDS, ROLE_WORDS } from "@/app/_lib/member-words";
import { getViewer } from "@/app/_lib/viewer";
import { JoinForm } from "./join-form";
import { SignUpForm } from "./sign-up-form";

export const metadata: Metadata = { title: "Join your team" };

// An invitation link's page: what it invites to, and the sign-up form (or, for an email that has
// an account, the password form that signs that account in and joins). An unknown, used,
// withdrawn or expired link reads the same. Reading it is not rate-limited here (the form's
// action is, as the API route is): a page view consumes nothing.
export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const invitation = await peekInvitation(await getDb(), token);
  const signedIn = await getActor();
  if (!invitation) {
    return (
      <div className="sign-in">
        <div className="card">
          <h1>Invitation not valid</h1>
          <p data-testid="invitation-invalid">{MEMBER_WORDS.invitation_not_found}</p>
          <p>
            <Link href="/sign-in">Sign in</Link> if you already have an account.
          </p>
        </div>
      </div>
    );
  }
  const viewer = await getViewer();
  return (
    <div className="sign-in">
      <div className="card">
        <h1>Join {invitation.orgName}</h1>
        <p>
          You are invited as <strong>{ROLE_WORDS[invitation.role].toLowerCase()}</strong>.{" "}
          {invitation.hasAccount
            ? "You already have a Claimcheck account with this email: sign in with your password to join."
            : "Choose your name and a password."}{" "}
          The link works until {formatDateTime(invitation.expiresAt.toISOString(), viewer)}, once.
        </p>
        {signedIn ? (
          <p className="notice notice--info">You are signed in as {signedIn.email}. Joining signs you in as the invited person instead.</p>
        ) : null}
        {invitation.hasAccount ? (
          <JoinForm token={token} email={invitation.email} />
        ) : (
          <SignUpForm token={token} email={invitation.email} />
        )}
      </div>
    </div>
  );
}
