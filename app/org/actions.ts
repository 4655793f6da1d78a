"use server";
// The Team page's actions (app/_lib/action.ts): the actor from the session, the form parsed with
// zod, one domain call. Role change, removal and revocation send the browser back to /org with a
// notice code (member-words.ts), so each works as a plain form post without JavaScript; the
// invitation answers with its state instead, since its link is shown once and never put in a URL.
import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import { redirect, RedirectType } from "next/navigation";
import { z } from "zod";
import { canonicalId } from "@/lib/ids";
import { formOf, text } from "@/lib/input";
import { changeRole, createInvitation, InvitationInput, revokeInvitation } from "@/lib/members";
import { ROLES } from "@/lib/org-codes";
import { PolicyInput, writePolicy } from "@/lib/approvals/policy";
import type { PolicyNotice } from "@/app/_lib/approval-words";
import { action, stateAction } from "@/app/_lib/action";
import { cookieSession } from "@/app/_lib/actor";
import { removeMember } from "@/app/_lib/leases";
import { MEMBER_WORDS, type MemberNotice } from "@/app/_lib/member-words";
import { linkOrigin } from "@/app/_lib/members-json";

const id = text().trim().max(100);

function backToTeam(notice: MemberNotice): never {
  redirect(`/org?notice=${notice}`, RedirectType.replace);
}

export type InviteState = { message: string | null; ok: boolean; url: string | null; email: string; expiresAt: string | null };

const typed = (raw: unknown) => (raw instanceof FormData ? String(raw.get("email") ?? "").slice(0, 320) : "");

export const inviteAction = stateAction({
  who: "actor",
  input: formOf(InvitationInput),
  invalid: (raw): InviteState => ({ message: MEMBER_WORDS.invalid_request, ok: false, url: null, email: typed(raw), expiresAt: null }),
  run: async (form, { actor, db, raw }): Promise<InviteState> => {
    const h = await headers();
    const origin = linkOrigin(h, `${h.get("x-forwarded-proto") === "https" ? "https" : "http"}://${h.get("host") ?? "localhost"}/`);
    const result = await createInvitation(db, actor, form, origin);
    if (!result.ok) {
      const code = result.code === "not_signed_in" ? "forbidden" : result.code;
      return { message: MEMBER_WORDS[code], ok: false, url: null, email: typed(raw), expiresAt: null };
    }
    // The pending list below the form shows the new invitation with the link.
    revalidatePath("/org");
    return {
      message: MEMBER_WORDS.invited,
      ok: true,
      url: result.invitation.url,
      email: form.email,
      expiresAt: result.invitation.expiresAt.toISOString(),
    };
  },
});

export const changeRoleAction = action({
  who: "actor",
  input: formOf(z.object({ member_id: id, role: z.enum(ROLES) })),
  invalid: () => backToTeam("invalid_request"),
  run: async ({ member_id, role }, { actor, db }) => {
    const result = await changeRole(db, actor, member_id, role);
    backToTeam(result.ok ? "role_changed" : result.code === "not_signed_in" ? "forbidden" : result.code);
  },
});

export const removeMemberAction = action({
  who: "actor",
  input: formOf(z.object({ member_id: id })),
  invalid: () => backToTeam("member_not_found"),
  run: async ({ member_id }, { actor, db }) => {
    const result = await removeMember(db, actor, member_id);
    if (result.ok && canonicalId(member_id) === actor.id) {
      // They removed themself: their session ended with the others.
      (await cookieSession()).destroy();
      redirect("/sign-in?signed-out=1", RedirectType.replace);
    }
    backToTeam(result.ok ? "removed" : result.code === "not_signed_in" ? "forbidden" : result.code);
  },
});

export const revokeInvitationAction = action({
  who: "actor",
  input: formOf(z.object({ invitation_id: id })),
  invalid: () => backToTeam("invitation_not_found"),
  run: async ({ invitation_id }, { actor, db }) => {
    const result = await revokeInvitation(db, actor, invitation_id);
    backToTeam(result.ok ? "revoked" : result.code === "not_signed_in" ? "forbidden" : result.code);
  },
});

function backToPolicies(notice: PolicyNotice, purpose?: string): never {
  const which = purpose ? `&purpose=${encodeURIComponent(purpose)}` : "";
  redirect(`/org?policy=${notice}${which}#policies-heading`, RedirectType.replace);
}

/**
 * An admin sets how one task is saved (docs/decisions/0078): by its owner, or after a second
 * person approves, with the time to decide. The same writePolicy and PolicyInput as
 * PUT /api/org/policies/:purpose; the admin role is a condition of its statement.
 */
export const savePolicyAction = action({
  who: "actor",
  input: formOf(z.object({ purpose: text().trim().max(100), apply: text().trim().max(20), review_hours: text().trim().max(20) })),
  invalid: () => backToPolicies("invalid"),
  run: async ({ purpose, apply, review_hours }, { actor, db }) => {
    const hours = /^\d{1,4}$/.test(review_hours) ? Number(review_hours) : NaN;
    const input = PolicyInput.safeParse({ apply, review_hours: hours });
    if (!input.success) backToPolicies("invalid", purpose);
    const result = await writePolicy(db, actor, purpose, input.data);
    if (!result.ok) backToPolicies(result.code === "forbidden" ? "forbidden" : "invalid", purpose);
    revalidatePath("/org");
    backToPolicies("saved", purpose);
  },
});
