// The demo's logins, in one place for the seed (db/seed.ts, tools/db-seed.ts), `npm run dev`
// (tools/dev.ts) and the sign-in page in development. No server-only import: tools/dev.ts
// runs without the react-server condition and must be able to read it.

/** The password every demo user gets unless SEED_PASSWORD says otherwise. */
export const DEFAULT_SEED_PASSWORD = "claimcheck-demo";

/** The demo users, as the seed creates them (their invoices are in db/seed.ts). */
export const DEMO_USERS = [
  { email: "alice@example.com", name: "Alice Martin" },
  { email: "bob@example.com", name: "Bob Okafor" },
] as const;

/** The demo users' password: SEED_PASSWORD when set and not blank, else the default. */
export function demoPassword(env: Record<string, string | undefined> = process.env): string {
  return env.SEED_PASSWORD?.trim() ? env.SEED_PASSWORD : DEFAULT_SEED_PASSWORD;
}
