// An edit withdraws the leases in flight on its invoice, in its own transaction
// (docs/decisions/0013): rejected/invoice_changed with its event, the generation told to stop,
// and apply's answer for such a lease stays 409 invoice_changed.
import type { LeaseProposal } from "@/lib/lease-codes";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease, leaseEvent } from "@/db/schema";
import { updateInvoice } from "@/lib/invoices";
import { applyLease, invoiceAttempts, appliedAttempt, type LeaseDispatch } from "@/lib/leases";
import * as rows from "../../support/db";
import { asMember, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

function recorder(): LeaseDispatch & { closed: [string[], string][] } {
  const closed: [string[], string][] = [];
  return {
    closed,
    async leaseOpened() {},
    async leaseClosed(ids, reason) {
      closed.push([ids, reason]);
    },
  };
}

async function seedLease(
  actorId: string,
  invoiceId: string,
  status: string,
  deadline = "60 seconds",
  proposal: LeaseProposal | null = null,
) {
  const [row] = await t.db
    .insert(inferenceLease)
    .values({
      actorId,
      invoiceId,
      purpose: "summarize_invoice",
      status: status as never,
      deadlineAt: sql`now() + ${deadline}::interval`,
      proposal,
    })
    .returning();
  return row!;
}

describe("an edit withdraws the leases in flight on its invoice", () => {
  it("a waiting proposal: rejected/invoice_changed with its event naming the fields, told to stop; apply then answers invoice_changed", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await makeInvoice(t.db, alice.id);
    const lease = await seedLease(alice.id, inv.id, "proposed", "60 seconds", { summary: "Old counterparty", model: "m" });
    const dispatch = recorder();
    const result = await updateInvoice(
      t.db,
      await asMember(t.db, alice),
      inv.id,
      { counterparty: "Contoso Ltd", due_on: "2026-12-31" },
      dispatch,
    );
    expect(result.ok).toBe(true);
    expect(await rows.leaseRow(t.db, lease.id)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
    expect(await rows.eventKinds(t.db, lease.id)).toEqual(["invoice_changed"]);
    const [event] = await t.db.select({ detail: leaseEvent.detail }).from(leaseEvent).where(eq(leaseEvent.leaseId, lease.id));
    expect(event!.detail).toEqual({
      by: "edit",
      lease_version: inv.version,
      invoice_version: inv.version + 1,
      fields: ["counterparty", "due_on"],
    });
    expect(dispatch.closed).toEqual([[[lease.id], "invoice_changed"]]);

    expect(await applyLease(t.db, alice.id, lease.id)).toEqual({ ok: false, code: "invoice_changed" });
    expect(await rows.eventKinds(t.db, lease.id)).toEqual(["invoice_changed", "apply_refused"]);
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBeNull();
    const refused = await t.db
      .select({ kind: leaseEvent.kind, detail: leaseEvent.detail })
      .from(leaseEvent)
      .where(eq(leaseEvent.leaseId, lease.id));
    expect(refused.find((e) => e.kind === "apply_refused")?.detail).toEqual({ code: "invoice_changed" });
  });

  it("an open lease (generation running) is withdrawn too; an overdue one is recorded expired instead", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await makeInvoice(t.db, alice.id);
    const open = await seedLease(alice.id, inv.id, "open");
    expect((await updateInvoice(t.db, await asMember(t.db, alice), inv.id, { number: "INV-2" }, recorder())).ok).toBe(true);
    expect(await rows.leaseRow(t.db, open.id)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });

    const inv2 = await makeInvoice(t.db, alice.id);
    const overdue = await seedLease(alice.id, inv2.id, "proposed", "-1 second", { summary: "s", model: "m" });
    const dispatch = recorder();
    expect((await updateInvoice(t.db, await asMember(t.db, alice), inv2.id, { number: "INV-3" }, dispatch)).ok).toBe(true);
    expect(await rows.leaseRow(t.db, overdue.id)).toMatchObject({ status: "expired", closedReason: "deadline_passed" });
    expect(await rows.eventKinds(t.db, overdue.id)).toEqual(["expired"]);
    expect(dispatch.closed).toEqual([]);
  });

  it("a refused edit (stale expected_version, dates out of order) withdraws nothing", async () => {
    const alice = await makeUser(t.db, "Alice");
    const inv = await makeInvoice(t.db, alice.id);
    const lease = await seedLease(alice.id, inv.id, "proposed", "60 seconds", { summary: "s", model: "m" });
    const dispatch = recorder();
    expect(
      await updateInvoice(t.db, await asMember(t.db, alice), inv.id, { counterparty: "X", expected_version: inv.version + 5 }, dispatch),
    ).toEqual({
      ok: false,
      code: "invoice_changed",
    });
    expect(await updateInvoice(t.db, await asMember(t.db, alice), inv.id, { due_on: "1999-01-01" }, dispatch)).toEqual({
      ok: false,
      code: "invalid_request",
    });
    const bob = await makeUser(t.db, "Bob");
    expect(await updateInvoice(t.db, await asMember(t.db, bob), inv.id, { counterparty: "Y" }, dispatch)).toEqual({
      ok: false,
      code: "invoice_not_found",
    });
    expect(await rows.leaseRow(t.db, lease.id)).toMatchObject({ status: "proposed" });
    expect(await rows.eventKinds(t.db, lease.id)).toEqual([]);
    expect(dispatch.closed).toEqual([]);
    expect((await rows.invoiceRow(t.db, inv.id)).version).toBe(inv.version);
  });
});

describe("the invoice's history", () => {
  it("every attempt, newest first, paged, with its events and its actor's name; the applied one found with its place", async () => {
    const alice = await makeUser(t.db, "Alice Example");
    const bob = await makeUser(t.db, "Bob");
    const inv = await makeInvoice(t.db, alice.id);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const status = i === 2 ? "applied" : "expired";
      const lease = await seedLease(alice.id, inv.id, status, "60 seconds", status === "applied" ? { summary: "s", model: "m" } : null);
      await t.db
        .update(inferenceLease)
        .set({ createdAt: sql`now() - make_interval(mins => ${60 - i})` })
        .where(eq(inferenceLease.id, lease.id));
      await t.db.insert(leaseEvent).values([
        { leaseId: lease.id, kind: "opened" },
        { leaseId: lease.id, kind: status === "applied" ? "applied" : "expired" },
      ]);
      ids.push(lease.id);
    }
    const first = await invoiceAttempts(t.db, await asMember(t.db, alice), inv.id, { offset: 0, limit: 5 });
    expect(first.total).toBe(7);
    expect(first.attempts.map((a) => a.id)).toEqual(ids.slice(2).reverse());
    expect(first.attempts[0]).toMatchObject({ actorName: "Alice Example", status: "expired" });
    expect(first.attempts[0]!.events.map((e) => e.kind)).toEqual(["opened", "expired"]);
    const second = await invoiceAttempts(t.db, await asMember(t.db, alice), inv.id, { offset: 5, limit: 5 });
    expect(second.attempts.map((a) => a.id)).toEqual(ids.slice(0, 2).reverse());

    const applied = await appliedAttempt(t.db, await asMember(t.db, alice), inv.id);
    expect(applied).toMatchObject({ id: ids[2], actorName: "Alice Example", position: 4 });
    // Someone else's invoice: nothing, as absent as a missing one.
    expect(await invoiceAttempts(t.db, await asMember(t.db, bob), inv.id, { offset: 0, limit: 5 })).toEqual({ total: 0, attempts: [] });
    expect(await appliedAttempt(t.db, await asMember(t.db, bob), inv.id)).toBeNull();
  });
});
