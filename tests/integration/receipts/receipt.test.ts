// A receipt for every write (docs/decisions/0079), on PGlite and PostgreSQL: a self apply and an
// approval each leave one receipt naming who wrote, in which session, under which lane; the
// invoice's hash at write is the one an auditor recomputes in Node with `canonicalize` from a
// plain SELECT; an `applied` lease without a receipt fails at commit; the chain still verifies.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf, type Db } from "@/db/client";
import { leaseReceipt } from "@/db/schema";
import { verifyChain } from "@/lib/audit/verify";
import { invoiceTimeline } from "@/lib/leases";
import { api, signInCookie } from "../../support/api";
import { asMember, eventKinds, invoiceRow, joinOrgOf, leaseRow, makeUser, openTestDb, type TestDb } from "../../support/db";
import { approve, fourEyes, proposed, requestRow, sha256Of, submitted, team } from "../approvals/support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

async function receiptsOf(db: Db, leaseId: string) {
  return db.select().from(leaseReceipt).where(eq(leaseReceipt.leaseId, leaseId));
}

/** The sessions of a user, newest last: the one a cookie signed in is among them. */
async function sessionIds(db: Db, userId: string): Promise<string[]> {
  return rowsOf<{ id: string }>(await db.execute(sql`select id from app_session where user_id = ${userId}`)).map((r) => r.id);
}

/** The invoice as an auditor rebuilds it from a plain SELECT, hashed in Node (0079's object). */
async function invoiceSha256InNode(db: Db, invoiceId: string): Promise<string> {
  const [i] = rowsOf<Record<string, unknown>>(
    await db.execute(sql`select id, org_id, owner_id, number, counterparty, currency, total_cents,
      to_char(issued_on, 'YYYY-MM-DD') as issued_on, to_char(due_on, 'YYYY-MM-DD') as due_on, status,
      to_char(paid_on, 'YYYY-MM-DD') as paid_on, summary, summary_version, review_notes, review_notes_version, version
      from invoice where id = ${invoiceId}`),
  );
  const lines = rowsOf<Record<string, unknown>>(
    await db.execute(sql`select id, position, description, quantity, unit_price_cents, category
      from invoice_line where invoice_id = ${invoiceId} order by position, id`),
  );
  const num = (v: unknown) => (v === null ? null : Number(v));
  const object = {
    ...i,
    total_cents: num(i!.total_cents),
    summary_version: num(i!.summary_version),
    review_notes_version: num(i!.review_notes_version),
    version: num(i!.version),
    lines: lines.map((l) => ({ ...l, position: num(l.position), quantity: num(l.quantity), unit_price_cents: num(l.unit_price_cents) })),
  };
  return createHash("sha256").update(canonicalize(object)!).digest("hex");
}

