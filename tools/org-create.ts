// `npm run org:create -- --name NAME --admin-email EMAIL`: a new organization and an invitation
// for its first admin; prints the one-time setup link (the token is not kept: only its sha256).
// The database is the app's (DATABASE_URL, else the dev PGlite folder .data/pglite, which no
// running dev server may hold: db/client.ts refuses it then). The link's origin is APP_URL, else
// http://localhost:$PORT (3000), as `npm run dev` serves.
import { dbOptionsFromEnv, openDb } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { createOrganization, INVITATION_TTL_DAYS, OrgInput } from "@/lib/members";
import { configuredOrigin } from "@/lib/origin";

const USAGE = "usage: npm run org:create -- --name NAME --admin-email EMAIL";

function fail(message: string): never {
  console.error(`org:create: ${message}\n${USAGE}`);
  process.exit(2);
}

const args = process.argv.slice(2);
const given: Record<string, string | undefined> = {};
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
  if (flag !== "--name" && flag !== "--admin-email") fail(`unknown argument ${flag}`);
  given[flag] = inline ?? args[++i];
}
const parsed = OrgInput.safeParse({ name: given["--name"], adminEmail: given["--admin-email"] });
if (!parsed.success) fail("needs a name (1-200 characters) and a valid admin email");

const origin = configuredOrigin() ?? `http://localhost:${process.env.PORT || 3000}`;
const handle = await openDb(dbOptionsFromEnv());
try {
  await migrateDb(handle);
  const result = await createOrganization(handle.db, parsed.data, origin);
  if (!result.ok) fail(`${parsed.data.adminEmail} already has an account (a person belongs to one organization for now)`);
  console.info(`Organization "${parsed.data.name}" created (${result.orgId}).`);
  console.info(`Setup link for ${parsed.data.adminEmail}, admin (shown once, works for ${INVITATION_TTL_DAYS} days, single use):`);
  console.info(result.invitation.url);
} finally {
  await handle.close();
}
