import "server-only";
import path from "node:path";
import type { DbHandle } from "./client";

export const MIGRATIONS_FOLDER = path.join(process.cwd(), "db", "migrations");

export async function migrateDb(handle: DbHandle): Promise<void> {
  const config = { migrationsFolder: MIGRATIONS_FOLDER };
  if (handle.kind === "postgres") {
    const { migrate } = await import("drizzle-orm/postgres-js/migrator");
    await migrate(handle.db as never, config);
  } else {
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    await migrate(handle.db as never, config);
  }
}
