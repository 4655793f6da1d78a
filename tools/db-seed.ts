// `npm run db:seed`: loads the demo users and invoices (idempotent).
import { dbOptionsFromEnv, openDb } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { DEFAULT_SEED_PASSWORD, seedDemo } from "@/db/seed";

const handle = await openDb(dbOptionsFromEnv());
try {
  await migrateDb(handle);
  const { created } = await seedDemo(handle.db, process.env.SEED_PASSWORD ?? DEFAULT_SEED_PASSWORD);
  console.info(created.length ? `seeded ${created.join(", ")}` : "demo data already present");
} finally {
  await handle.close();
}
