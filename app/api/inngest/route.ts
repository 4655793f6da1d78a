// The Inngest serve endpoint: the Inngest server syncs with PUT and calls the functions with
// POST. In production (cloud mode; see inngest/client.ts) the SDK verifies every call's
// X-Inngest-Signature against INNGEST_SIGNING_KEY and answers 401 without a valid one, GET
// included, so an unsigned caller learns nothing about the functions.
import { serve } from "inngest/next";
import { inngest } from "@/inngest/client";
import { functions } from "@/inngest";

// A generation waits on the model for up to the lease's lifetime.
export const maxDuration = 300;

const handler = serve({
  client: inngest,
  functions,
  // An unsigned PUT would otherwise make the app register itself with the Inngest server at
  // whatever URL the request's Host claims. Syncs come signed from the server (in-band).
  enableUnauthedSync: false,
});

type Handler = typeof handler.POST;

/**
 * The SDK parses a POST or PUT body as JSON before it checks the signature, and answers a
 * body that does not parse with a 500. The Inngest server signs only JSON, so such a call is
 * refused like any other it cannot verify: 401, before the SDK sees it.
 */
const jsonBodyOnly =
  (serveMethod: Handler): Handler =>
  async (req, ...rest) => {
    const text = await (req as Request).clone().text();
    if (text !== "") {
      try {
        JSON.parse(text);
      } catch {
        return Response.json({ message: "Unauthorized" }, { status: 401 });
      }
    }
    return serveMethod(req, ...rest);
  };

export const GET = handler.GET;
export const POST = jsonBodyOnly(handler.POST);
export const PUT = jsonBodyOnly(handler.PUT);
