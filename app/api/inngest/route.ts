// The Inngest serve endpoint: the Inngest server syncs with PUT and calls the functions with
// POST. In production (cloud mode; see inngest/client.ts) the SDK verifies every call's
// X-Inngest-Signature against INNGEST_SIGNING_KEY and answers 401 without a valid one, GET
// included, so an unsigned caller learns nothing about the functions.
import { serve } from "inngest/next";
import { inngest } from "@/inngest/client";
import { functions } from "@/inngest";

// A generation waits on the model for up to the lease's lifetime.
export const maxDuration = 300;

export const { GET, POST, PUT } = serve({
  client: inngest,
  functions,
  // An unsigned PUT would otherwise make the app register itself with the Inngest server at
  // whatever URL the request's Host claims. Syncs come signed from the server (in-band).
  enableUnauthedSync: false,
});
