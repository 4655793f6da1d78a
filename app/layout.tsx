import type { Metadata, Viewport } from "next";
import Link from "next/link";
import { connection } from "next/server";
import type { ReactNode } from "react";
import { may } from "@/lib/access";
import { getActor } from "@/app/_lib/actor";
import { SignOutButton } from "@/app/_components/sign-out-button";
import { orgLineWords } from "@/app/_lib/team-words";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Claimcheck", template: "%s · Claimcheck" },
  description: "Invoice summaries you review before they are saved.",
};

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page renders per request: its scripts carry that request's CSP nonce (proxy.ts),
  // which a page prerendered at build time could not.
  await connection();
  const actor = await getActor();
  return (
    <html lang="en">
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <div className="site-header__inner">
            <Link href={actor ? "/invoices" : "/sign-in"} className="brand">
              Claimcheck
            </Link>
            {actor ? (
              <div className="site-header__user">
                <Link href="/org" className="site-header__team">
                  Team
                </Link>
                <Link href="/usage" className="site-header__team">
                  Usage
                </Link>
                {/* Only those who decide requests: admins and approvers (ROLE_RULES.approve). */}
                {may(actor, "approve") ? (
                  <Link href="/approvals" className="site-header__team">
                    Approvals
                  </Link>
                ) : null}
                <span className="site-header__name">{actor.name}</span>
                {/* The organization the session works in, and the actor's role there. */}
                <span className="site-header__org" data-testid="header-org">
                  {orgLineWords(actor.orgName, actor.role)}
                </span>
                <SignOutButton />
                {/* A plain link to a page that asks first: works the same without JavaScript. */}
                <Link href="/sign-out?scope=all" className="site-header__everywhere">
                  Sign out everywhere
                </Link>
              </div>
            ) : null}
          </div>
        </header>
        <main id="main" className="page" tabIndex={-1}>
          {children}
        </main>
      </body>
    </html>
  );
}
