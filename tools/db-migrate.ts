// `npm run db:migrate`: applies committed migrations to DATABASE_URL, or to the embedded
// PGlite folder under .data/ when it is unset.
import { dbOptionsFromEnv, openDb } from "@/db/client";
import { migrateDb } from "@/db/migrate";

const handle = await openDb(dbOptionsFromEnv());
try {
  await migrateDb(handle);
  console.info(`migrated (${handle.kind})`);
} finally {
  await handle.close();
}
