import type { CreatedInvitation, InvitationView, MemberView, PendingInvitation } from "@/lib/members";
import { configuredOrigin, ownHost } from "@/lib/origin";

// The member routes' JSON, snake_case as the rest of the API (app/_lib/serialize.ts).

export const memberJson = (m: MemberView) => ({ id: m.id, name: m.name, email: m.email, role: m.role });

export const createdInvitationJson = (i: CreatedInvitation) => ({ id: i.id, url: i.url, expires_at: i.expiresAt.toISOString() });

export const pendingInvitationJson = (i: PendingInvitation) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  invited_by: i.invitedBy,
  created_at: i.createdAt.toISOString(),
  expires_at: i.expiresAt.toISOString(),
});

export const invitationViewJson = (i: InvitationView) => ({
  org_name: i.orgName,
  email: i.email,
  role: i.role,
  expires_at: i.expiresAt.toISOString(),
  has_account: i.hasAccount,
});

/** The app's public origin for a link: APP_URL when set, else the scheme and Host the request came with. */
export function linkOrigin(headers: Headers, url: string): string {
  const configured = configuredOrigin();
  if (configured) return configured;
  const scheme = new URL(url).protocol;
  return `${scheme}//${ownHost(headers, url) ?? new URL(url).host}`;
}
