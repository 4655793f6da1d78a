import { Inngest } from "inngest";
import { StepDataEncryption } from "./encryption";
import { LeaseLogContext } from "./log-context";
import { LeaseStepTracing } from "./tracing";

// How the client finds its server is the SDK's own environment reading:
//   - dev (`npm run dev`): INNGEST_DEV=http://127.0.0.1:8288, the real `inngest-cli dev` or our
//     stand-in; unsigned, so never in production (lib/env.ts refuses it at start).
//   - production: INNGEST_SIGNING_KEY and INNGEST_EVENT_KEY, plus INNGEST_BASE_URL for a
//     self-hosted server (`inngest start`, or packages/inngest-local in its self-hosted mode);
//     without it, Inngest Cloud.
// Production is pinned to cloud mode here too, so a stray INNGEST_DEV can never switch the
// serve route to unsigned dev mode, whatever the start-up check let through.
export const inngest = new Inngest({
  id: "claimcheck",
  // Each step attempt is a span in its lease's trace (inngest/tracing.ts); step outputs and the
  // run nonce reach the Inngest server encrypted (inngest/encryption.ts); every log line of a
  // run names its lease (inngest/log-context.ts).
  middleware: [LeaseLogContext, LeaseStepTracing, StepDataEncryption],
  ...(process.env.NODE_ENV === "production" ? { isDev: false } : {}),
});

// The events it sends and receives are typed in ./events.ts.
