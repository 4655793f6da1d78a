import "server-only";
// Giving an invoice to another member of its organization: an admin's act (ROLE_RULES.reassign_invoice).
// It is a change like an edit: the version goes up, so a lease opened against the old one can
// never be applied, and the leases in flight are withdrawn in the same transaction, their
// generations told to stop once it commits; the history records who had it and who has it now,
// as user ids (names are read when shown: a renamed user reads as they are called now).
import { and, asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { appUser, invoice, invoiceChange, membership } from "@/db/schema";
import { memberMay, memberOf, visibleInvoice, type Member } from "./access";
import { canonicalKey, isUuid } from "./ids";
import { text } from "./input";
import { getInvoice, type InvoiceDetail } from "./invoices";
import { lockLeasesInFlight, tellClosed, withdrawOutdated, type LeaseDispatch } from "./leases";

export const OwnerChange = z.object({ owner_id: text().trim().refine(isUuid, "not an id") });
export type OwnerChange = z.infer<typeof OwnerChange>;

export type ReassignResult =
  { ok: true; invoice: InvoiceDetail; withdrawn: string[] } | { ok: false; code: "invoice_not_found" | "forbidden" | "invalid_request" };

/**
 * The invoice of the admin's organization given to `ownerId`, who must be a member of it now:
 * another organization's invoice is `invoice_not_found`, a member who is not an admin gets
 * `forbidden`, an owner who is not a member `invalid_request`; nothing is written then. Giving
 * it to the owner it already has changes nothing and answers the invoice as it is.
 *
 * Locks as an edit does (the leases in flight, then the invoice), which is the order apply
 * takes them in: an apply that holds its lease first commits and this waits for it (the
 * summary, applied, is then out of date at once, and says so); otherwise the apply waits and
 * finds its lease withdrawn (`invoice_changed`).
 */
export async function reassignInvoice(
  db: Db,
  member: Member,
  invoiceId: unknown,
  requestedOwner: string,
  dispatch: LeaseDispatch,
): Promise<ReassignResult> {
  // As the database spells ids: the same owner in upper case is no change of hands.
  const ownerId = canonicalKey(requestedOwner);
  if (!isUuid(invoiceId)) return { ok: false, code: "invoice_not_found" };
  // An owner id that is no id names no member; the invoice is still looked for first (404 outranks 422).
  const newOwnerIsMember = isUuid(ownerId) ? memberOf(invoice.orgId, ownerId) : sql`false`;
  const outcome = await db.transaction(async (tx) => {
    await lockLeasesInFlight(tx, invoiceId);
    const judge = async (lock: boolean) => {
      const query = tx
        .select({
          ownerId: invoice.ownerId,
          admin: sql<boolean>`${memberMay(invoice.orgId, member.id, "reassign_invoice")}`,
          ownerIsMember: sql<boolean>`${newOwnerIsMember}`,
        })
        .from(invoice)
        .where(and(eq(invoice.id, invoiceId), visibleInvoice(member)));
      const [row] = lock ? await query.for("update") : await query;
      if (!row) return { refusal: "invoice_not_found" as const };
      if (!row.admin) return { refusal: "forbidden" as const };
      if (!row.ownerIsMember) return { refusal: "invalid_request" as const };
      return { current: row };
    };
    const judged = await judge(true);
    if (!judged.current) return judged.refusal;
    const current = judged.current;
    if (current.ownerId === ownerId) return { withdrawn: [] as string[] };
    // The rules stated again in the statement that writes, on the row this transaction holds.
    const [row] = await tx
      .update(invoice)
      .set({ ownerId, version: sql`${invoice.version} + 1`, updatedAt: sql`now()` })
      .where(
        and(eq(invoice.id, invoiceId), visibleInvoice(member), memberMay(invoice.orgId, member.id, "reassign_invoice"), newOwnerIsMember),
      )
      .returning({ version: invoice.version });
    // A membership that went (the admin's or the new owner's) since the row was locked.
    if (!row) return (await judge(false)).refusal ?? "invalid_request";
    await tx.insert(invoiceChange).values({
      invoiceId,
      actorId: member.id,
      kind: "owner_changed",
      version: row.version,
      changes: { owner: { from: current.ownerId, to: ownerId } },
    });
    return { withdrawn: await withdrawOutdated(tx, invoiceId, row.version, ["owner"], "owner_change") };
  });
  if (typeof outcome === "string") return { ok: false, code: outcome };
  await tellClosed(dispatch, outcome.withdrawn, "invoice_changed");
  const detail = await getInvoice(db, member, invoiceId);
  return { ok: true, invoice: detail!, withdrawn: outcome.withdrawn };
}

/** The members of the organization an invoice may be given to, by name: for the admin's Owner menu. */
export async function ownerChoices(db: Db, member: Member): Promise<{ id: string; name: string }[]> {
  return db
    .select({ id: appUser.id, name: appUser.name })
    .from(membership)
    .innerJoin(appUser, eq(appUser.id, membership.userId))
    .where(and(eq(membership.orgId, member.orgId), memberOf(member.orgId, member.id)))
    .orderBy(asc(appUser.name), asc(appUser.id));
}
