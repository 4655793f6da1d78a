import inngestPlugin from "@inngest/eslint-plugin";
import nextVitals from "eslint-config-next/core-web-vitals";
import tseslint from "typescript-eslint";

// The local Inngest server, a workspace package: by its name or by a path into its folder.
const LOCAL_INNGEST = [
  "@claimcheck/inngest-local",
  "@claimcheck/inngest-local/*",
  "@/packages/*",
  "**/packages/inngest-local",
  "**/packages/inngest-local/*",
];
const ONE_DOOR = "Import the local Inngest server by its package name only, @claimcheck/inngest-local: its index.ts is the one door.";
const STANDS_ALONE = "packages/inngest-local stands alone: it imports nothing from the app, its tests or its tools.";
// Next.js's own rules (eslint-config-next: React, the hooks rules, accessibility, Core Web
// Vitals) on what Next.js builds; typescript-eslint's parser and rules, below, stay in charge.
const NEXT_FILES = ["app/**/*.{ts,tsx}", "proxy.ts", "instrumentation.ts", "next.config.ts"];

// The layers' import rules' patterns, composed per folder below (docs/decisions/0058).
const DEV_ONLY = {
  group: ["@/tools/*", "@/tests/*", "@/bench/*", "**/tools/*", "**/tests/*", "**/bench/*", ...LOCAL_INNGEST],
  message: "Dev tooling, tests and benchmarks are never imported by the app.",
};
const NO_APP = {
  regex: "^(@/|(\\.\\./)+)app(/|$)",
  message: "Only app/ imports app/: move what lib/, inngest/ or db/ needs from it under lib/.",
};
const NO_NEXT = { group: ["next", "next/*"], message: "The domain takes an actor id and a db: no Next.js imports below app/." };
/** The modules of lib/ that db/ may import: each imports nothing of ours. */
const DB_LEAVES = ["log", "log-context", "pid", "password", "lease-codes", "org-codes"];
const DB_IMPORTS = `db/ is the bottom layer: it imports only itself and lib/{${DB_LEAVES.join(",")}} (decision 0058).`;
// Beside DEV_ONLY, which says its own words for tools/, tests/, bench/ and packages/.
const NOT_DB = `(?!db/|lib/(${DB_LEAVES.join("|")})$|tools/|tests/|bench/|packages/)`;
const DB_ONLY_LEAVES = [
  { regex: `^@/${NOT_DB}`, message: DB_IMPORTS },
  { regex: `^(\\.\\./)+(?!\\.\\./)${NOT_DB}`, message: DB_IMPORTS },
];
const LEAF = {
  regex: `^(?!(\\./|@/lib/)(${DB_LEAVES.join("|")})$)(@/|\\.)`,
  message:
    "db/ imports this module: it imports nothing of ours but the other leaves db/ may import, so no cycle can run through it (decision 0058).",
};

