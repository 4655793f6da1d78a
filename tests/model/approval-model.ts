// The four-eyes side of the model-based test (lease-model.test.ts; docs/decisions/0078): each
// organization's policy per purpose, the approval requests the model knows of, and the checks the
// database is held to after every step: under four_eyes no invoice write without an approval by a
// different person holding an approving role at the moment of approval, on exactly the proposal
// hash that person was shown; an apply without a request only where the policy was `self` when it
// wrote; every write left its one receipt (decision 0079), and no receipt was left without a write;
// and each organization's audit chain verifies (lib/audit/verify.ts, decision 0080).
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { and, eq, inArray } from "drizzle-orm";
import { expect } from "vitest";
import { approvalPolicy, approvalRequest, inferenceLease, invoice, leaseReceipt, membership } from "@/db/schema";
import { ROLE_RULES } from "@/lib/access";
import type { ApplyPolicy } from "@/lib/lease-codes";
import type { Purpose } from "@/lib/purposes";
import { verifyChain, type ChainMark } from "@/lib/audit/verify";
import type { TestDb } from "../support/db";

export type { ApplyPolicy };

/** An approval request as the model knows it: from the submit that made it, and its decision once made. */
export type Req = {
  id: string;
  /** The lease's id. */
  lease: string;
  org: number;
  requester: number;
  /** proposal_sha256 as submit answered it. */
  hash: string;
  /** The invoice version frozen into it (the lease's fence at submit). */
  version: number;
  /** The lines the submit sent (categorize_lines), frozen into it: the approval writes those and no other. */
  accept?: string[];
  decision: "approved" | "declined" | null;
  /** Who decided, and for an approval the hash they sent (the one their queue showed them). */
  approver?: number;
  sent?: string;
};

/** What the approval model reads of the test's model. */
export type ApprovalView = {
  actors: { id: string; org: number }[];
  invoices: { id: string; org: number }[];
  leases: { id: string; inv: number; purpose: Purpose; status: string }[];
  /** `${org}:${purpose}` → the policy the model says is set (absent: self). */
  policies: Record<string, ApplyPolicy>;
  requests: Req[];
};

export const policyKey = (org: number, purpose: Purpose) => `${org}:${purpose}`;
export const policyOf = (m: Pick<ApprovalView, "policies">, org: number, purpose: Purpose): ApplyPolicy =>
  m.policies[policyKey(org, purpose)] ?? "self";

/** The roles that may approve (ROLE_RULES.approve). */
export const mayApprove = (role: string) => (ROLE_RULES.approve as readonly string[]).includes(role);

/** The sha256 of a proposal's RFC 8785 JSON, computed here, not by lib/approvals/hash.ts. */
export const sha256Of = (proposal: unknown) =>
  createHash("sha256")
    .update(canonicalize(proposal) ?? "")
    .digest("hex");

/** What earlier checks saw: the leases already judged applied (each judged once, in the step that applied it). */
export type ApprovalLedger = { judged: Set<string> };

/**
 * Every lease of the schedule that the database says is applied, judged in the step it was first
 * seen applied (nothing else has run since): with a request, the request is approved, by someone
 * other than its requester and the lease's actor, who is a member of the organization holding an
 * approving role now (the moment of approval: the decision held that membership row FOR SHARE),
 * on the hash the model recorded them sending, which is the request's, which is the sha256 of the
 * proposal the lease holds (recomputed here); without one, the organization's policy for the
 * purpose in the database is `self`. A decided request never changes its decision or approver.
 */
