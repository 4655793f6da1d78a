import "server-only";
// Every Inngest function of the app: what app/api/inngest/route.ts serves.
import { expireOverdueLeases } from "./expire-overdue-leases";
import { generateLeaseProposal } from "./generate-lease-proposal";

export const functions = [generateLeaseProposal, expireOverdueLeases];
