// The production server refuses to start without a real session key, or with Inngest unsigned
// (INNGEST_DEV) or without its keys, or without the key that encrypts its step data, and says which.
import { spawn } from "node:child_process";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { TEST_DIST_DIR } from "../harness/app-server";

const DEV_KEY = "claimcheck-dev-only-session-key-do-not-use-in-production"; // lib/env.ts

function startProduction(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  // As `npm start` runs it: server.mjs, Next.js behind its method gate (decision 0048).
  const server = path.join(process.cwd(), "server.mjs");
  const child = spawn(process.execPath, [server, "-p", "0", "-H", "127.0.0.1"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NODE_ENV: "production", NEXT_DIST_DIR: TEST_DIST_DIR, NEXT_TELEMETRY_DISABLED: "1", ...env },
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const timer = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

test("npm start refuses a missing SESSION_PASSWORD, and the development key, naming the variable", async () => {
  const missing = await startProduction({});
  expect(missing.code).toBe(1);
  expect(missing.output).toContain("SESSION_PASSWORD must be set in production");

  const devKey = await startProduction({ SESSION_PASSWORD: DEV_KEY });
  expect(devKey.code).toBe(1);
  expect(devKey.output).toContain("development default");

  const short = await startProduction({ SESSION_PASSWORD: "too-short" });
  expect(short.code).toBe(1);
  expect(short.output).toContain("at least 32 characters");
});

test("npm start refuses Inngest's unsigned dev mode and a missing signing or event key, naming the variable", async () => {
  const session = { SESSION_PASSWORD: "s".repeat(40) };
  const signingKey = { INNGEST_SIGNING_KEY: `signkey-test-${"ab".repeat(32)}` };
  const eventKey = { INNGEST_EVENT_KEY: "e".repeat(32) };

  // Even with both keys set: dev mode would serve /api/inngest to anyone, unsigned.
  const dev = await startProduction({ ...session, ...signingKey, ...eventKey, INNGEST_DEV: "http://127.0.0.1:8288" });
  expect(dev.code).toBe(1);
  expect(dev.output).toContain("INNGEST_DEV must not be set in production");

  const noSigningKey = await startProduction({ ...session, ...eventKey });
  expect(noSigningKey.code).toBe(1);
  expect(noSigningKey.output).toContain("INNGEST_SIGNING_KEY must be set in production");

  const badSigningKey = await startProduction({ ...session, ...eventKey, INNGEST_SIGNING_KEY: "not-a-signing-key" });
  expect(badSigningKey.code).toBe(1);
  expect(badSigningKey.output).toContain("INNGEST_SIGNING_KEY must look like signkey-<env>-<hex>");

  const noEventKey = await startProduction({ ...session, ...signingKey });
  expect(noEventKey.code).toBe(1);
  expect(noEventKey.output).toContain("INNGEST_EVENT_KEY must be set in production");
});

test("next start refuses a missing INNGEST_ENCRYPTION_KEY, and the development key, naming the variable", async () => {
  const ready = { SESSION_PASSWORD: "s".repeat(40), INNGEST_SIGNING_KEY: `signkey-test-${"ab".repeat(32)}`, INNGEST_EVENT_KEY: "e".repeat(32) };
  const missing = await startProduction(ready);
  expect(missing.code).toBe(1);
  expect(missing.output).toContain("INNGEST_ENCRYPTION_KEY must be set in production");

  const devKey = await startProduction({ ...ready, INNGEST_ENCRYPTION_KEY: "claimcheck-dev-only-inngest-encryption-key-do-not-use-in-production" });
  expect(devKey.code).toBe(1);
  expect(devKey.output).toContain("INNGEST_ENCRYPTION_KEY is the development default");
});
