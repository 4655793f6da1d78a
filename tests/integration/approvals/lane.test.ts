// The four-eyes lane (docs/decisions/0078) through the route handlers, on PGlite and PostgreSQL:
// the policy (an admin's, per purpose), the owner's apply refused under four_eyes, submit (the
// proposal frozen by its RFC 8785 sha256, the deadline moved to the window's end), the queue, an
// approval that writes the invoice fenced by version and owner, a decline with its comment, and
// the same person refused twice: by the route (403 same_person) and by the database (a CHECK and
// a trigger, whatever SQL writes the row).
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf } from "@/db/client";
import { approvalPolicy, approvalRequest, invoiceLine } from "@/db/schema";
import { verifyChain } from "@/lib/audit/verify";
import { api, signInCookie } from "../../support/api";
import { asMember, eventKinds, invoiceRow, joinOrgOf, leaseEvents, leaseRow, makeUser, openTestDb, type TestDb } from "../../support/db";
import { approve, count, decline, fourEyes, proposed, requestRow, sha256Of, submitted, team } from "./support";

let t: TestDb;

/** The database's own words for why a statement failed (drizzle wraps them as the error's cause), or "" if it did not. */
async function failure(statement: PromiseLike<unknown>): Promise<string> {
  try {
    await statement;
    return "";
  } catch (error) {
    const cause = (error as { cause?: { message?: string; constraint_name?: string; constraint?: string } }).cause;
    return [cause?.message, cause?.constraint_name, cause?.constraint, (error as Error).message].filter(Boolean).join(" | ");
  }
}
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

describe("the policy: PUT /api/org/policies/:purpose", () => {
  it("an admin sets it; every member reads it; a non-admin is 403 and nothing is written", async () => {
    const tm = await team(t.db);
    const body = { apply: "four_eyes", review_hours: 48 };
    for (const who of ["carol", "dave"] as const) {
      const res = await api("PUT", "/api/org/policies/review_invoice", { cookie: tm.cookies[who], json: body });
      expect(res, who).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    }
    expect(await count(t.db, "approval_policy")).toBe(0);
    const put = await api("PUT", "/api/org/policies/review_invoice", { cookie: tm.cookies.ada, json: body });
    expect(put).toMatchObject({ status: 200, body: { purpose: "review_invoice", apply: "four_eyes", review_hours: 48 } });
    const read = await api("GET", "/api/org/policies", { cookie: tm.cookies.dave });
    expect(read.body).toEqual([
      { purpose: "summarize_invoice", apply: "self", review_hours: 24 },
      { purpose: "review_invoice", apply: "four_eyes", review_hours: 48 },
      { purpose: "categorize_lines", apply: "self", review_hours: 24 },
    ]);
    // Another organization's admin sets their own, never this one's.
    await api("PUT", "/api/org/policies/review_invoice", { cookie: tm.cookies.bea, json: { apply: "self", review_hours: 1 } });
    const [row] = await t.db.select().from(approvalPolicy).where(eq(approvalPolicy.updatedBy, tm.ada.id));
    expect(row).toMatchObject({ apply: "four_eyes", reviewHours: 48 });
  });

  it("a bad body is 422 and an unknown purpose 422 purpose_not_allowed, writing nothing", async () => {
    const tm = await team(t.db);
    const before = await count(t.db, "approval_policy");
    for (const json of [
      { apply: "two_eyes", review_hours: 24 },
      { apply: "four_eyes", review_hours: 0 },
      { apply: "four_eyes", review_hours: 721 },
      { apply: "four_eyes", review_hours: 1.5 },
      { apply: "four_eyes" },
      { apply: "four_eyes", review_hours: 24, org_id: tm.bea.id },
    ]) {
      const res = await api("PUT", "/api/org/policies/summarize_invoice", { cookie: tm.cookies.ada, json });
      expect(res, JSON.stringify(json)).toMatchObject({ status: 422, body: { detail: "invalid_request" } });
    }
    const unknown = await api("PUT", "/api/org/policies/pay_invoice", { cookie: tm.cookies.ada, json: { apply: "self", review_hours: 1 } });
    expect(unknown).toMatchObject({ status: 422, body: { detail: "purpose_not_allowed" } });
    expect(await count(t.db, "approval_policy")).toBe(before);
  });
});

