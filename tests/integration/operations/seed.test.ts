// The demo seed: two organizations, a team in one and a lone admin in the other, each member
// owning invoices; a second run changes nothing; a demo user from before organizations (alone in
// one of their own, as the migration leaves them) is moved into the team with their invoices.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countDistinct, eq } from "drizzle-orm";
import { seedDemo } from "@/db/seed";
import { appUser, invoice, membership, organization } from "@/db/schema";
import { listInvoices } from "@/lib/invoices";
import { asMember, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(async () => t?.close());

async function teams() {
  const rows = await t.db
    .select({ org: organization.name, email: appUser.email, role: membership.role })
    .from(membership)
    .innerJoin(organization, eq(organization.id, membership.orgId))
    .innerJoin(appUser, eq(appUser.id, membership.userId))
    .orderBy(organization.name, appUser.email);
  return rows.map((r) => `${r.org}: ${r.email} ${r.role}`);
}

describe("the demo seed", () => {
  it("a demo user from before organizations is moved into the team, with their invoices", async () => {
    // As migration 0006 leaves a user of an older database: alone, admin of an organization of their own.
    const [old] = await t.db.insert(appUser).values({ email: "dave@example.com", name: "Dave Fischer", passwordHash: "x" }).returning();
    await t.db.insert(invoice).values({
      ownerId: old!.id,
      number: "OLD-1",
      counterparty: "Old Co",
      currency: "EUR",
      totalCents: 100,
      issuedOn: "2026-01-01",
      dueOn: "2026-02-01",
    });
    expect(await teams()).toEqual(["Dave Fischer: dave@example.com admin"]);

    const { created } = await seedDemo(t.db, "a demo password");
    expect(created.sort()).toEqual(["alice@example.com", "bob@example.com", "carol@example.com"]);
    expect(await teams()).toEqual([
      "Fabrikam Books: bob@example.com admin",
      "Northwind Finance: alice@example.com admin",
      "Northwind Finance: carol@example.com approver",
      "Northwind Finance: dave@example.com member",
    ]);
    const dave = await asMember(t.db, old!);
    expect((await listInvoices(t.db, dave)).map((i) => i.number)).toContain("OLD-1");
  });

  it("each member owns invoices; the team reads them all, the other organization none", async () => {
    const users = await t.db.select().from(appUser);
    const by = (email: string) => users.find((u) => u.email === email)!;
    const alice = await asMember(t.db, by("alice@example.com"));
    const bob = await asMember(t.db, by("bob@example.com"));
    const [owners] = await t.db.select({ n: countDistinct(invoice.ownerId) }).from(invoice);
    expect(owners!.n).toBe(4);
    const aliceSees = await listInvoices(t.db, alice);
    const bobSees = await listInvoices(t.db, bob);
    expect(new Set(aliceSees.map((i) => i.ownerId)).size).toBe(3);
    expect(bobSees.length).toBe(3);
    expect(bobSees.every((i) => i.ownerId === bob.id)).toBe(true);
    expect(aliceSees.some((i) => bobSees.some((b) => b.id === i.id))).toBe(false);
  });

  it("a second run creates nothing and moves nobody", async () => {
    const before = await teams();
    expect(await seedDemo(t.db, "a demo password")).toEqual({ created: [] });
    expect(await teams()).toEqual(before);
    // Dave's organization from before is gone with its last member and invoice.
    expect((await t.db.select({ name: organization.name }).from(organization)).map((o) => o.name).sort()).toEqual([
      "Fabrikam Books",
      "Northwind Finance",
    ]);
  });
});
