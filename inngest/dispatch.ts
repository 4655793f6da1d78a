import "server-only";
import { after } from "next/server";
import type { LeaseDispatch } from "@/lib/leases";
import { log } from "@/lib/log";
import { inngest } from "./client";
import { leaseClosed, leaseOpened } from "./events";

/**
 * The longest a request waits for the Inngest server to take an event, the SDK's own retries
 * included (against a server that refuses connections they give up in about 2 s). The SDK
 * sets no timeout of its own: a server that accepts connections and never answers (frozen,
 * or a black hole on the way) held every open, cancel and sign-out for as long as it stayed
 * so. Past this bound, opening answers 503 dispatch_failed and closes the lease.
 */
export const SEND_TIMEOUT_MS = 5_000;

/**
 * `sending`, or a rejection after SEND_TIMEOUT_MS. The send itself goes on in the background:
 * if the event still arrives, its run finds the lease already closed and stops.
 */
async function within<T>(sending: Promise<T>): Promise<T> {
  sending.catch(() => {}); // a late failure is no one's to handle: we have answered already
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the Inngest server did not take the event within ${SEND_TIMEOUT_MS} ms`)), SEND_TIMEOUT_MS);
  });
  try {
    return await Promise.race([sending, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** One send to the Inngest server, as a promise `within` can bound. */
async function send(payload: Parameters<typeof inngest.send>[0]) {
  return inngest.send(payload);
}

/** The lease domain's outbound side, over Inngest events. Called after commits only. */
export const inngestDispatch: LeaseDispatch = {
  async leaseOpened(lease) {
    await within(
      send(
        leaseOpened.create(
          {
            leaseId: lease.id,
            actorId: lease.actorId,
            invoiceId: lease.invoiceId,
            purpose: lease.purpose,
            // The run hands it back to propose and fail; see proposeLease.
            runNonce: lease.runNonce,
          },
          // Derived from the lease, so a resend is deduplicated by Inngest: one lease, one run.
          { id: `lease-opened-${lease.id}` },
        ),
      ),
    );
  },
  async leaseClosed(leaseIds, reason) {
    const sending = () =>
      within(send(leaseIds.map((leaseId) => leaseClosed.create({ leaseId, reason }, { id: `lease-closed-${leaseId}` }))));
    // The close is committed, and a model call running for the lease is already being dropped
    // (its LISTEN, decision 0025): this event only ends the Inngest run at its next step, so
    // the answer (cancel, sign-out, an edit) does not wait for it; it is sent after the
    // response (decision 0041). Outside a request (a script, a test of the domain) it is sent now.
    try {
      after(() =>
        sending().catch((error: unknown) => {
          log.warn("lease/closed not delivered", { lease_ids: leaseIds, error: error instanceof Error ? error.message : String(error) });
        }),
      );
      return;
    } catch {
      // not inside a request: no "after the response"
    }
    await sending();
  },
};
