import "server-only";
// An invoice's whole history, one page at a time: every change recorded in invoice_change
// (created, imported, edited, owner changed, status changed) and every attempt of any purpose (a lease,
// with its own timeline), interleaved by when each happened, newest first. Here under lib/leases
// because reading attempts records the overdue ones expired first, as every lease read does.
import type { Db, Tx } from "@/db/client";
import { appUser, inferenceLease, invoice, invoiceChange, leaseEvent } from "@/db/schema";
import { ROLE_RULES, visibleInvoice, type Member } from "@/lib/access";
import { isUuid } from "@/lib/ids";
import type { ChangeKind, InvoiceChanges } from "@/lib/org-codes";
import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import { attemptNumber, purposeOrSummary, type AttemptView } from "./read";
import { expireDue } from "./shared";

/** One recorded change: who made it (null once their account is gone), when, and each field before and after. */
export type ChangeView = {
  id: number;
  at: Date;
  kind: ChangeKind;
  version: number;
  actorName: string | null;
  changes: InvoiceChanges;
};

/**
 * What a teammate reads of a write's receipt (docs/decisions/0079), without hashes or sessions:
 * who wrote, who approved, when. Only for the receipt's readers (the lease's actor, the approver,
 * the organization's admins); null for anyone else and for an attempt that wrote nothing.
 */
export type ReceiptLine = { writtenBy: string; approvedBy: string | null; at: string };

/** An attempt with its number among the invoice's attempts of its purpose (./read.ts attemptNumber), and its receipt as the viewer may read it. */
export type NumberedAttempt = AttemptView & { number: number; receipt?: ReceiptLine | null };

export type TimelineEntry = { type: "change"; at: Date; change: ChangeView } | { type: "attempt"; at: Date; attempt: NumberedAttempt };

export type Timeline = {
  /** Entries of both kinds on the invoice. */
  total: number;
  entries: TimelineEntry[];
  /** The names of the users the page's changes name by id (an owner change's from and to). */
  names: Record<string, string>;
};

/**
 * A page of the timeline of an invoice of the member's organization; null for another
 * organization's invoice, as for a missing one. Ties in time go to the later-recorded entry.
 */
export async function invoiceTimeline(
  db: Db,
  member: Member,
  invoiceId: unknown,
  page: { offset: number; limit: number },
): Promise<Timeline | null> {
  if (!isUuid(invoiceId)) return null;
  return db.transaction(async (tx) => {
    const [visible] = await tx
      .select({ id: invoice.id })
      .from(invoice)
      .where(and(eq(invoice.id, invoiceId), visibleInvoice(member)));
    if (!visible) return null;
    const onInvoice = eq(inferenceLease.invoiceId, invoiceId);
    await expireDue(tx, onInvoice, "read");

    // Only the keys in the union, in order; each kind's rows are read by key after.
    const changeKeys = tx
      .select({
        changeId: sql<number | null>`${invoiceChange.id}`.as("change_id"),
        leaseId: sql<string | null>`null::uuid`.as("lease_id"),
        at: sql<unknown>`${invoiceChange.at}`.as("at"),
      })
      .from(invoiceChange)
      .where(eq(invoiceChange.invoiceId, invoiceId));
    const attemptKeys = tx
      .select({
        changeId: sql<number | null>`null::bigint`.as("change_id"),
        leaseId: sql<string | null>`${inferenceLease.id}`.as("lease_id"),
        at: sql<unknown>`coalesce(${inferenceLease.createdAt}, '-infinity')`.as("at"),
      })
      .from(inferenceLease)
      .where(onInvoice);
    const keys = await changeKeys
      .unionAll(attemptKeys)
      .orderBy(sql`at desc`, sql`change_id desc nulls last`, sql`lease_id desc`)
      .limit(page.limit)
      .offset(page.offset);
    const [counts] = await tx
      .select({
        total: sql<number>`(select count(*) from ${invoiceChange} where ${invoiceChange.invoiceId} = ${invoiceId})
          + (select count(*) from ${inferenceLease} where ${onInvoice})`.mapWith(Number),
      })
      .from(invoice)
      .where(eq(invoice.id, invoiceId));
    const changeIds = keys.flatMap((k) => (k.changeId === null ? [] : [Number(k.changeId)]));
    const leaseIds = keys.flatMap((k) => (k.leaseId === null ? [] : [k.leaseId]));

    const changes = changeIds.length
      ? await tx
          .select({
            id: invoiceChange.id,
            at: invoiceChange.at,
            kind: invoiceChange.kind,
            version: invoiceChange.version,
            actorName: appUser.name,
            changes: invoiceChange.changes,
          })
          .from(invoiceChange)
          .leftJoin(appUser, eq(appUser.id, invoiceChange.actorId))
          .where(inArray(invoiceChange.id, changeIds))
      : [];
    const attempts = leaseIds.length ? await attemptsOf(tx, member, leaseIds) : [];

    // Owner changes store user ids; the page shows names, as the users are called now.
    const userIds = [
      ...new Set(changes.flatMap((c) => (c.kind === "owner_changed" ? [c.changes.owner?.from, c.changes.owner?.to] : [])).filter(isUuid)),
    ];
    const users = userIds.length
      ? await tx.select({ id: appUser.id, name: appUser.name }).from(appUser).where(inArray(appUser.id, userIds))
      : [];

    const changeById = new Map(changes.map((c) => [c.id, c]));
    const attemptById = new Map(attempts.map((a) => [a.id, a]));
    const entries = keys.flatMap((k): TimelineEntry[] => {
      if (k.changeId !== null) {
        const change = changeById.get(Number(k.changeId));
        return change ? [{ type: "change", at: change.at, change }] : [];
      }
      const attempt = attemptById.get(k.leaseId!);
      return attempt ? [{ type: "attempt", at: attempt.createdAt ?? new Date(0), attempt }] : [];
    });
    return { total: counts?.total ?? 0, entries, names: Object.fromEntries(users.map((u) => [u.id, u.name])) };
  });
}

