import { z } from "zod";
import { json, param, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { SHA256_HEX } from "@/lib/approvals/hash";
import { text } from "@/lib/input";
import { approveRequest } from "@/lib/leases";

const ApproveBody = z.strictObject({
  // The hash of the proposal the approver was shown (GET /api/approvals); any letter case.
  proposal_sha256: z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(z.string().regex(SHA256_HEX)),
  comment: text().trim().min(1).max(2000).nullish(),
});

// POST /api/approvals/:id/approve – another member who may approve approves the proposal they
// were shown, and the invoice is written in the same transaction (docs/decisions/0078).
export const POST = sessionCheckedRoute(async ({ req, db, actor, params }) => {
  const body = await readBody(req, ApproveBody);
  if (!body.ok) return body;
  const approvalId = param(params, "id");
  const result = await approveRequest(db, actor, approvalId, { proposalSha256: body.value.proposal_sha256, comment: body.value.comment });
  return result.ok
    ? json({ status: "approved", approval_id: approvalId.toLowerCase(), lease_id: result.leaseId, invoice_version: result.invoiceVersion })
    : result;
});
