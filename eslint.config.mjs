import inngestPlugin from "@inngest/eslint-plugin";
import tseslint from "typescript-eslint";

// The import rules' patterns, composed per folder below.
const DEV_ONLY = {
  group: ["@/tools/*", "@/tests/*", "**/tools/*", "**/tests/*"],
  message: "Dev tooling and tests are never imported by the app.",
};
const NO_APP = {
  regex: "^(@/|(\\.\\./)+)app(/|$)",
  message: "Only app/ imports app/: move what lib/, inngest/ or db/ needs from it under lib/.",
};
const NO_NEXT = { group: ["next", "next/*"], message: "The domain takes an actor id and a db: no Next.js imports below app/." };
/** The modules of lib/ that db/ may import: each imports nothing of ours. */
const DB_LEAVES = ["log", "pid", "password", "lease-codes"];
const DB_ONLY_LEAVES = [
  {
    regex: `^@/(?!db/|lib/(${DB_LEAVES.join("|")})$)`,
    message: `db/ is the bottom layer: it imports only itself and lib/{${DB_LEAVES.join(",")}} (decision 0052).`,
  },
  {
    regex: `^\\.\\./(?!lib/(${DB_LEAVES.join("|")})$)`,
    message: `db/ is the bottom layer: it imports only itself and lib/{${DB_LEAVES.join(",")}} (decision 0052).`,
  },
];
const LEAF = {
  regex: "^(@/|\\.)",
  message: "db/ imports this module: it imports nothing of ours, so no cycle can run through it (decision 0052).",
};

export default tseslint.config(
  { ignores: ["node_modules/", ".next*/", ".data/", "test-results/", "playwright-report/", "next-env.d.ts", "bench/results/"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // Test helpers parse JSON of many shapes; production code keeps to unknown.
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    // Inngest's own rules (send awaited, no step inside a step, no variable mutated inside a
    // step), wherever the SDK is used; as errors, since each is a bug in a durable function.
    files: ["app/**", "lib/**", "inngest/**", "tests/**"],
    plugins: { "@inngest": inngestPlugin },
    rules: Object.fromEntries(Object.keys(inngestPlugin.configs.recommended.rules).map((rule) => [rule, "error"])),
  },
  {
    files: ["app/**", "lib/**", "db/**", "inngest/**"],
    rules: { "@typescript-eslint/no-explicit-any": "error" },
  },
  // Which layer may import which (docs/decisions/0052-import-rules-by-layer.md). Bottom up: db/
  // (schema, connection, seed), lib/ (the domain), inngest/ (background functions), app/ (pages,
  // routes, actions). A layer never imports one above it, so a background function or a test
  // can load the domain without the web layer. One block per folder, since a file's last
  // matching no-restricted-imports replaces the earlier ones rather than adding to them.
  //   app/      anything of ours but tools/ and tests/.
  //   inngest/  lib/ and db/; never app/ (a background job must not depend on the web layer).
  //             Next.js's own `after` it may (inngest/dispatch.ts sends events after the answer).
  //   lib/      db/ and itself; never app/, never Next.js (the domain takes an actor id and a db).
  //   db/       only its own files and four leaves of lib/ that import nothing of ours:
  //             lib/log (the client logs), lib/pid (PGlite's folder lock), lib/password (the
  //             seed hashes the demo users' passwords), lib/lease-codes (the lease columns'
  //             types, check constraint and partial indexes). Anything more of lib/ would make
  //             db/ depend on the domain that depends on it.
  //   those four leaves: nothing of ours at all, so db/ -> leaf -> db/ cannot close a cycle.
  {
    files: ["app/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [DEV_ONLY] }] },
  },
  {
    files: ["inngest/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [DEV_ONLY, NO_APP] }] },
  },
  {
    files: ["lib/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [DEV_ONLY, NO_APP, NO_NEXT] }] },
  },
  {
    files: ["db/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [NO_NEXT, ...DB_ONLY_LEAVES] }] },
  },
  {
    files: DB_LEAVES.map((leaf) => `lib/${leaf}.ts`),
    rules: { "no-restricted-imports": ["error", { patterns: [DEV_ONLY, NO_APP, NO_NEXT, LEAF] }] },
  },
  {
    // The lease module's boundary: only lib/leases/ writes inference_lease or lease_event, so
    // every transition keeps its conditional statement, its event and the database clock.
    files: ["app/**", "lib/**", "db/**", "inngest/**"],
    ignores: ["lib/leases/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name=/^(insert|update|delete)$/][arguments.0.name=/^(inferenceLease|leaseEvent)$/]",
          message: "Only lib/leases/ writes leases and their events: call its transitions instead.",
        },
        {
          selector: "TemplateElement[value.raw=/(insert\\s+into|update|delete\\s+from)\\s+\"?(inference_lease|lease_event)\\b/i]",
          message: "Only lib/leases/ writes leases and their events: call its transitions instead.",
        },
      ],
    },
  },
);
