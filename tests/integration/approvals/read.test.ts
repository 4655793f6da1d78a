// The pages' reads of approval requests (lib/approvals/read.ts, docs/decisions/0086), on PGlite and
// PostgreSQL: one request for its page, found only in the reader's organization and only by someone
// who may approve there now or by its requester (mine); the derived status and the decision as
// they change; the owner's own requests behind their invoice page's leases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownRequestsFor, readApproval } from "@/lib/approvals/read";
import { asMember, joinOrgOf, makeUser, openTestDb, type TestDb } from "../../support/db";
import { decline, fourEyes, submitted, team } from "./support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

describe("readApproval", () => {
  it("the approvers and the requester read it; a plain member, another organization and a bad id read nothing", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const s = await submitted(t.db, tm);
    const [ada, carol, dave, bea] = await Promise.all([tm.ada, tm.carol, tm.dave, tm.bea].map((u) => asMember(t.db, u)));
    const eve = await joinOrgOf(t.db, await makeUser(t.db, "Eve"), tm.ada, "member");

    const seen = await readApproval(t.db, carol!, s.approvalId);
    expect(seen).toMatchObject({
      id: s.approvalId,
      leaseId: s.leaseId,
      invoiceId: s.inv.id,
      invoiceNumber: s.inv.number,
      invoiceVersion: s.inv.version,
      invoiceVersionNow: s.inv.version,
      purpose: "summarize_invoice",
      requester: { id: tm.dave.id, name: "Dave" },
      proposalSha256: s.hash,
      status: "pending",
      decision: null,
      mine: false,
    });
    expect(seen!.proposal).toMatchObject(s.output as object);
    expect(seen!.expiresAt.getTime()).toBeGreaterThan(seen!.now.getTime());
    expect(await readApproval(t.db, ada!, s.approvalId)).toMatchObject({ mine: false });
    expect(await readApproval(t.db, dave!, s.approvalId.toUpperCase())).toMatchObject({ id: s.approvalId, mine: true });
    expect(await readApproval(t.db, eve, s.approvalId), "a member who neither approves nor asked").toBeNull();
    expect(await readApproval(t.db, bea!, s.approvalId), "another organization").toBeNull();
    expect(await readApproval(t.db, carol!, "not-a-uuid")).toBeNull();
    // A role claimed by the caller is not the role the statement reads: Eve "as an approver" still reads nothing.
    expect(await readApproval(t.db, { ...eve, role: "approver" }, s.approvalId)).toBeNull();
  });

  it("says how the request ended: declined, by whom and why", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const s = await submitted(t.db, tm);
    expect((await decline(tm, "carol", s.approvalId, "Not agreed yet")).status).toBe(200);
    const carol = await asMember(t.db, tm.carol);
    expect(await readApproval(t.db, carol, s.approvalId)).toMatchObject({
      status: "declined",
      decision: "declined",
      approverName: "Carol",
      comment: "Not agreed yet",
      leaseStatus: "rejected",
      closedReason: "declined",
    });
  });
});

describe("ownRequestsFor", () => {
  it("the requester's own requests by lease id; nobody else's", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    const s = await submitted(t.db, tm);
    const dave = await asMember(t.db, tm.dave);
    const mine = await ownRequestsFor(t.db, dave, [s.leaseId]);
    expect([...mine.keys()]).toEqual([s.leaseId]);
    expect(mine.get(s.leaseId)).toMatchObject({ id: s.approvalId, status: "pending", mine: true });
    expect((await ownRequestsFor(t.db, await asMember(t.db, tm.carol), [s.leaseId])).size).toBe(0);
    expect((await ownRequestsFor(t.db, await asMember(t.db, tm.bea), [s.leaseId])).size).toBe(0);
    expect((await ownRequestsFor(t.db, dave, [])).size).toBe(0);
  });
});
