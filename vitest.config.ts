import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Two kinds of test need PostgreSQL (tests/README.md): `*.built-app.test.ts` run the built app
// as a second process, which needs a database two processes can share; `*.connections.test.ts`
// need connections PGlite (one, in this process) does not have. The PGlite pass leaves both
// out, and says so.
const onPostgres = Boolean(process.env.DATABASE_URL) && process.env.TEST_DB !== "pglite";
const PG_ONLY = ["tests/integration/**/*.built-app.test.ts", "tests/integration/**/*.connections.test.ts"];
if (!onPostgres && process.argv.some((a) => a.includes("integration"))) {
  console.info(`[vitest] integration on PGlite: ${PG_ONLY.join(", ")} need PostgreSQL (set DATABASE_URL) and are not run in this pass.`);
}

const root = fileURLToPath(new URL(".", import.meta.url));
const alias = {
  "@": root,
  // `server-only` throws outside React Server Components; the domain runs in tests
  // and in the Inngest worker too, so tests resolve it to an empty module.
  "server-only": fileURLToPath(new URL("./tests/support/empty.ts", import.meta.url)),
};

export default defineConfig({
  resolve: { alias },
  test: {
    // postgres.js 3.4.9 throws this from a setImmediate when a backend is killed inside a
    // transaction (porsager/postgres#1208); `next start` logs uncaught exceptions and goes
    // on, and db/client.ts replaces the pool it breaks. tests/integration/faults/db-faults.connections.test.ts
    // kills backends on purpose, so here it is ignored too, and only it.
    onUnhandledError: (error) =>
      !(error.name === "TypeError" && error.message === "Cannot read properties of null (reading 'write')" && /postgres\/src\/connection\.js/.test(error.stack ?? "")),
    projects: [
      // The local Inngest server's own tests (packages/inngest-local/tests), by its own config:
      // `--project inngest-local`.
      "packages/inngest-local",
      {
        resolve: { alias },
        test: { name: "unit", include: ["tests/unit/**/*.test.ts"], environment: "node" },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts"],
          exclude: onPostgres ? [] : PG_ONLY,
          environment: "node",
          globalSetup: ["tests/support/global-setup.ts"],
          setupFiles: ["tests/support/setup-integration.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        resolve: { alias },
        test: {
          // `npm run test:model` (tools/test-model.ts): the model-based test of the lease guarantee.
          name: "model",
          include: ["tests/model/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/support/global-setup.ts"],
          setupFiles: ["tests/support/setup-integration.ts"],
          testTimeout: 0,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