export default tseslint.config(
  { ignores: ["node_modules/", ".next*/", ".data/", "test-results/", "playwright-report/", "next-env.d.ts", "bench/results/"] },
  ...nextVitals.map((config) => ({ ...config, files: NEXT_FILES })),
  // A missing dependency is a stale value in a render: an error, as every other hooks rule is.
  { files: NEXT_FILES, rules: { "react-hooks/exhaustive-deps": "error" } },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // Test helpers parse JSON of many shapes; production code keeps to unknown.
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    // Outside the package, no deep import (app/, lib/, db/ and inngest/ refuse it whole, below).
    ignores: ["packages/inngest-local/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@claimcheck/inngest-local/*", "@/packages/*", "**/packages/inngest-local", "**/packages/inngest-local/*"],
              message: ONE_DOOR,
            },
          ],
        },
      ],
    },
  },
  {
    // Inside it, nothing from outside its folder (the root's `@/` alias included).
    files: ["packages/inngest-local/*"],
    rules: { "no-restricted-imports": ["error", { patterns: [{ group: ["@/*", "../*"], message: STANDS_ALONE }] }] },
  },
  {
    files: ["packages/inngest-local/tests/**", "packages/inngest-local/executor/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [{ group: ["@/*", "../../*"], message: STANDS_ALONE }] }] },
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
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "no-restricted-imports": ["error", { patterns: [DEV_ONLY] }],
    },
  },
  {
    // One door from the web layer to the writes that tell the generation (open, cancel, sign-out,
    // an edit): app/_lib/leases.ts binds them to the Inngest dispatch; nothing else in app/
    // imports the dispatch or the domain's versions that take one.
    // docs/decisions/0054-route-refusals-and-one-door-to-the-dispatch.md.
    files: ["app/**"],
    ignores: ["app/_lib/leases.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "@/lib/leases",
              importNames: ["openLease", "cancelLease", "revokeSession", "revokeAllSessions"],
              message: "These take a dispatch: import them (or openLeaseAs) from @/app/_lib/leases.",
            },
            { name: "@/lib/invoices", importNames: ["updateInvoice"], message: "It takes a dispatch: import it from @/app/_lib/leases." },
            { name: "@/lib/members", importNames: ["removeMember"], message: "It takes a dispatch: import it from @/app/_lib/leases." },
          ],
          patterns: [
            { group: ["@/inngest/dispatch", "**/inngest/dispatch"], message: "app/ reaches the dispatch through @/app/_lib/leases only." },
            { group: ["@/lib/leases/*", "**/lib/leases/*"], message: "The lease module is imported by its index, @/lib/leases." },
            DEV_ONLY,
          ],
        },
      ],
    },
  },
  // Which layer may import which (docs/decisions/0058-import-rules-by-layer.md). Bottom up: db/
  // (schema, connection, seed), lib/ (the domain), inngest/ (background functions), app/ (pages,
  // routes, actions). A layer never imports one above it, so a background function or a test
  // can load the domain without the web layer. One block per folder, since a file's last
  // matching no-restricted-imports replaces the earlier ones rather than adding to them.
  //   app/      anything of ours but tools/, tests/ and bench/ (and the dispatch's one door, above).
  //   inngest/  lib/ and db/; never app/ (a background job must not depend on the web layer).
  //             Next.js's own `after` it may (inngest/dispatch.ts sends events after the answer).
  //   lib/      db/ and itself; never app/, never Next.js (the domain takes an actor id and a db).
  //   db/       only its own files and five leaves of lib/ that import nothing of ours but each other:
  //             lib/log (the client logs) and lib/log-context (the request's ids it logs with), lib/pid (PGlite's folder lock), lib/password (the
  //             seed hashes the demo users' passwords), lib/lease-codes (the lease columns'
  //             types, check constraint and partial indexes). Anything more of lib/ would make
  //             db/ depend on the domain that depends on it.
  //   those five leaves: nothing of ours but each other, so db/ -> leaf -> db/ cannot close a cycle.
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
    rules: { "no-restricted-imports": ["error", { patterns: [DEV_ONLY, NO_NEXT, ...DB_ONLY_LEAVES] }] },
  },
  {
    files: DB_LEAVES.map((leaf) => `lib/${leaf}.ts`),
    rules: { "no-restricted-imports": ["error", { patterns: [DEV_ONLY, NO_APP, NO_NEXT, LEAF] }] },
  },
  {
    // bench/ shares the tests' harness (tests/harness/: the built app, its client, the fake
    // model; docs/decisions/0052-one-harness-for-tests-and-bench.md) and nothing else of tests/.
    files: ["bench/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(@/|(\\.\\./)+)tests/(?!harness/)",
              message: "bench/ imports tests/ only through tests/harness/ (the rest of tests/ is vitest's).",
            },
          ],
        },
      ],
    },
  },
  {
    // The harness runs outside vitest too (bench/ is plain tsx programs): no vitest, and nothing
    // of tests/ outside the harness.
    files: ["tests/harness/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["vitest", "vitest/*", "@vitest/*"], message: "tests/harness/ runs outside vitest too (bench/): no vitest here." },
            { regex: "^(\\.\\./|@/tests/(?!harness/))", message: "tests/harness/ imports nothing of tests/ outside itself." },
          ],
        },
      ],
    },
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
          selector: 'TemplateElement[value.raw=/(insert\\s+into|update|delete\\s+from)\\s+"?(inference_lease|lease_event)\\b/i]',
          message: "Only lib/leases/ writes leases and their events: call its transitions instead.",
        },
      ],
    },
  },
);
