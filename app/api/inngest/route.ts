// The Inngest serve endpoint: the dev server (or tools/inngest-local) syncs with PUT and
// calls the functions with POST. Outside dev, INNGEST_SIGNING_KEY authenticates the calls.
import { serve } from "inngest/next";
import { inngest } from "@/inngest/client";
import { functions } from "@/inngest";

// A generation waits on the model for up to the lease's lifetime.
export const maxDuration = 300;

export const { GET, POST, PUT } = serve({ client: inngest, functions });
