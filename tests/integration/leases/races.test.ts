// Races, 50 rounds each. On PostgreSQL these are real concurrent transactions on a pool of
// connections; on PGlite (one connection) they interleave at statement boundaries.
import { TERMINAL_STATUSES, type EventKind } from "@/lib/lease-codes";
import { eq, inArray, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease, invoice, leaseEvent } from "@/db/schema";
import { applyLease, cancelLease, expireOverdue, openLease, readLease, revokeSession, type LeaseDispatch } from "@/lib/leases";
import { signIn } from "@/lib/sessions";
import { api, signInCookie } from "../../support/api";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

const ROUNDS = 50;
/** The transitions the race can end in, and the status each leaves. */
const STATUS_AFTER: Partial<Record<EventKind, string>> = { applied: "applied", cancelled: "rejected", expired: "expired" };

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

const quiet: LeaseDispatch = { leaseOpened: async () => {}, leaseClosed: async () => {} };

describe(`races (${ROUNDS} rounds each)`, () => {
  it("apply vs cancel vs expiry on one lease: exactly one terminal outcome; the invoice written only when applied", async () => {
    const alice = await makeUser(t.db, "Alice");
    const outcomes: Record<string, number> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const inv = await makeInvoice(t.db, alice.id);
      // Deadlines straddle "now": some already passed, some passing during the race, some not.
      const offsetMs = (round % 5) * 10 - 15;
      const [lease] = await t.db
        .insert(inferenceLease)
        .values({
          actorId: alice.id,
          invoiceId: inv.id,
          purpose: "summarize_invoice",
          status: "proposed",
          deadlineAt: sql`now() + make_interval(secs => ${offsetMs / 1000})`,
          proposal: { summary: `Summary ${round}`, model: "test" },
        })
        .returning();
      const results = await Promise.allSettled([
        applyLease(t.db, alice.id, lease!.id),
        cancelLease(t.db, alice.id, lease!.id, quiet),
        expireOverdue(t.db, 50),
        readLease(t.db, alice.id, lease!.id),
      ]);
      for (const r of results) expect(r.status).toBe("fulfilled");

      const [row] = await t.db.select().from(inferenceLease).where(eq(inferenceLease.id, lease!.id));
      const [invRow] = await t.db.select().from(invoice).where(eq(invoice.id, inv.id));
      const events = await t.db.select({ kind: leaseEvent.kind }).from(leaseEvent).where(eq(leaseEvent.leaseId, lease!.id));
      const transitions = events.map((e) => e.kind).filter((k) => k in STATUS_AFTER);

      expect(TERMINAL_STATUSES).toContain(row!.status);
      expect(transitions).toHaveLength(1);
      expect(STATUS_AFTER[transitions[0]!]).toBe(row!.status);
      if (row!.status === "applied") {
        expect(invRow).toMatchObject({ summary: `Summary ${round}`, version: inv.version + 1 });
        expect(results[0]).toMatchObject({ value: { ok: true } });
      } else {
        expect(invRow).toMatchObject({ summary: null, version: inv.version });
      }
      outcomes[row!.status] = (outcomes[row!.status] ?? 0) + 1;
    }
    console.info(`[${t.kind}] apply/cancel/expiry outcomes over ${ROUNDS} rounds:`, outcomes);
  });

  it("ten parallel opens for one invoice: one lease, every response carrying its id", async () => {
    const alice = await makeUser(t.db, "Alice");
    const cookie = await signInCookie(alice.email);
    for (let round = 0; round < ROUNDS; round++) {
      const inv = await makeInvoice(t.db, alice.id);
      const responses = await Promise.all(
        Array.from({ length: 10 }, () =>
          api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } }),
        ),
      );
      const rows = await t.db.select().from(inferenceLease).where(eq(inferenceLease.invoiceId, inv.id));
      expect(rows).toHaveLength(1);
      expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
      expect(responses.filter((r) => r.status === 200)).toHaveLength(9);
      for (const r of responses) expect(r.body).toMatchObject({ lease_id: rows[0]!.id, status: "open" });
    }
  });

  it("twenty parallel applies of one proposed lease: one 200, the invoice written once", async () => {
    const alice = await makeUser(t.db, "Alice");
    const cookie = await signInCookie(alice.email);
    for (let round = 0; round < ROUNDS; round++) {
      const inv = await makeInvoice(t.db, alice.id);
      const opened = await api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
      await t.db
        .update(inferenceLease)
        .set({ status: "proposed", proposal: { summary: `Once ${round}`, model: "test" } })
        .where(eq(inferenceLease.id, opened.body.lease_id));
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => api("POST", `/api/leases/${opened.body.lease_id}/apply`, { cookie })),
      );
      expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of responses.filter((r) => r.status !== 200)) expect(r).toMatchObject({ status: 409, body: { detail: "lease_applied" } });
      const [invRow] = await t.db.select().from(invoice).where(eq(invoice.id, inv.id));
      expect(invRow).toMatchObject({ summary: `Once ${round}`, version: inv.version + 1 });
      const applied = await t.db
        .select()
        .from(leaseEvent)
        .where(sql`${leaseEvent.leaseId} = ${opened.body.lease_id} and ${inArray(leaseEvent.kind, ["applied"])}`);
      expect(applied).toHaveLength(1);
    }
  });

  it("sign-out vs open in the same session: no lease of that session is left in flight", async () => {
    const alice = await makeUser(t.db, "Alice");
    const outcomes: Record<string, number> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const inv = await makeInvoice(t.db, alice.id);
      const session = await signIn(t.db, alice.email, PASSWORD);
      if (!session.ok) throw new Error("sign-in failed");
      const [opened, signedOut] = await Promise.all([
        openLease(t.db, { actorId: alice.id, sessionId: session.sessionId, invoiceId: inv.id, purpose: "summarize_invoice", ttlSeconds: 90 }, quiet),
        revokeSession(t.db, { actorId: alice.id, sessionId: session.sessionId }, quiet),
      ]);
      const rows = await t.db.select().from(inferenceLease).where(eq(inferenceLease.invoiceId, inv.id));
      // Either the open lost (refused: the session had ended) or it won and sign-out closed its lease.
      if (opened.ok) {
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ status: "rejected", closedReason: "signed_out" });
        expect(signedOut.revoked).toEqual([rows[0]!.id]);
      } else {
        expect(opened.code).toBe("not_signed_in");
        expect(rows).toHaveLength(0);
      }
      const key = opened.ok ? "opened, then revoked" : "refused";
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    console.info(`[${t.kind}] sign-out vs open outcomes over ${ROUNDS} rounds:`, outcomes);
  });
});
