// Every way an approval request ends (docs/decisions/0078's table), on PGlite and PostgreSQL: the
// window passing on the database clock, the invoice edited or given to someone else (withdrawn at
// once), the requester discarding it or being removed, the approver losing the role between
// seeing and approving (403, nothing written, the request still waits), and the requester signing
// out (the request survives). Each end answers a later approve with its own 409.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { inferenceLease } from "@/db/schema";
import { expireOverdue } from "@/lib/leases";
import { approvalStatus } from "@/lib/approvals/status";
import { api } from "../../support/api";
import { invoiceRow, leaseRow, openTestDb, type TestDb } from "../../support/db";
import { proposedLease } from "../purposes/purpose-support";
import { approve, decline, fourEyes, requestRow, submitted, team } from "./support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

async function statusOf(approvalId: string) {
  const request = await requestRow(t.db, approvalId);
  const lease = await leaseRow(t.db, request.leaseId);
  const result = await t.db.execute(sql`select now() as now`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { now: unknown }[];
  const v = rows[0]!.now;
  const now = v instanceof Date ? v : new Date(String(v));
  return approvalStatus({
    decision: request.decision,
    leaseStatus: lease.status,
    closedReason: lease.closedReason,
    deadlineAt: lease.deadlineAt,
    now,
  });
}

const queueIds = async (cookie: string) => (await api("GET", "/api/approvals", { cookie })).body.map((e: { id: string }) => e.id);

it("the window passes on the database clock: the queue drops it, approve records the lease expired and answers 409 approval_expired", async () => {
  const tm = await team(t.db);
  await fourEyes(tm, "summarize_invoice", 1);
  const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
  expect(await statusOf(approvalId)).toBe("pending");
  // The window's end, moved into the past by the database's own clock (a test cannot wait an hour).
  await t.db
    .update(inferenceLease)
    .set({ deadlineAt: sql`now() - interval '1 second'` })
    .where(eq(inferenceLease.id, leaseId));
  expect(await statusOf(approvalId)).toBe("expired");
  expect(await queueIds(tm.cookies.carol)).not.toContain(approvalId);
  expect(await approve(tm, "carol", approvalId, hash)).toMatchObject({ status: 409, body: { detail: "approval_expired" } });
  expect(await leaseRow(t.db, leaseId)).toMatchObject({ status: "expired", closedReason: "deadline_passed" });
  expect((await requestRow(t.db, approvalId)).decision).toBeNull();
  expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version);
  expect(await decline(tm, "carol", approvalId, "late")).toMatchObject({ status: 409, body: { detail: "approval_expired" } });
});

it("the sweep expires a request whose window passed", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { leaseId, approvalId } = await submitted(t.db, tm);
  await t.db
    .update(inferenceLease)
    .set({ deadlineAt: sql`now() - interval '1 second'` })
    .where(eq(inferenceLease.id, leaseId));
  await expireOverdue(t.db, 1000);
  expect((await leaseRow(t.db, leaseId)).status).toBe("expired");
  expect(await statusOf(approvalId)).toBe("expired");
});

it("an edit of the invoice withdraws the request at once: 409 invoice_changed, nothing written", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
  expect(await api("PATCH", `/api/invoices/${inv.id}`, { cookie: tm.cookies.dave, json: { counterparty: "Contoso" } })).toMatchObject({
    status: 200,
  });
  expect(await leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
  expect(await statusOf(approvalId)).toBe("withdrawn");
  expect(await queueIds(tm.cookies.carol)).not.toContain(approvalId);
  expect(await approve(tm, "carol", approvalId, hash)).toMatchObject({ status: 409, body: { detail: "invoice_changed" } });
  expect((await invoiceRow(t.db, inv.id)).summary).toBeNull();
});

it("the invoice given to someone else withdraws the request (409 invoice_changed)", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
  expect(await api("PUT", `/api/invoices/${inv.id}/owner`, { cookie: tm.cookies.ada, json: { owner_id: tm.carol.id } })).toMatchObject({
    status: 200,
  });
  expect(await leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
  expect(await approve(tm, "ada", approvalId, hash)).toMatchObject({ status: 409, body: { detail: "invoice_changed" } });
  expect((await invoiceRow(t.db, inv.id)).summary).toBeNull();
});

