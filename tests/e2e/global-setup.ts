// Playwright global setup: build once (into .next-test, shared with the integration tests,
// reused while fresh), make a fresh database, and start two app servers on it, each with its
// own Inngest stand-in:
//   main  — LEASE_TTL_SECONDS=60, MODEL_LATENCY_MS=3000: slow enough to close a tab or sign
//           out while the summary is being written, long enough never to expire by accident;
//   short — LEASE_TTL_SECONDS=4, MODEL_LATENCY_MS=4500, MODEL_IGNORE_ABORT=1: a model that
//           cannot be stopped answers after the deadline, so its completion is recorded as late.
// The tests learn the URLs from E2E_* variables (workers inherit this process's env).
import fs from "node:fs";
import path from "node:path";
import type { FullConfig } from "@playwright/test";
import { buildApp, createDatabase, DEFAULT_PG_URL, postgresAnswers, ROOT, startServer } from "./support/stack";

export default async function globalSetup(_config: FullConfig) {
  const adminUrl = process.env.DATABASE_URL || DEFAULT_PG_URL;
  if (!(await postgresAnswers(adminUrl))) {
    throw new Error(
      `The end-to-end tests need PostgreSQL (they check the database after each step) and none answered at ${adminUrl}.\n` +
        `Set DATABASE_URL, or start the local server: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`,
    );
  }
  await buildApp();
  const db = await createDatabase(adminUrl);
  console.log(`e2e: database ${db.name}`);
  const started = await Promise.allSettled([startServer("main", db.url), startServer("short", db.url)]);
  const servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  const teardown = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    if (process.env.E2E_KEEP_DB === "1") console.log(`e2e: kept database ${db.name}`);
    else await db.drop();
  };
  if (failed) {
    await teardown();
    throw (failed as PromiseRejectedResult).reason;
  }
  const [main, short] = servers as [(typeof servers)[number], (typeof servers)[number]];
  process.env.E2E_DATABASE_URL = db.url;
  process.env.E2E_MAIN_URL = main.url;
  process.env.E2E_SHORT_URL = short.url;
  process.env.E2E_MAIN_INNGEST_URL = main.inngest.url;
  process.env.E2E_SHORT_INNGEST_URL = short.inngest.url;
  // The stand-ins' control plane (GET /runs) needs their signing key as a bearer.
  process.env.E2E_MAIN_INNGEST_SIGNING_KEY = main.signingKey;
  process.env.E2E_SHORT_INNGEST_SIGNING_KEY = short.signingKey;
  fs.mkdirSync(path.join(ROOT, "test-results"), { recursive: true });
  fs.rmSync(path.join(ROOT, "test-results", "e2e-axe.jsonl"), { force: true });
  console.log(`e2e: main ${main.url} (inngest ${main.inngest.url}), short ${short.url} (inngest ${short.inngest.url})`);
  return teardown;
}
