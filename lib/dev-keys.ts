// The public dev-only default for the key that encrypts step data at the Inngest server
// (inngest/encryption.ts; lib/env.ts uses it outside production, and refuses it in production).
// A module of its own, without `server-only`, so tools/dev.ts can hand the key the app runs
// with to the local stand-in's dashboard (packages/inngest-local, its display keys).
export const DEV_INNGEST_ENCRYPTION_KEY = "claimcheck-dev-only-inngest-encryption-key-do-not-use-in-production";