describe("submit", () => {
  it("under four_eyes the owner's apply is 409 approval_required and writes nothing; submit freezes the proposal by its hash", async () => {
    const tm = await team(t.db);
    await fourEyes(tm, "summarize_invoice", 6);
    const { inv, leaseId } = await proposed(t.db, tm.dave);

    const apply = await api("POST", `/api/leases/${leaseId}/apply`, { cookie: tm.cookies.dave });
    expect(apply).toMatchObject({ status: 409, body: { detail: "approval_required" } });
    expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version);
    expect((await leaseRow(t.db, leaseId)).status).toBe("proposed");

    const res = await api("POST", `/api/leases/${leaseId}/submit`, { cookie: tm.cookies.dave });
    expect(res.status).toBe(200);
    const lease = await leaseRow(t.db, leaseId);
    expect(res.body).toMatchObject({ status: "pending", lease_id: leaseId, invoice_id: inv.id, proposal_sha256: sha256Of(lease.proposal) });
    const request = await requestRow(t.db, res.body.approval_id);
    expect(request).toMatchObject({ requesterId: tm.dave.id, invoiceVersion: inv.version, decision: null, purpose: "summarize_invoice" });
    // The window, on the database clock: the lease's deadline is the request's end, review_hours after the submit.
    expect(lease.deadlineAt.getTime()).toBe(request.expiresAt.getTime());
    expect(request.expiresAt.getTime() - request.submittedAt.getTime()).toBe(6 * 3600_000);
    expect(await eventKinds(t.db, leaseId)).toEqual(["opened", "proposed", "apply_refused", "submitted"]);

    // A retry answers the same request; an apply now is 409 approval_pending.
    const again = await api("POST", `/api/leases/${leaseId}/submit`, { cookie: tm.cookies.dave });
    expect(again).toMatchObject({ status: 200, body: { approval_id: res.body.approval_id } });
    expect(await count(t.db, `approval_request where lease_id = '${leaseId}'`)).toBe(1);
    expect(await api("POST", `/api/leases/${leaseId}/apply`, { cookie: tm.cookies.dave })).toMatchObject({
      status: 409,
      body: { detail: "approval_pending" },
    });
  });

  it("under self submit is 409 approval_not_required; another's lease, a missing or malformed id 404; by status 409", async () => {
    const tm = await team(t.db);
    const { leaseId } = await proposed(t.db, tm.dave);
    expect(await api("POST", `/api/leases/${leaseId}/submit`, { cookie: tm.cookies.dave })).toMatchObject({
      status: 409,
      body: { detail: "approval_not_required" },
    });
    await fourEyes(tm);
    for (const [who, id] of [
      ["carol", leaseId],
      ["ada", leaseId],
      ["dave", "00000000-0000-4000-8000-000000000000"],
      ["dave", "not-a-uuid"],
    ] as const) {
      expect(await api("POST", `/api/leases/${id}/submit`, { cookie: tm.cookies[who] }), `${who} ${id}`).toMatchObject({
        status: 404,
        body: { detail: "lease_not_found" },
      });
    }
    expect(await api("POST", `/api/leases/${leaseId}/cancel`, { cookie: tm.cookies.dave })).toMatchObject({ status: 200 });
    expect(await api("POST", `/api/leases/${leaseId}/submit`, { cookie: tm.cookies.dave })).toMatchObject({
      status: 409,
      body: { detail: "lease_rejected" },
    });
    expect(await count(t.db, `approval_request where lease_id = '${leaseId}'`)).toBe(0);
  });

  it("the lifecycle under self is as before: apply writes, no request", async () => {
    const tm = await team(t.db);
    const { inv, leaseId } = await proposed(t.db, tm.dave);
    expect(await api("POST", `/api/leases/${leaseId}/apply`, { cookie: tm.cookies.dave })).toMatchObject({ status: 200 });
    expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version + 1);
  });
});

