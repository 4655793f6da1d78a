// @claimcheck/inngest-local: a local stand-in for the Inngest server, for dev and tests
// (README.md beside this file). This file is its one door: code outside the package imports
// only from here (lint refuses a deep import), and the app imports nothing of it at all.
import { fileURLToPath } from "node:url";

export { startInngestLocal } from "./server";
export type { EventPayload, InngestLocal, InngestLocalOptions, RunStatus, RunSummary, StepStatus, StepSummary } from "./types";
/** How the stand-in signs its calls to an app and what the SDK checks: for tests that sign or verify by hand. */
export { canonicalBody, hashSigningKey, signBody } from "./signing";
/** The real server's retry schedule (ms after attempt n fails, before jitter), as the stand-in runs it. */
export { RETRY_TABLE_MS } from "./backoff";
/** A tiny HTTP app serving functions with the pinned SDK, for driving the stand-in from a test. */
export { startSdkApp, type SdkApp } from "./sdk-app";

/** The CLI (`main.ts`), for programs that start the stand-in as a process of its own. */
export const cliPath = fileURLToPath(new URL("./main.ts", import.meta.url));
