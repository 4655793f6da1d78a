// The history and the teammate view name each attempt's purpose: invoiceAttempts, the timeline
// and teammateLeasesInFlight carry it, and appliedAttempt ("which attempt wrote the summary on
// the invoice") is the summary's alone, however many reviews or categorizations were applied after.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease, leaseEvent } from "@/db/schema";
import { appliedAttempt, invoiceAttempts, invoiceTimeline, teammateLeaseInFlight, teammateLeasesInFlight } from "@/lib/leases";
import { asMember, joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import type { Purpose } from "@/lib/purposes";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

/** A lease of `purpose`, requested `minutesAgo`, with its opened event and, when applied, its applied event. */
async function seedLease(actorId: string, invoiceId: string, purpose: Purpose, status: string, minutesAgo: number) {
  const [row] = await t.db
    .insert(inferenceLease)
    .values({ actorId, invoiceId, purpose, status: status as never, deadlineAt: sql`now() + interval '60 seconds'` })
    .returning();
  await t.db
    .update(inferenceLease)
    .set({ createdAt: sql`now() - make_interval(mins => ${minutesAgo})` })
    .where(eq(inferenceLease.id, row!.id));
  await t.db.insert(leaseEvent).values({ leaseId: row!.id, kind: "opened" });
  if (status === "applied") {
    // The applied event's time is when it was applied: `minutesAgo` less one.
    await t.db.insert(leaseEvent).values({ leaseId: row!.id, kind: "applied", at: sql`now() - make_interval(mins => ${minutesAgo - 1})` });
  }
  return row!.id;
}

describe("attempts carry their purpose", () => {
  it("invoiceAttempts and the timeline name each attempt's purpose; appliedAttempt is the summary's, not a later applied review", async () => {
    const alice = await makeUser(t.db, "Alice Purpose");
    const inv = await makeInvoice(t.db, alice.id);
    const summary = await seedLease(alice.id, inv.id, "summarize_invoice", "applied", 30);
    const review = await seedLease(alice.id, inv.id, "review_invoice", "applied", 20);
    const categories = await seedLease(alice.id, inv.id, "categorize_lines", "applied", 10);
    const member = await asMember(t.db, alice);

    const { attempts } = await invoiceAttempts(t.db, member, inv.id, { offset: 0, limit: 5 });
    expect(attempts.map((a) => [a.id, a.purpose])).toEqual([
      [categories, "categorize_lines"],
      [review, "review_invoice"],
      [summary, "summarize_invoice"],
    ]);
    const timeline = await invoiceTimeline(t.db, member, inv.id, { offset: 0, limit: 10 });
    const numbered = timeline!.entries.flatMap((e) => (e.type === "attempt" ? [[e.attempt.purpose, e.attempt.number]] : []));
    // Each purpose counts its own attempts (decision 0071, amended): the first of each is 1, so a
    // number names an attempt together with its purpose (history.test.ts: a purpose's second).
    expect(numbered).toEqual([
      ["categorize_lines", 1],
      ["review_invoice", 1],
      ["summarize_invoice", 1],
    ]);

    // The review and the categories were applied later, but only the summary's apply wrote the summary.
    expect(await appliedAttempt(t.db, member, inv.id)).toMatchObject({ id: summary, number: 1, position: 2 });
  });

  it("appliedAttempt is null when only a review was applied", async () => {
    const alice = await makeUser(t.db, "Alice Review Only");
    const inv = await makeInvoice(t.db, alice.id);
    await seedLease(alice.id, inv.id, "review_invoice", "applied", 5);
    expect(await appliedAttempt(t.db, await asMember(t.db, alice), inv.id)).toBeNull();
  });
});

describe("a teammate's leases in flight", () => {
  it("one per purpose in flight, each with its purpose, newest first; never the viewer's own or a closed one", async () => {
    const alice = await makeUser(t.db, "Alice Owner");
    const dave = await makeUser(t.db, "Dave Teammate");
    const daveMember = await joinOrgOf(t.db, dave, alice);
    const inv = await makeInvoice(t.db, alice.id);
    expect(await teammateLeasesInFlight(t.db, daveMember, inv.id)).toEqual([]);

    await seedLease(alice.id, inv.id, "summarize_invoice", "proposed", 3);
    await seedLease(alice.id, inv.id, "review_invoice", "open", 2);
    await seedLease(alice.id, inv.id, "categorize_lines", "expired", 1);
    const leases = await teammateLeasesInFlight(t.db, daveMember, inv.id);
    expect(leases.map((l) => [l.actorName, l.purpose, l.status])).toEqual([
      ["Alice Owner", "review_invoice", "open"],
      ["Alice Owner", "summarize_invoice", "proposed"],
    ]);
    // Nothing of the proposal or the lease's id.
    expect(Object.keys(leases[0]!).sort()).toEqual(["actorName", "deadlineAt", "now", "purpose", "status"]);
    // The API's one teammate lease is the newest, with its purpose.
    expect(await teammateLeaseInFlight(t.db, daveMember, inv.id)).toMatchObject({ purpose: "review_invoice", status: "open" });
    // The owner has no teammate leases on their own invoice's leases.
    expect(await teammateLeasesInFlight(t.db, await asMember(t.db, alice), inv.id)).toEqual([]);
    // Another organization's member sees none.
    const eve = await makeUser(t.db, "Eve Outsider");
    expect(await teammateLeasesInFlight(t.db, await asMember(t.db, eve), inv.id)).toEqual([]);
  });
});
