// `npm test`: everything a contributor must keep green, in order, stopping at the first red.
// Integration runs on embedded PGlite always, and on PostgreSQL when DATABASE_URL is set.
// `npm run check` (--check): the inner loop only: types, lint, unit, integration on PGlite.
import { spawnSync } from "node:child_process";

type Step = { name: string; cmd: string[]; env?: Record<string, string> };
const bin = (name: string) => `node_modules/.bin/${name}`;
const steps: Step[] = [
  { name: "types", cmd: [bin("tsc"), "--noEmit"] },
  { name: "lint", cmd: [bin("eslint"), "."] },
  { name: "unit", cmd: [bin("vitest"), "run", "--project", "unit"] },
  { name: "integration (PGlite)", cmd: [bin("vitest"), "run", "--project", "integration"], env: { TEST_DB: "pglite" } },
];
if (process.argv.includes("--check")) runAndExit(steps);
// The model-based test of the lease guarantee (tests/model): random schedules, shrunk on failure.
steps.push({ name: "model (PGlite, 60 schedules)", cmd: [bin("vitest"), "run", "--project", "model"], env: { TEST_DB: "pglite", MODEL_RUNS: "60" } });
if (process.env.DATABASE_URL) {
  steps.push({ name: "integration (PostgreSQL)", cmd: [bin("vitest"), "run", "--project", "integration"], env: { TEST_DB: "postgres" } });
  steps.push({ name: "model (PostgreSQL, 500 schedules)", cmd: [bin("vitest"), "run", "--project", "model"], env: { TEST_DB: "postgres", MODEL_RUNS: "500" } });
} else {
  console.info("\n[test] DATABASE_URL is not set: integration runs on PGlite only (CI sets it, and runs both).\n");
}
steps.push({ name: "e2e (Chromium)", cmd: [bin("playwright"), "test"] });

runAndExit(steps);

function runAndExit(steps: Step[]): never {
  const timings: string[] = [];
  for (const step of steps) {
    console.info(`\n=== ${step.name}: ${step.cmd.join(" ")}`);
    const started = Date.now();
    const result = spawnSync(step.cmd[0]!, step.cmd.slice(1), { stdio: "inherit", env: { ...process.env, ...step.env } });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    timings.push(`${step.name}: ${result.status === 0 ? "ok" : "FAILED"} in ${seconds}s`);
    if (result.status !== 0) {
      console.error(`\n=== ${step.name} failed (exit ${result.status ?? result.signal}).\n${timings.join("\n")}`);
      process.exit(1);
    }
  }
  console.info(`\n=== all green\n${timings.join("\n")}`);
  process.exit(0);
}
