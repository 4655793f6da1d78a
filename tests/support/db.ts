import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import { asc, eq, sql } from "drizzle-orm";
import postgres from "postgres";
import { openDb, type Db, type DbHandle } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { appUser, inferenceLease, invoice, invoiceLine, leaseEvent, membership } from "@/db/schema";
import type { Member } from "@/lib/access";
import type { Role } from "@/lib/org-codes";
import { hashPassword } from "@/lib/password";
import { PASSWORD } from "../harness/users";

export type TestDb = DbHandle & { name: string };

/**
 * A database of this test file's own: a clone of the run's migrated template on
 * PostgreSQL, or a fresh in-memory PGlite. It also becomes the app's database, so the route
 * handlers under test use it.
 */
export async function openTestDb(): Promise<TestDb> {
  let handle: DbHandle;
  let name: string;
  let drop = async () => {};
  if (inject("dbKind") === "postgres") {
    const template = inject("pgTemplate");
    name = `cc_t_${template.slice(7)}_${randomUUID().slice(0, 8)}`;
    const admin = postgres(inject("pgAdminUrl"), { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name} template ${template}`);
    const url = new URL(inject("pgAdminUrl"));
    url.pathname = `/${name}`;
    handle = await openDb({ kind: "postgres", url: url.toString(), max: 30 });
    drop = async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    };
  } else {
    name = "pglite-memory";
    handle = await openDb({ kind: "pglite", dataDir: null });
    await migrateDb(handle);
  }
  (globalThis as { __claimcheckDb?: Promise<DbHandle> }).__claimcheckDb = Promise.resolve(handle);
  return {
    ...handle,
    name,
    async close() {
      await handle.close();
      await drop();
    },
  };
}

export { PASSWORD };
let passwordHash: Promise<string> | undefined;

/**
 * The user as lib/access.ts's rules see them: their organization (for a user made by makeUser,
 * one of their own, as admin) and role there.
 */
export async function asMember(db: Db, user: { id: string }): Promise<Member> {
  const [row] = await db.select({ orgId: membership.orgId, role: membership.role }).from(membership).where(eq(membership.userId, user.id));
  return { id: user.id, orgId: row!.orgId, role: row!.role };
}

/**
 * Puts `user` in `teammate`'s organization, with `role`, as their only one: their own
 * organization's membership goes, and their sessions move with them. (The app does this by
 * invitation; a test that needs two people on one team makes them so.)
 */
export async function joinOrgOf(db: Db, user: { id: string }, teammate: { id: string }, role: Role = "member"): Promise<Member> {
  const { orgId } = await asMember(db, teammate);
  await db.delete(membership).where(eq(membership.userId, user.id));
  await db.insert(membership).values({ orgId, userId: user.id, role });
  await db.execute(sql`update app_session set org_id = ${orgId} where user_id = ${user.id}`);
  await db.execute(sql`update invoice set org_id = ${orgId} where owner_id = ${user.id}`);
  return { id: user.id, orgId, role };
}

export async function makeUser(db: Db, name = "User") {
  passwordHash ??= hashPassword(PASSWORD);
  const email = `${name.toLowerCase().replace(/\W+/g, "-")}-${randomUUID().slice(0, 8)}@example.test`;
  const [row] = await db
    .insert(appUser)
    .values({ email, name, passwordHash: await passwordHash })
    .returning();
  // An organization of their own, as admin (user_home_org, migration 0006), as a user seeded
  // by hand gets on first need: each test user is alone unless a test adds them to another.
  await db.execute(sql`select user_home_org(${row!.id})`);
  return row!;
}

export async function makeInvoice(db: Db, ownerId: string, overrides: Partial<typeof invoice.$inferInsert> = {}) {
  const lines = [
    { description: "Consulting, November", quantity: 10, unitPriceCents: 120000 },
    { description: "Travel expenses", quantity: 1, unitPriceCents: 34550 },
  ];
  const [row] = await db
    .insert(invoice)
    .values({
      ownerId,
      number: `INV-${randomUUID().slice(0, 6)}`,
      counterparty: "Northwind Traders",
      currency: "EUR",
      totalCents: lines.reduce((s, l) => s + l.quantity * l.unitPriceCents, 0),
      issuedOn: "2026-11-01",
      dueOn: "2026-12-01",
      ...overrides,
    })
    .returning();
  await db.insert(invoiceLine).values(lines.map((l, position) => ({ ...l, position, invoiceId: row!.id })));
  return row!;
}

// Reading back what a test did, straight from the database.

export async function leaseRow(db: Db, id: string) {
  const [row] = await db.select().from(inferenceLease).where(eq(inferenceLease.id, id));
  return row!;
}

export async function invoiceRow(db: Db, id: string) {
  const [row] = await db.select().from(invoice).where(eq(invoice.id, id));
  return row!;
}

/** The lease's timeline, oldest first. */
export async function leaseEvents(db: Db, leaseId: string) {
  return db
    .select({ kind: leaseEvent.kind, detail: leaseEvent.detail })
    .from(leaseEvent)
    .where(eq(leaseEvent.leaseId, leaseId))
    .orderBy(asc(leaseEvent.id));
}

export async function eventKinds(db: Db, leaseId: string) {
  return (await leaseEvents(db, leaseId)).map((e) => e.kind);
}
