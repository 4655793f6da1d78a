import "server-only";
// What signing out would drop: the leases this session opened that are still in flight
// (revokeSession closes exactly those), or for signing out everywhere (`sessionId: null`),
// every lease of the user in flight (revokeAllSessions). Summaries waiting for review are worth a question
// before they go; ones still being written are only mentioned.
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { inferenceLease, invoice } from "@/db/schema";
import { IN_FLIGHT_STATUSES } from "@/lib/lease-codes";

export type WaitingProposal = { leaseId: string; invoiceId: string; number: string; counterparty: string };
export type AtSignOut = { proposals: WaitingProposal[]; generating: number };

export async function inFlightAtSignOut(db: Db, input: { actorId: string; sessionId: string | null }): Promise<AtSignOut> {
  const rows = await db
    .select({
      leaseId: inferenceLease.id,
      invoiceId: invoice.id,
      number: invoice.number,
      counterparty: invoice.counterparty,
      status: inferenceLease.status,
    })
    .from(inferenceLease)
    .innerJoin(invoice, eq(invoice.id, inferenceLease.invoiceId))
    .where(
      and(
        eq(inferenceLease.actorId, input.actorId),
        input.sessionId === null ? undefined : eq(inferenceLease.sessionId, input.sessionId),
        inArray(inferenceLease.status, [...IN_FLIGHT_STATUSES]),
        // Past its deadline it is already lost (the sweep records it): nothing to ask about.
        sql`${inferenceLease.deadlineAt} > now()`,
      ),
    )
    .orderBy(asc(invoice.number), asc(inferenceLease.id));
  return {
    proposals: rows.filter((r) => r.status === "proposed").map(({ status: _status, ...proposal }) => proposal),
    generating: rows.filter((r) => r.status === "open").length,
  };
}
