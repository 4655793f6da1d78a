// `npm run db:seed`: loads the demo users and invoices (idempotent).
// `npm run db:seed -- --actors N [--invoices K]` (or SEED_ACTORS=N) also adds N load-test
// actors, load-0001@example.test and on, with K invoices each (default 3), same password.
import { dbOptionsFromEnv, openDb } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { demoPassword } from "@/db/demo";
import { seedActors, seedDemo } from "@/db/seed";

function count(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > 100_000) {
    console.error(`db:seed: ${name} needs a whole number up to 100000 (got ${JSON.stringify(value)})`);
    process.exit(2);
  }
  return Number(value);
}

const args = process.argv.slice(2);
let actors = count("SEED_ACTORS", process.env.SEED_ACTORS || undefined);
let invoicesEach: number | undefined;
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
  const value = () => inline ?? args[++i];
  if (flag === "--actors") actors = count(flag, value());
  else if (flag === "--invoices") invoicesEach = count(flag, value());
  else {
    console.error(`db:seed: unknown argument ${flag}\nusage: npm run db:seed -- [--actors N] [--invoices K]`);
    process.exit(2);
  }
}

const password = demoPassword();
const handle = await openDb(dbOptionsFromEnv());
try {
  await migrateDb(handle);
  const { created } = await seedDemo(handle.db, password);
  console.info(created.length ? `seeded ${created.join(", ")}` : "demo data already present");
  if (actors) {
    const result = await seedActors(handle.db, actors, { password, invoicesEach });
    console.info(`load actors: ${result.created} created, ${actors - result.created} already present (load-0001@example.test ... )`);
  }
} finally {
  await handle.close();
}
