// The four-eyes lane's races (docs/decisions/0078), on PostgreSQL: a connection of the test's own
// holds a row so that two requests queue behind it, then lets them go. Two approvers racing for one
// request: exactly one approves and writes, the other finds the decision made (409
// approval_approved); the decision's lock (the request and its lease FOR UPDATE) is what orders
// them. An approval racing an edit of the invoice: whichever takes the lease first wins, and the
// other either writes on top (the edit) or is refused as out of date (409 invoice_changed), never
// a summary written over an invoice that changed since it was proposed.
// PostgreSQL only: PGlite runs one transaction at a time.
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { leaseEvent } from "@/db/schema";
import { api } from "../../support/api";
import { invoiceRow, leaseRow, openTestDb, type TestDb } from "../../support/db";
import { appsWaiting as waitForApps, holderFor, type RowHolder } from "../../support/row-holder";
import { approve, fourEyes, requestRow, submitted, team } from "./support";

let t: TestDb;
let holder: RowHolder;
beforeAll(async () => {
  if (inject("dbKind") !== "postgres") throw new Error("races.connections.test.ts needs PostgreSQL");
  t = await openTestDb();
  holder = holderFor(t);
});
afterAll(async () => {
  await holder?.end();
  await t?.close();
});

/** Resolves once `n` app connections wait on a lock. */
const appsWaiting = (n: number) => waitForApps(holder, t.name, n, "requests");

it("two approvers racing for one request: one approves and writes once, the other is 409 approval_approved (10 rounds)", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  for (let round = 0; round < 10; round++) {
    const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
    const held = holder.hold(`select 1 from inference_lease where id = '${leaseId}' for update`);
    await held.isLocked;
    const racing = [approve(tm, "carol", approvalId, hash), approve(tm, "ada", approvalId, hash)];
    await appsWaiting(2);
    held.release();
    await held.done;
    const answers = await Promise.all(racing);
    const byStatus = answers.map((a) => `${a.status}${a.status === 200 ? "" : `:${a.body.detail}`}`).sort();
    expect(byStatus, `round ${round}`).toEqual(["200", "409:approval_approved"]);
    const winner = answers[0]!.status === 200 ? tm.carol : tm.ada;
    expect(await requestRow(t.db, approvalId)).toMatchObject({ decision: "approved", approverId: winner.id });
    expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version + 1);
    const applied = await t.db
      .select()
      .from(leaseEvent)
      .where(and(eq(leaseEvent.leaseId, leaseId), eq(leaseEvent.kind, "applied")));
    expect(applied).toHaveLength(1);
  }
});

it("an approval racing an edit: the first to take the lease wins, and the loser never writes a stale proposal (10 rounds)", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const seen: string[] = [];
  for (let round = 0; round < 10; round++) {
    const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
    const held = holder.hold(`select 1 from inference_lease where id = '${leaseId}' for update`);
    await held.isLocked;
    const approveFirst = round % 2 === 0;
    const edit = () => api("PATCH", `/api/invoices/${inv.id}`, { cookie: tm.cookies.dave, json: { counterparty: `Renamed ${round}` } });
    // Queued in this order behind the held lease row: PostgreSQL grants a row's lock first come, first served.
    const first = approveFirst ? approve(tm, "carol", approvalId, hash) : edit();
    await appsWaiting(1);
    const second = approveFirst ? edit() : approve(tm, "carol", approvalId, hash);
    await appsWaiting(2);
    held.release();
    await held.done;
    const [a, b] = await Promise.all([first, second]);
    const [approved, edited] = approveFirst ? [a!, b!] : [b!, a!];
    expect(edited.status, `round ${round}`).toBe(200);
    const lease = await leaseRow(t.db, leaseId);
    const after = await invoiceRow(t.db, inv.id);
    if (approved.status === 200) {
      // The approval wrote against the version it was proposed for, then the edit on top.
      expect(lease.status).toBe("applied");
      expect(after.summaryVersion).toBe(inv.version + 1);
      expect(after.version).toBe(inv.version + 2);
      seen.push("approve-first");
    } else {
      expect(approved.body).toEqual({ detail: "invoice_changed" });
      expect(lease).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
      expect(after.summary).toBeNull();
      expect((await requestRow(t.db, approvalId)).decision).toBeNull();
      seen.push("edit-first");
    }
    expect(seen.at(-1), `round ${round}`).toBe(approveFirst ? "approve-first" : "edit-first");
  }
});

it("an approver demoted while their approval waits: judged by the role at the moment of approval, 403 forbidden, nothing written", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const { inv, leaseId, approvalId, hash } = await submitted(t.db, tm);
  const held = holder.hold(`select 1 from inference_lease where id = '${leaseId}' for update`);
  await held.isLocked;
  // Carol's approval read the request (and her role) before the demotion commits; it waits on the lease.
  const approval = approve(tm, "carol", approvalId, hash);
  await appsWaiting(1);
  const demoted = await api("PATCH", `/api/org/members/${tm.carol.id}`, { cookie: tm.cookies.ada, json: { role: "member" } });
  expect(demoted.status).toBe(200);
  held.release();
  await held.done;
  expect(await approval).toMatchObject({ status: 403, body: { detail: "forbidden" } });
  expect((await requestRow(t.db, approvalId)).decision).toBeNull();
  expect((await leaseRow(t.db, leaseId)).status).toBe("proposed");
  expect((await invoiceRow(t.db, inv.id)).version).toBe(inv.version);
});