describe("the queue and the decision", () => {
  it("an approver sees the request with its hash; approving the hash shown writes the invoice, fenced, in that transaction", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);

    const queue = await api("GET", "/api/approvals", { cookie: tm.cookies.carol });
    expect(queue.status).toBe(200);
    const entry = queue.body.find((e: { id: string }) => e.id === approvalId);
    expect(entry).toMatchObject({
      lease_id: leaseId,
      invoice_id: inv.id,
      invoice_number: inv.number,
      purpose: "summarize_invoice",
      requester: { id: tm.dave.id, name: "Dave" },
      proposal_sha256: hash,
    });
    // The hash a client computes from the proposal it was shown, with canonicalize (RFC 8785).
    expect(sha256Of(entry.proposal)).toBe(hash);
    // An admin approves too; a member's queue is 403; another organization's admin sees none of it.
    expect((await api("GET", "/api/approvals", { cookie: tm.cookies.ada })).body.map((e: { id: string }) => e.id)).toContain(approvalId);
    expect(await api("GET", "/api/approvals", { cookie: tm.cookies.dave })).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    expect((await api("GET", "/api/approvals", { cookie: tm.cookies.bea })).body).toEqual([]);
    expect(await approve(tm, "bea", approvalId, hash)).toMatchObject({ status: 404, body: { detail: "approval_not_found" } });

    // A hash that is not the proposal's: 409, nothing written.
    const wrong = await approve(tm, "carol", approvalId, sha256Of({ summary: "something else" }));
    expect(wrong).toMatchObject({ status: 409, body: { detail: "proposal_changed" } });
    expect((await requestRow(t.db, approvalId)).decision).toBeNull();
    expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version);

    const ok = await approve(tm, "carol", approvalId, hash.toUpperCase(), "Checked against the contract.");
    expect(ok).toMatchObject({
      status: 200,
      body: { status: "approved", approval_id: approvalId, lease_id: leaseId, invoice_version: inv.version + 1 },
    });
    const lease = await leaseRow(t.db, leaseId);
    expect(lease.status).toBe("applied");
    const written = await invoiceRow(t.db, inv.id);
    expect(written).toMatchObject({
      version: inv.version + 1,
      summary: (lease.proposal as { summary: string }).summary,
      summaryVersion: inv.version + 1,
    });
    expect(await requestRow(t.db, approvalId)).toMatchObject({
      decision: "approved",
      approverId: tm.carol.id,
      comment: "Checked against the contract.",
    });
    const events = await leaseEvents(t.db, leaseId);
    expect(events.at(-1)).toMatchObject({ kind: "applied", detail: { approval_id: approvalId, approver_id: tm.carol.id } });

    // Decided once: a second approval, or a decline, is 409 approval_approved, and the queue no longer has it.
    expect(await approve(tm, "ada", approvalId, hash)).toMatchObject({ status: 409, body: { detail: "approval_approved" } });
    expect(await decline(tm, "ada", approvalId, "Too late")).toMatchObject({ status: 409, body: { detail: "approval_approved" } });
    expect((await api("GET", "/api/approvals", { cookie: tm.cookies.carol })).body).toEqual([]);
    expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version + 1);

    // The audit chain (0080) records the policy, the request and its decision, and verifies.
    const { orgId } = await asMember(t.db, tm.ada);
    const [report] = await verifyChain(t.db, { orgId });
    expect(report!.failure).toBeNull();
    const sources = rowsOf<{ source: string; op: string; source_key: string }>(
      await t.db.execute(
        sql`select source, op, source_key from audit_entry where org_id = ${orgId} and source like 'approval%' order by seq`,
      ),
    );
    expect(sources).toEqual([
      { source: "approval_policy", op: "insert", source_key: `${orgId}:summarize_invoice` },
      { source: "approval_request", op: "insert", source_key: approvalId },
      { source: "approval_request", op: "update", source_key: approvalId },
    ]);
  });

  it("the requester approving or declining their own request is 403 same_person, an admin too; nothing written", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { inv, approvalId, hash } = await submitted(t.db, tm);
    expect(await approve(tm, "dave", approvalId, hash)).toMatchObject({ status: 403, body: { detail: "same_person" } });
    expect(await decline(tm, "dave", approvalId, "mine")).toMatchObject({ status: 403, body: { detail: "same_person" } });

    // Ada, an admin, submits her own: she cannot approve it either; Carol can.
    const own = await proposed(t.db, tm.ada);
    const sub = await api("POST", `/api/leases/${own.leaseId}/submit`, { cookie: tm.cookies.ada });
    expect(sub.status).toBe(200);
    expect(await approve(tm, "ada", sub.body.approval_id, sub.body.proposal_sha256)).toMatchObject({
      status: 403,
      body: { detail: "same_person" },
    });
    expect((await api("GET", "/api/approvals", { cookie: tm.cookies.ada })).body.map((e: { id: string }) => e.id)).not.toContain(
      sub.body.approval_id,
    );
    expect((await requestRow(t.db, approvalId)).decision).toBeNull();
    expect((await requestRow(t.db, sub.body.approval_id)).decision).toBeNull();
    expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version);
    expect(await approve(tm, "carol", sub.body.approval_id, sub.body.proposal_sha256)).toMatchObject({ status: 200 });
  });

  it("the database refuses a self-approval written by hand (CHECK), and any second decision (trigger)", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { approvalId } = await submitted(t.db, tm);
    const self = t.db.execute(
      sql`update approval_request set decision = 'approved', approver_id = requester_id, decided_at = now() where id = ${approvalId}`,
    );
    expect(await failure(self)).toMatch(/approval_request_four_eyes/);
    const insert = t.db.execute(sql`
      insert into approval_request (org_id, lease_id, invoice_id, purpose, requester_id, proposal_sha256, invoice_version, expires_at,
        decision, approver_id, decided_at)
      select org_id, gen_random_uuid(), invoice_id, purpose, requester_id, proposal_sha256, invoice_version, expires_at,
        'approved', requester_id, now() from approval_request where id = ${approvalId}`);
    expect(await failure(insert)).toMatch(/approval_request_four_eyes/);
    expect((await requestRow(t.db, approvalId)).decision).toBeNull();

    await t.db
      .update(approvalRequest)
      .set({ decision: "approved", approverId: tm.carol.id, decidedAt: sql`now()` })
      .where(eq(approvalRequest.id, approvalId));
    const second = t.db
      .update(approvalRequest)
      .set({ decision: "declined", approverId: tm.ada.id, comment: "no" })
      .where(eq(approvalRequest.id, approvalId));
    expect(await failure(second)).toMatch(/already decided/);
    // Nor may a pending request's frozen columns change.
    const other = await submitted(t.db, tm);
    const frozen = t.db
      .update(approvalRequest)
      .set({ proposalSha256: "0".repeat(64) })
      .where(eq(approvalRequest.id, other.approvalId));
    expect(await failure(frozen)).toMatch(/frozen/);
  });

  it("decline needs a comment (422), then closes the lease rejected/declined and leaves the invoice as it was", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
    for (const comment of [undefined, "", "   ", "x".repeat(2001), "nul\u0000"]) {
      expect(await decline(tm, "carol", approvalId, comment), JSON.stringify(comment)).toMatchObject({
        status: 422,
        body: { detail: "invalid_request" },
      });
    }
    expect((await requestRow(t.db, approvalId)).decision).toBeNull();
    const res = await decline(tm, "carol", approvalId, "The total does not match the PO.");
    expect(res).toMatchObject({ status: 200, body: { status: "declined", approval_id: approvalId, lease_id: leaseId } });
    expect(await leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "declined" });
    expect(await requestRow(t.db, approvalId)).toMatchObject({
      decision: "declined",
      approverId: tm.carol.id,
      comment: "The total does not match the PO.",
    });
    expect((await eventKinds(t.db, leaseId)).at(-1)).toBe("declined");
    expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version);
    expect(await approve(tm, "ada", approvalId, hash)).toMatchObject({ status: 409, body: { detail: "approval_declined" } });
    expect(await api("POST", `/api/leases/${leaseId}/apply`, { cookie: tm.cookies.dave })).toMatchObject({
      status: 409,
      body: { detail: "lease_rejected" },
    });
  });

  it("a member cannot decide (403 forbidden); an unknown or malformed id is 404; a bad hash 422", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { approvalId, hash } = await submitted(t.db, tm);
    const mo = await makeUser(t.db, "Mo");
    await joinOrgOf(t.db, mo, tm.ada, "member");
    const moCookie = await signInCookie(mo.email);
    const asMo = await api("POST", `/api/approvals/${approvalId}/approve`, { cookie: moCookie, json: { proposal_sha256: hash } });
    expect(asMo).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    for (const id of ["00000000-0000-4000-8000-000000000000", "nope"]) {
      expect(await approve(tm, "carol", id, hash)).toMatchObject({ status: 404, body: { detail: "approval_not_found" } });
    }
    for (const h of ["abc", "g".repeat(64), 42]) {
      const res = await api("POST", `/api/approvals/${approvalId}/approve`, { cookie: tm.cookies.carol, json: { proposal_sha256: h } });
      expect(res.status).toBe(422);
    }
    expect((await requestRow(t.db, approvalId)).decision).toBeNull();
    // The id in any letter case is the same request.
    expect(await approve(tm, "carol", approvalId.toUpperCase(), hash)).toMatchObject({ status: 200 });
  });
});

