import fs from "node:fs";
import { defineConfig } from "@playwright/test";

// Debian's Chromium; Playwright cannot download browsers on these machines. Where no system
// Chromium exists, Playwright's own (if installed) is used instead.
const SYSTEM_CHROMIUM = "/usr/bin/chromium";

export default defineConfig({
  testDir: "tests/e2e",
  testMatch: "**/*.spec.ts",
  // One app, one database, scenarios that watch the clock: one at a time.
  workers: 1,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  globalSetup: "./tests/e2e/global-setup.ts",
  outputDir: "test-results/e2e",
  reporter: [["list"], ["json", { outputFile: "test-results/e2e-results.json" }]],
  use: {
    browserName: "chromium",
    viewport: { width: 1280, height: 900 },
    // The page formats dates and numbers in the browser's locale: one locale for the suite.
    locale: "en-US",
    launchOptions: {
      executablePath: fs.existsSync(SYSTEM_CHROMIUM) ? SYSTEM_CHROMIUM : undefined,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
});