export async function checkApprovals(db: TestDb, m: ApprovalView, ledger: ApprovalLedger): Promise<{ approvedWrites: number }> {
  const invoiceIds = m.invoices.map((i) => i.id);
  const leases = await db.db
    .select({
      id: inferenceLease.id,
      status: inferenceLease.status,
      actorId: inferenceLease.actorId,
      purpose: inferenceLease.purpose,
      proposal: inferenceLease.proposal,
      fence: inferenceLease.invoiceVersion,
      orgId: invoice.orgId,
    })
    .from(inferenceLease)
    .innerJoin(invoice, eq(invoice.id, inferenceLease.invoiceId))
    .where(inArray(inferenceLease.invoiceId, invoiceIds));
  const requests = leases.length
    ? await db.db
        .select()
        .from(approvalRequest)
        .where(
          inArray(
            approvalRequest.leaseId,
            leases.map((l) => l.id),
          ),
        )
    : [];
  // Every request in the database is one the model knows, with its decision.
  expect(requests.map((r) => r.id).sort(), "approval requests in the database vs the model").toEqual(m.requests.map((r) => r.id).sort());
  for (const r of requests) {
    const mine = m.requests.find((x) => x.id === r.id)!;
    expect(r.decision ?? null, `request ${r.id.slice(0, 8)}: decision`).toBe(mine.decision);
    expect(r.proposalSha256, `request ${r.id.slice(0, 8)}: the hash submit answered`).toBe(mine.hash);
    expect(r.accept, `request ${r.id.slice(0, 8)}: the lines submitted`).toEqual(mine.accept ?? null);
    if (mine.approver !== undefined) expect(r.approverId, `request ${r.id.slice(0, 8)}: approver`).toBe(m.actors[mine.approver]!.id);
  }
  // A receipt for every write, and none without one: each receipt's lease is applied, one receipt a lease.
  const receipts = leases.length
    ? await db.db
        .select()
        .from(leaseReceipt)
        .where(
          inArray(
            leaseReceipt.leaseId,
            leases.map((l) => l.id),
          ),
        )
    : [];
  for (const rc of receipts) {
    const l = leases.find((x) => x.id === rc.leaseId)!;
    expect(l.status, `receipt ${rc.id.slice(0, 8)}: its lease wrote`).toBe("applied");
  }
  let approvedWrites = 0;
  for (const l of leases) {
    if (l.status !== "applied" || ledger.judged.has(l.id)) continue;
    ledger.judged.add(l.id);
    const where = `applied lease ${l.id.slice(0, 8)} (${l.purpose})`;
    const r = requests.find((x) => x.leaseId === l.id);
    const mineReceipts = receipts.filter((x) => x.leaseId === l.id);
    expect(mineReceipts.length, `${where}: its receipts`).toBe(1);
    const receipt = mineReceipts[0]!;
    expect(receipt.lane, `${where}: the receipt's lane`).toBe(r ? "four_eyes" : "self");
    expect(receipt.requesterId, `${where}: the receipt's requester`).toBe(l.actorId);
    expect(receipt.approverId ?? null, `${where}: the receipt's approver`).toBe(r?.approverId ?? null);
    expect(receipt.approvalId ?? null, `${where}: the receipt's approval`).toBe(r?.id ?? null);
    expect(receipt.proposalSha256, `${where}: the receipt's proposal hash`).toBe(sha256Of(l.proposal));
    expect(receipt.writtenInvoiceVersion, `${where}: the receipt's written version`).toBe((l.fence ?? 0) + 1);
    if (!r) {
      const [policy] = await db.db
        .select({ apply: approvalPolicy.apply })
        .from(approvalPolicy)
        .where(and(eq(approvalPolicy.orgId, l.orgId), eq(approvalPolicy.purpose, l.purpose)));
      expect(policy?.apply ?? "self", `${where}: written without an approval`).toBe("self");
      continue;
    }
    approvedWrites++;
    expect(r.decision, `${where}: its request's decision`).toBe("approved");
    expect(r.approverId, `${where}: an approver`).not.toBeNull();
    expect(r.approverId, `${where}: approved by its requester`).not.toBe(r.requesterId);
    expect(r.approverId, `${where}: approved by the lease's actor`).not.toBe(l.actorId);
    const [role] = await db.db
      .select({ role: membership.role })
      .from(membership)
      .where(and(eq(membership.orgId, r.orgId), eq(membership.userId, r.approverId!)));
    expect(role && mayApprove(role.role), `${where}: the approver's role at approval (${role?.role ?? "no member"})`).toBe(true);
    const mine = m.requests.find((x) => x.id === r.id)!;
    expect(mine.sent, `${where}: the hash the approver was shown and sent`).toBe(r.proposalSha256);
    expect(sha256Of(l.proposal), `${where}: the written proposal's sha256`).toBe(r.proposalSha256);
    // A categorize_lines approval wrote the lines submitted, every one of them and no other (all the
    // proposal's when the submit named none); which rows moved is checkApplied's, at the approval.
    if (l.purpose === "categorize_lines") {
      const proposed = (l.proposal as { lines: { line_id: string }[] }).lines.map((x) => x.line_id);
      expect([...receipt.writtenKeys].sort(), `${where}: the lines written`).toEqual([...(mine.accept ?? proposed)].sort());
    }
  }
  return { approvedWrites };
}

/** Each organization's mark where its chain last verified clean. */
export type ChainMarks = Map<string, ChainMark>;

/**
 * Each of the schedule's organizations' audit chains, walked and its audited rows held to it: no
 * failure. With `marks`, from where the last walk of this schedule ended (the entry there still
 * with the hash it had, the entries since, the rows they name), each mark moved to the new head:
 * after every step, a walk of that step's few entries. Without, from the genesis, every row.
 */
export async function checkChain(db: TestDb, orgIds: string[], marks?: ChainMarks) {
  for (const orgId of orgIds) {
    const from = marks?.get(orgId);
    const [report] = await verifyChain(db.db, { orgId, ...(from ? { from } : {}) });
    expect(report!.failure, `audit chain of organization ${orgId.slice(0, 8)}${from ? ` since entry ${from.seq}` : ""}`).toBeNull();
    marks?.set(orgId, report!.mark!);
  }
}
