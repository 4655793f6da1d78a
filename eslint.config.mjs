import inngestPlugin from "@inngest/eslint-plugin";
import nextVitals from "eslint-config-next/core-web-vitals";
import tseslint from "typescript-eslint";

// Next.js's own rules (eslint-config-next: React, the hooks rules, accessibility, Core Web
// Vitals) on what Next.js builds; typescript-eslint's parser and rules, below, stay in charge.
const NEXT_FILES = ["app/**/*.{ts,tsx}", "proxy.ts", "instrumentation.ts", "next.config.ts"];

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
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["@/tools/*", "@/tests/*", "**/tools/*", "**/tests/*"], message: "Dev tooling and tests are never imported by the app." }] },
      ],
    },
  },
  {
    files: ["lib/**", "db/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*"], message: "The domain takes an actor id and a db: no Next.js imports below app/." },
            { group: ["@/tools/*", "@/tests/*", "**/tools/*", "**/tests/*"], message: "Dev tooling and tests are never imported by the app." },
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
          selector: "TemplateElement[value.raw=/(insert\\s+into|update|delete\\s+from)\\s+\"?(inference_lease|lease_event)\\b/i]",
          message: "Only lib/leases/ writes leases and their events: call its transitions instead.",
        },
      ],
    },
  },
);
