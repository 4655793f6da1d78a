// The demo's logins, in one place for the seed (db/seed.ts, tools/db-seed.ts), `npm run dev`
// (tools/dev.ts) and the sign-in page in development. No server-only import: tools/dev.ts
// runs without the react-server condition and must be able to read it.

/** The password every demo user gets unless SEED_PASSWORD says otherwise. */
export const DEFAULT_SEED_PASSWORD = "claimcheck-demo";

/** The demo's organizations: a team, and a second organization to show that nothing crosses. */
export const DEMO_ORGS = ["Northwind Finance", "Fabrikam Books"] as const;

/** The demo users, as the seed creates them, with their organization and role (their invoices are in db/seed.ts). */
export const DEMO_USERS = [
  { email: "alice@example.com", name: "Alice Martin", org: "Northwind Finance", role: "admin" },
  { email: "bob@example.com", name: "Bob Okafor", org: "Fabrikam Books", role: "admin" },
  { email: "carol@example.com", name: "Carol Nguyen", org: "Northwind Finance", role: "approver" },
  { email: "dave@example.com", name: "Dave Fischer", org: "Northwind Finance", role: "member" },
] as const;

/** The demo users' password: SEED_PASSWORD when set and not blank, else the default. */
export function demoPassword(env: Record<string, string | undefined> = process.env): string {
  return env.SEED_PASSWORD?.trim() ? env.SEED_PASSWORD : DEFAULT_SEED_PASSWORD;
}