describe("GET /api/approvals/:id", () => {
  it("the requester and those who may approve read it with what approving would change; anyone else 404", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
    const summary = ((await leaseRow(t.db, leaseId)).proposal as { summary: string }).summary;
    for (const who of ["carol", "ada", "dave"] as const) {
      const res = await api("GET", `/api/approvals/${approvalId}`, { cookie: tm.cookies[who] });
      expect(res, who).toMatchObject({
        status: 200,
        body: { id: approvalId, lease_id: leaseId, invoice_id: inv.id, status: "pending", proposal_sha256: hash, decision: null },
      });
      expect(
        res.body.changes.find((c: { after: string }) => c.after === summary),
        who,
      ).toMatchObject({ before: null, after: summary });
    }
    const mo = await makeUser(t.db, "Mo");
    await joinOrgOf(t.db, mo, tm.ada, "member");
    for (const cookie of [await signInCookie(mo.email), tm.cookies.bea]) {
      expect(await api("GET", `/api/approvals/${approvalId}`, { cookie })).toMatchObject({
        status: 404,
        body: { detail: "approval_not_found" },
      });
    }
    expect(await api("GET", "/api/approvals/nope", { cookie: tm.cookies.carol })).toMatchObject({ status: 404 });
    expect(await approve(tm, "carol", approvalId, hash, "Fine.")).toMatchObject({ status: 200 });
    const after = await api("GET", `/api/approvals/${approvalId}`, { cookie: tm.cookies.dave });
    expect(after.body).toMatchObject({
      status: "approved",
      decision: "approved",
      approver: { id: tm.carol.id, name: "Carol" },
      comment: "Fine.",
      changes: null,
    });
  });
});

