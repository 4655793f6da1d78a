import { Inngest } from "inngest";

// Dev mode and the server URL come from INNGEST_DEV (e.g. http://127.0.0.1:8288): the real
// `inngest-cli dev`, or our local stand-in in tests and offline dev. Without it the client
// runs in cloud mode and needs INNGEST_EVENT_KEY / INNGEST_SIGNING_KEY.
export const inngest = new Inngest({ id: "claimcheck" });

export const EVENTS = {
  leaseOpened: "lease/opened",
  leaseClosed: "lease/closed",
} as const;

export type LeaseOpenedData = { leaseId: string; actorId: string; invoiceId: string; purpose: string };
export type LeaseClosedData = { leaseId: string; reason: string };
