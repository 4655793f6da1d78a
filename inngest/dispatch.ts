import "server-only";
import type { LeaseDispatch } from "@/lib/leases";
import { EVENTS, inngest, type LeaseOpenedData } from "./client";

/** The lease domain's outbound side, over Inngest events. Called after commits only. */
export const inngestDispatch: LeaseDispatch = {
  async leaseOpened(lease) {
    await inngest.send({
      name: EVENTS.leaseOpened,
      // Derived from the lease, so a resend is deduplicated by Inngest: one lease, one run.
      id: `lease-opened-${lease.id}`,
      data: {
        leaseId: lease.id,
        actorId: lease.actorId,
        invoiceId: lease.invoiceId,
        purpose: lease.purpose,
        // The run hands it back to propose and fail; see proposeLease.
        runNonce: lease.runNonce,
      } satisfies LeaseOpenedData,
    });
  },
  async leaseClosed(leaseIds, reason) {
    await inngest.send(
      leaseIds.map((leaseId) => ({
        name: EVENTS.leaseClosed,
        id: `lease-closed-${leaseId}`,
        data: { leaseId, reason },
      })),
    );
  },
};
