import "server-only";
// The lease module's shared types: what a lease looks like to its readers, and how it reaches the outside world.
import type { ClosedReason, EventKind, GenerationFailureCode, LeaseProposal, LeaseStatus } from "@/lib/lease-codes";

export type { EventKind, GenerationFailureCode };

/** How the outside world learns of a lease: Inngest in the app, a recorder in tests. */
export type LeaseDispatch = {
  /**
   * Sent after the insert commits; a failure closes the lease. `runNonce` goes with it to the
   * generation, which must hand it back to propose (see proposeLease); never to a client.
   */
  leaseOpened(lease: { id: string; actorId: string; invoiceId: string; purpose: string; runNonce: string }): Promise<void>;
  /** Tells a running generation to stop. Best effort: the lease is already closed. */
  leaseClosed(leaseIds: string[], reason: ClosedReason): Promise<void>;
};

export type LeaseEventView = { id: number; at: Date; kind: EventKind; detail: unknown };
export type LeaseView = {
  id: string;
  actorId: string;
  invoiceId: string;
  purpose: string;
  status: LeaseStatus;
  deadlineAt: Date;
  createdAt: Date | null;
  proposal: LeaseProposal | null;
  closedReason: ClosedReason | null;
  /** The database clock when this view was read, so a client can count down honestly. */
  now: Date;
  /** One page of the timeline, oldest first: the latest LEASE_EVENTS_PAGE events, or those before a cursor. */
  events: LeaseEventView[];
  /**
   * Where the page before `events` ends (the id of its oldest event), or null when there is none.
   * Never sent as it is: clients get it sealed to the lease (./cursor.ts).
   */
  eventsBefore: number | null;
};
