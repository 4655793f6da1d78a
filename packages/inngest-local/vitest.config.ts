import { defineProject } from "vitest/config";

// The package's own tests: the stand-in against apps served by the pinned SDK, over loopback
// HTTP. No database. `npm test` runs them as the `inngest-local` project of the root config.
export default defineProject({
  test: {
    name: "inngest-local",
    include: ["tests/**/*.test.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