it("the invoice changed by hand under the request (no withdrawal): approve's fence closes it, 409 invoice_changed", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
  await t.db.execute(sql`update invoice set version = version + 1 where id = ${inv.id}`);
  expect(await approve(tm, "carol", approvalId, hash)).toMatchObject({ status: 409, body: { detail: "invoice_changed" } });
  expect(await leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
  expect((await requestRow(t.db, approvalId)).decision).toBeNull();
  expect((await invoiceRow(t.db, inv.id)).summary).toBeNull();
});

it("the requester discards it (withdraws): 409 approval_withdrawn", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { leaseId, approvalId, hash } = await submitted(t.db, tm);
  expect(await api("POST", `/api/leases/${leaseId}/cancel`, { cookie: tm.cookies.dave })).toMatchObject({ status: 200 });
  expect(await statusOf(approvalId)).toBe("withdrawn");
  expect(await approve(tm, "carol", approvalId, hash)).toMatchObject({ status: 409, body: { detail: "approval_withdrawn" } });
});

it("the requester removed from the organization: the request is withdrawn (signed_out), 409 approval_withdrawn", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
  expect(await api("DELETE", `/api/org/members/${tm.dave.id}`, { cookie: tm.cookies.ada })).toMatchObject({ status: 200 });
  expect(await leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "signed_out" });
  expect(await approve(tm, "carol", approvalId, hash)).toMatchObject({ status: 409, body: { detail: "approval_withdrawn" } });
  expect((await invoiceRow(t.db, inv.id)).summary).toBeNull();
});

it("the requester signing out (here and everywhere) leaves the request pending; the approval still writes", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const first = await submitted(t.db, tm);
  const second = await submitted(t.db, tm);
  expect(await api("DELETE", "/api/session?scope=all", { cookie: tm.cookies.dave })).toMatchObject({ status: 200 });
  expect(await statusOf(first.approvalId)).toBe("pending");
  expect(await statusOf(second.approvalId)).toBe("pending");
  expect(await approve(tm, "carol", first.approvalId, first.hash)).toMatchObject({ status: 200 });
  expect((await invoiceRow(t.db, first.inv.id)).version).toBe(first.inv.version + 1);
  expect(await decline(tm, "carol", second.approvalId, "Not this one")).toMatchObject({ status: 200 });
});

it("an approver demoted between seeing and approving: 403 forbidden, nothing written, the request waits for another approver", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
  expect(await queueIds(tm.cookies.carol)).toContain(approvalId);
  expect(await api("PATCH", `/api/org/members/${tm.carol.id}`, { cookie: tm.cookies.ada, json: { role: "member" } })).toMatchObject({
    status: 200,
  });
  expect(await approve(tm, "carol", approvalId, hash)).toMatchObject({ status: 403, body: { detail: "forbidden" } });
  expect(await decline(tm, "carol", approvalId, "no")).toMatchObject({ status: 403, body: { detail: "forbidden" } });
  expect((await requestRow(t.db, approvalId)).decision).toBeNull();
  expect((await leaseRow(t.db, leaseId)).status).toBe("proposed");
  expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version);
  expect(await approve(tm, "ada", approvalId, hash)).toMatchObject({ status: 200 });
});

it("another purpose's apply carries the submitted lease forward; the approval still writes", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
  const review = await proposedLease(t.db, tm.dave.id, inv.id, "review_invoice");
  expect(await api("POST", `/api/leases/${review.leaseId}/apply`, { cookie: tm.cookies.dave })).toMatchObject({ status: 200 });
  expect((await leaseRow(t.db, leaseId)).invoiceVersion).toBe(inv.version + 1);
  expect(await approve(tm, "carol", approvalId, hash)).toMatchObject({ status: 200, body: { invoice_version: inv.version + 2 } });
});
