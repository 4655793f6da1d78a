// What the benchmarks share: their options (`npm run bench <name> -- --key value`), a fresh
// PostgreSQL database on DATABASE_URL (default the local server), migrated, dropped at the end,
// and the long-timeline lease they read.
import postgres from "postgres";
import { eq, sql } from "drizzle-orm";
import { openDb, type Db, type DbHandle } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { loadActorEmail, seedActors } from "@/db/seed";
import { appUser, inferenceLease, invoice } from "@/db/schema";

/** `--name value` from the bench's arguments (after `bench/run.ts <name>`), else `fallback`. */
export function option(name: string, fallback: string): string {
  const args = process.argv.slice(3);
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
}

/**
 * Runs `work` on a fresh, migrated database `<prefix>_<time>` with one seeded actor (one
 * invoice, `password`), then drops it whatever happened.
 */
export async function withOneActorDb<T>(
  prefix: string,
  password: string,
  work: (db: { url: string; handle: DbHandle; email: string; invoiceId: string }) => Promise<T>,
): Promise<T> {
  const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `${prefix}_${Date.now().toString(36)}`;
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const handle = await openDb({ kind: "postgres", url });
  try {
    await migrateDb(handle);
    await seedActors(handle.db, 1, { password, invoicesEach: 1 });
    const email = loadActorEmail(1);
    const [user] = await handle.db.select({ id: appUser.id }).from(appUser).where(eq(appUser.email, email));
    const [inv] = await handle.db.select({ id: invoice.id }).from(invoice).where(eq(invoice.ownerId, user!.id));
    return await work({ url, handle, email, invoiceId: inv!.id });
  } finally {
    await handle.close();
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

/**
 * A closed lease of `actorId`'s on `invoiceId` with `events` events (one `opened`, then
 * `cancel_refused`), as a client retrying Discard would leave it: the long timeline the benches read.
 */
export async function seedLongLease(db: Db, actorId: string, invoiceId: string, events: number): Promise<string> {
  const [lease] = await db
    .insert(inferenceLease)
    .values({
      actorId,
      invoiceId,
      purpose: "summarize_invoice",
      status: "rejected",
      closedReason: "cancelled",
      deadlineAt: sql`now() - interval '1 hour'`,
      invoiceVersion: 1,
    })
    .returning({ id: inferenceLease.id });
  await db.execute(sql`insert into lease_event (lease_id, kind, detail)
    select ${lease!.id}, case when g = 1 then 'opened' else 'cancel_refused' end, '{"status":"rejected"}'::jsonb
    from generate_series(1, ${events}) g`);
  return lease!.id;
}