/** The attempts named, each with its number among the invoice's attempts, its actor's name and its events. */
async function attemptsOf(tx: Tx, member: Member, leaseIds: string[]): Promise<NumberedAttempt[]> {
  const memberId = member.id;
  const admin = (ROLE_RULES.read_audit as readonly string[]).includes(member.role);
  const leases = await tx
    .select({
      id: inferenceLease.id,
      // The member's own attempt: only theirs is named by its lease id on the page.
      mine: sql<boolean>`${inferenceLease.actorId} = ${memberId}`,
      purpose: inferenceLease.purpose,
      actorName: appUser.name,
      status: inferenceLease.status,
      closedReason: inferenceLease.closedReason,
      createdAt: inferenceLease.createdAt,
      number: attemptNumber,
      // The receipt's words, in this same statement, for its readers only (as GET /api/leases/:id/receipt).
      receipt: sql<ReceiptLine | null>`(select json_build_object('writtenBy', ru.name, 'approvedBy', au.name, 'at', rc.written_at)
        from lease_receipt rc join app_user ru on ru.id = rc.requester_id left join app_user au on au.id = rc.approver_id
        where rc.lease_id = ${inferenceLease.id}
          and (${sql.raw(admin ? "true" : "false")} or rc.requester_id = ${memberId} or rc.approver_id = ${memberId}))`,
    })
    .from(inferenceLease)
    .innerJoin(appUser, eq(appUser.id, inferenceLease.actorId))
    .where(inArray(inferenceLease.id, leaseIds))
    .orderBy(desc(inferenceLease.createdAt), desc(inferenceLease.id));
  const events = await tx
    .select({ leaseId: leaseEvent.leaseId, id: leaseEvent.id, at: leaseEvent.at, kind: leaseEvent.kind, detail: leaseEvent.detail })
    .from(leaseEvent)
    .where(inArray(leaseEvent.leaseId, leaseIds))
    .orderBy(asc(leaseEvent.id));
  return leases.map((l) => ({
    ...l,
    purpose: purposeOrSummary(l.purpose),
    events: events.filter((e) => e.leaseId === l.id).map(({ leaseId: _lease, ...e }) => e),
  }));
}
