// What the benchmarks share: their options (`npm run bench <name> -- --key value`), and a fresh
// PostgreSQL database on DATABASE_URL (default the local server), migrated, dropped at the end.
import postgres from "postgres";
import { eq } from "drizzle-orm";
import { openDb, type DbHandle } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { loadActorEmail, seedActors } from "@/db/seed";
import { appUser, invoice } from "@/db/schema";

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
