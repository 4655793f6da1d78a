"use server";
// Approve and Decline on /approvals/:id (docs/decisions/0078, 0086), written with the action
// wrapper (app/_lib/action.ts): the approver from the session, whose live session the wrapper's
// db holds in the decision's transaction; the form parsed; one domain call (the same
// approveRequest and declineRequest as the routes). Then back to the request's page with what to
// say (`?notice=`), so both work as plain form posts without JavaScript.
import { redirect, RedirectType } from "next/navigation";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { SHA256_HEX } from "@/lib/approvals/hash";
import { isUuid } from "@/lib/ids";
import { formOf, text } from "@/lib/input";
import { approveRequest, declineRequest } from "@/lib/leases";
import { action, rawField } from "@/app/_lib/action";
import { sendToSignIn } from "@/app/_lib/actor";
import type { DecisionNotice } from "@/app/_lib/approval-words";

const id = text().trim().max(100);
// The comment's bounds are the decision's (1-2,000 characters); blank is no comment.
const comment = text().max(4000).optional();
// `proposal_sha256`: the hash of the proposal the page showed, carried back so Approve binds it.
const ApproveForm = formOf(z.object({ approval_id: id, proposal_sha256: text().trim().max(200), comment }));
const DeclineForm = formOf(z.object({ approval_id: id, comment }));

function backToRequest(approvalId: string | undefined, notice: DecisionNotice): never {
  if (!approvalId || !isUuid(approvalId)) redirect("/approvals", RedirectType.replace);
  revalidatePath(`/approvals/${approvalId}`);
  redirect(`/approvals/${approvalId}?notice=${notice}`, RedirectType.replace);
}

/** A comment as typed: blank is none; over 2,000 characters is refused rather than cut. */
function commentOf(raw: string | undefined): string | null | "too_long" {
  const trimmed = raw?.trim() ?? "";
  if (!trimmed) return null;
  return trimmed.length > 2000 ? "too_long" : trimmed;
}

export const approveAction = action({
  who: "actor",
  input: ApproveForm,
  invalid: (raw) => backToRequest(rawField(raw, "approval_id"), "invalid_request"),
  run: async ({ approval_id, proposal_sha256, comment }, { actor, db }) => {
    const hash = proposal_sha256.toLowerCase();
    const note = commentOf(comment);
    if (!SHA256_HEX.test(hash) || note === "too_long") backToRequest(approval_id, "invalid_request");
    const result = await approveRequest(db, actor, approval_id, { proposalSha256: hash, comment: note });
    if (!result.ok && result.code === "not_signed_in") await sendToSignIn();
    backToRequest(approval_id, result.ok ? "approved" : result.code);
  },
});

export const declineAction = action({
  who: "actor",
  input: DeclineForm,
  invalid: (raw) => backToRequest(rawField(raw, "approval_id"), "invalid_request"),
  run: async ({ approval_id, comment }, { actor, db }) => {
    const note = commentOf(comment);
    if (note === null) backToRequest(approval_id, "comment_required");
    if (note === "too_long") backToRequest(approval_id, "invalid_request");
    const result = await declineRequest(db, actor, approval_id, { comment: note });
    if (!result.ok && result.code === "not_signed_in") await sendToSignIn();
    backToRequest(approval_id, result.ok ? "declined" : result.code);
  },
});