describe("categorize_lines under four_eyes", () => {
  it("submit freezes the ticked lines; the approval writes exactly those; lines the proposal lacks are 422 invalid_lines", async () => {
    const tm = await team(t.db);
    await fourEyes(tm, "categorize_lines");
    const { inv, leaseId } = await proposed(t.db, tm.dave, "categorize_lines");
    const lines = await t.db.select().from(invoiceLine).where(eq(invoiceLine.invoiceId, inv.id)).orderBy(invoiceLine.position);
    const bad = await api("POST", `/api/leases/${leaseId}/submit`, { cookie: tm.cookies.dave, json: { lines: [] } });
    expect(bad).toMatchObject({ status: 422, body: { detail: "invalid_lines" } });
    const stranger = "00000000-0000-4000-8000-000000000000";
    expect(await api("POST", `/api/leases/${leaseId}/submit`, { cookie: tm.cookies.dave, json: { lines: [stranger] } })).toMatchObject({
      status: 422,
      body: { detail: "invalid_lines" },
    });
    expect(await count(t.db, `approval_request where lease_id = '${leaseId}'`)).toBe(0);

    const first = lines[0]!.id;
    const res = await api("POST", `/api/leases/${leaseId}/submit`, { cookie: tm.cookies.dave, json: { lines: [first.toUpperCase()] } });
    expect(res.status).toBe(200);
    expect((await requestRow(t.db, res.body.approval_id)).accept).toEqual([first]);
    // What the approver is shown is what approving writes: the ticked line only, as the page draws it.
    expect(lines.length).toBeGreaterThan(1);
    const shown = await api("GET", `/api/approvals/${res.body.approval_id}`, { cookie: tm.cookies.carol });
    expect(shown.status).toBe(200);
    expect(shown.body.changes.map((c: { key: string }) => c.key.toLowerCase())).toEqual([first]);
    expect(await approve(tm, "carol", res.body.approval_id, res.body.proposal_sha256)).toMatchObject({ status: 200 });
    const after = await t.db.select().from(invoiceLine).where(eq(invoiceLine.invoiceId, inv.id)).orderBy(invoiceLine.position);
    expect(after[0]!.category).not.toBeNull();
    expect(after.slice(1).map((l) => l.category)).toEqual(lines.slice(1).map(() => null));
  });
});