describe("a receipt for every write", () => {
  it("a self apply leaves one receipt: the requester and the session that applied, the invoice at proposal and at write", async () => {
    const tm = await team(t.db);
    const { inv, leaseId } = await proposed(t.db, tm.dave);
    const atProposal = await invoiceSha256InNode(t.db, inv.id);
    const lease = await leaseRow(t.db, leaseId);
    expect(lease).toMatchObject({ promptVersion: "summarize-2", proposedInvoiceVersion: inv.version, proposedInvoiceSha256: atProposal });

    const res = await api("POST", `/api/leases/${leaseId}/apply`, { cookie: tm.cookies.dave });
    expect(res.status).toBe(200);
    const receipts = await receiptsOf(t.db, leaseId);
    expect(receipts).toHaveLength(1);
    const r = receipts[0]!;
    const written = await invoiceRow(t.db, inv.id);
    expect(r).toMatchObject({
      invoiceId: inv.id,
      lane: "self",
      purpose: "summarize_invoice",
      promptVersion: "summarize-2",
      model: lease.proposal!.model,
      requesterId: tm.dave.id,
      approvalId: null,
      approverId: null,
      approverSessionId: null,
      approvedAt: null,
      proposalSha256: sha256Of(lease.proposal),
      proposedInvoiceVersion: inv.version,
      proposedInvoiceSha256: atProposal,
      writtenInvoiceVersion: written.version,
      writtenKeys: ["summary"],
    });
    expect(await sessionIds(t.db, tm.dave.id)).toContain(r.requesterSessionId);
    expect(r.proposedAt!.getTime()).toBeLessThanOrEqual(r.writtenAt.getTime());
    // The hash at write is the invoice as the write left it, as Node computes it from a plain SELECT.
    expect(r.writtenInvoiceSha256).toBe(await invoiceSha256InNode(t.db, inv.id));
    expect(r.writtenInvoiceSha256).not.toBe(atProposal);
    expect(await eventKinds(t.db, leaseId)).toEqual(["opened", "proposed", "applied"]);
  });

  it("an approval leaves one receipt naming the approver and their session, the requester's submitting session", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
    expect((await approve(tm, "carol", approvalId, hash)).status).toBe(200);
    const request = await requestRow(t.db, approvalId);
    const receipts = await receiptsOf(t.db, leaseId);
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({
      lane: "four_eyes",
      requesterId: tm.dave.id,
      requesterSessionId: request.requesterSessionId,
      approvalId,
      approverId: tm.carol.id,
      approverSessionId: request.approverSessionId,
      approvedAt: request.decidedAt,
      proposalSha256: hash,
      writtenInvoiceVersion: (await invoiceRow(t.db, inv.id)).version,
      writtenInvoiceSha256: await invoiceSha256InNode(t.db, inv.id),
    });
    expect(await sessionIds(t.db, tm.carol.id)).toContain(receipts[0]!.approverSessionId);
    expect(request.requesterSessionId).not.toBeNull();

    // Every receipt is a chain entry, and the chain verifies.
    const { orgId } = await asMember(t.db, tm.ada);
    const [report] = await verifyChain(t.db, { orgId });
    expect(report!.failure).toBeNull();
    const entries = rowsOf<{ source_key: string; actor_id: string }>(
      await t.db.execute(sql`select source_key, actor_id from audit_entry where org_id = ${orgId} and source = 'lease_receipt'`),
    );
    expect(entries).toEqual([{ source_key: receipts[0]!.id, actor_id: tm.carol.id }]);
  });

  it("an `applied` lease without a receipt fails at commit, and nothing of its transaction is kept", async () => {
    const tm = await team(t.db);
    const { leaseId } = await proposed(t.db, tm.dave);
    let failure = "";
    try {
      await t.db.transaction(async (tx) => {
        await tx.execute(sql`update inference_lease set status = 'applied' where id = ${leaseId}`);
      });
    } catch (error) {
      failure = `${(error as Error).message} ${String((error as { cause?: { message?: string } }).cause?.message ?? "")}`;
    }
    expect(failure).toMatch(/without a receipt/);
    expect((await leaseRow(t.db, leaseId)).status).toBe("proposed");
    expect(await receiptsOf(t.db, leaseId)).toHaveLength(0);
  });

  it("GET /api/leases/:id/receipt: the actor, the approver named and the admins read it; anyone else 404 lease_not_found", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { leaseId, approvalId, hash, inv } = await submitted(t.db, tm);
    // Before the write: those who may read the lease find no receipt yet.
    expect(await api("GET", `/api/leases/${leaseId}/receipt`, { cookie: tm.cookies.dave })).toMatchObject({
      status: 404,
      body: { detail: "receipt_not_found" },
    });
    expect((await approve(tm, "carol", approvalId, hash, "Fine.")).status).toBe(200);
    const [r] = await receiptsOf(t.db, leaseId);
    for (const who of ["dave", "carol", "ada"] as const) {
      const res = await api("GET", `/api/leases/${leaseId}/receipt`, { cookie: tm.cookies[who] });
      expect(res.status, who).toBe(200);
      expect(res.body, who).toEqual({
        lease_id: leaseId,
        invoice_id: inv.id,
        purpose: "summarize_invoice",
        prompt_version: "summarize-2",
        model: r!.model,
        lane: "four_eyes",
        requester: { id: tm.dave.id, name: "Dave", session_id: r!.requesterSessionId },
        approval: {
          id: approvalId,
          approver: { id: tm.carol.id, name: "Carol", session_id: r!.approverSessionId },
          approved_at: r!.approvedAt!.toISOString(),
          comment: "Fine.",
        },
        proposal_sha256: hash,
        at_proposal: {
          invoice_version: r!.proposedInvoiceVersion,
          invoice_sha256: r!.proposedInvoiceSha256,
          at: r!.proposedAt!.toISOString(),
        },
        at_write: { invoice_version: r!.writtenInvoiceVersion, invoice_sha256: r!.writtenInvoiceSha256, at: r!.writtenAt.toISOString() },
        written: ["summary"],
      });
    }
    // Another organization's admin, a malformed id, a missing one: the same 404 as every lease route.
    for (const [who, id] of [
      ["bea", leaseId],
      ["dave", "not-a-uuid"],
      ["dave", "00000000-0000-4000-8000-000000000000"],
    ] as const) {
      const res = await api("GET", `/api/leases/${id}/receipt`, { cookie: tm.cookies[who] });
      expect(res, `${who} ${id}`).toMatchObject({ status: 404, body: { detail: "lease_not_found" } });
    }
    // A teammate who is neither the actor, the approver named, nor an admin.
    const eve = await makeUser(t.db, "Eve");
    await joinOrgOf(t.db, eve, tm.ada, "approver");
    const res = await api("GET", `/api/leases/${leaseId}/receipt`, { cookie: await signInCookie(eve.email) });
    expect(res).toMatchObject({ status: 404, body: { detail: "lease_not_found" } });
    // No cookie: 401.
    expect((await api("GET", `/api/leases/${leaseId}/receipt`)).status).toBe(401);
  });

  it("the invoice's history says who wrote and who approved, to the receipt's readers only, without hashes", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
    expect((await approve(tm, "carol", approvalId, hash)).status).toBe(200);
    const eve = await makeUser(t.db, "Eve");
    await joinOrgOf(t.db, eve, tm.ada, "admin");
    const mallory = await makeUser(t.db, "Mallory");
    await joinOrgOf(t.db, mallory, tm.ada, "approver");
    const receiptOf = async (user: { id: string }) => {
      const timeline = await invoiceTimeline(t.db, await asMember(t.db, user), inv.id, { offset: 0, limit: 10 });
      const entry = timeline!.entries.find((e) => e.type === "attempt" && e.attempt.id === leaseId);
      return entry?.type === "attempt" ? entry.attempt.receipt : undefined;
    };
    const [r] = await receiptsOf(t.db, leaseId);
    for (const who of [tm.dave, tm.carol, tm.ada, eve]) {
      const line = await receiptOf(who);
      expect(line).toMatchObject({ writtenBy: "Dave", approvedBy: "Carol" });
      expect(new Date(line!.at).getTime()).toBe(r!.writtenAt.getTime());
      expect(JSON.stringify(line)).not.toMatch(/[0-9a-f]{64}/);
    }
    // An approver the request does not name reads the attempt, not its receipt.
    expect(await receiptOf(mallory)).toBeNull();
  });
});
