// The app's Inngest events, typed once with the SDK's eventType: the send side builds them
// with `.create(data)`, and the function triggered by lease/opened gets its data typed and
// validated by the SDK before the handler runs (a malformed event fails the run at once,
// without retries: EventValidationError is non-retriable).
import { eventType } from "inngest";
import { z } from "zod";
import { CLOSED_REASONS } from "@/lib/lease-codes";

/**
 * A lease was opened: generate its proposal. `runNonce` is the lease's secret
 * (inference_lease.run_nonce): the run carries it back to propose and fail, which refuse any
 * other value. It goes to the Inngest server and to no client.
 */
export const leaseOpened = eventType("lease/opened", {
  schema: z.object({
    leaseId: z.string(),
    actorId: z.string(),
    invoiceId: z.string(),
    purpose: z.string(),
    runNonce: z.string(),
  }),
});
export type LeaseOpenedData = z.infer<typeof leaseOpened.schema>;

/** A lease closed (cancel, sign-out, an edit): its generation, if still running, stops. */
export const leaseClosed = eventType("lease/closed", {
  schema: z.object({ leaseId: z.string(), reason: z.enum(CLOSED_REASONS) }),
});
export type LeaseClosedData = z.infer<typeof leaseClosed.schema>;
