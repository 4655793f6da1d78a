// The two app servers of the run and how their leases behave (see global-setup.ts).
export const SERVERS = {
  main: { LEASE_TTL_SECONDS: "60", MODEL_LATENCY_MS: "3000" },
  // The short server's model cannot be stopped (MODEL_IGNORE_ABORT), so its answer after
  // the deadline arrives and is shown as a late completion.
  short: { LEASE_TTL_SECONDS: "4", MODEL_LATENCY_MS: "4500", MODEL_IGNORE_ABORT: "1" },
} as const;
export type ServerName = keyof typeof SERVERS;

export const DEMO_PASSWORD = process.env.SEED_PASSWORD ?? "claimcheck-demo";
export const ALICE = "alice@example.com";
export const BOB = "bob@example.com";
/** The seeded Northwind member (db/demo.ts): Alice's teammate. */
export const DAVE = "dave@example.com";
