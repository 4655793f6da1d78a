// What the purpose tests share: invoices made to measure (any lines, dates and status, odd ones
// included, inserted straight into the table where the API would refuse them), the database's
// own current_date, and a lease taken from open to proposed the way the generate function does
// it: loadForGeneration's one read, the local model, the purpose's schema, proposeLease.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { invoice, invoiceLine } from "@/db/schema";
import { loadForGeneration, openLease, proposeLease, type LeaseDispatch } from "@/lib/leases";
import { createLocalProvider } from "@/lib/model";
import { purposeOf } from "@/lib/purposes";
import type { Purpose } from "@/lib/purposes";

export type LineSpec = { description: string; quantity: number; unitPriceCents: number };

/** An invoice with exactly these lines; its total is their sum unless `totalCents` says otherwise. */
export async function invoiceWith(
  db: Db,
  ownerId: string,
  spec: { lines?: LineSpec[] } & Partial<Omit<typeof invoice.$inferInsert, "ownerId">> = {},
) {
  const { lines = [{ description: "Consulting services", quantity: 2, unitPriceCents: 50_000 }], ...fields } = spec;
  const [row] = await db
    .insert(invoice)
    .values({
      ownerId,
      number: `INV-${randomUUID().slice(0, 8)}`,
      counterparty: "Northwind Traders",
      currency: "EUR",
      totalCents: lines.reduce((sum, l) => sum + l.quantity * l.unitPriceCents, 0),
      issuedOn: "2026-01-01",
      dueOn: "2026-01-31",
      ...fields,
    })
    .returning();
  if (lines.length) await db.insert(invoiceLine).values(lines.map((l, position) => ({ ...l, position, invoiceId: row!.id })));
  return row!;
}

/** The database's current_date, and days from it, as ISO dates: what review_invoice judges by. */
export async function dbToday(db: Db): Promise<{ today: string; plus: (days: number) => string }> {
  const result = await db.execute(sql`select current_date::text as today`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { today: string }[];
  const today = rows[0]!.today;
  const plus = (days: number) => new Date(Date.parse(`${today}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
  return { today, plus };
}

const quietDispatch: LeaseDispatch = { async leaseOpened() {}, async leaseClosed() {} };

/** Opens a lease as the app does (no session), or finds the actor's lease in flight, with the run nonce its lease/opened event carries. */
export async function openFor(db: Db, actorId: string, invoiceId: string, purpose: Purpose) {
  const opened = await openLease(db, { actorId, sessionId: null, invoiceId, purpose, ttlSeconds: 120 }, quietDispatch);
  if (!opened.ok) throw new Error(`open failed: ${opened.code}`);
  return { leaseId: opened.lease.id, runNonce: opened.lease.runNonce };
}

/** The local model's answer for an open lease, from what loadForGeneration read, checked by the purpose's schema. */
export async function localOutput(db: Db, leaseId: string) {
  const input = await loadForGeneration(db, leaseId);
  if (!input.ok) throw new Error(`load failed: ${input.reason}`);
  const proposal = await createLocalProvider().generate({
    purpose: input.lease.purpose,
    actorId: input.lease.actorId,
    invoice: input.invoice,
    context: input.context,
  });
  const output = purposeOf(input.lease.purpose).output.parse(proposal.output) as Record<string, unknown>;
  return { input, output, model: proposal.model };
}

/** Open → the local model → proposed, as the generate function does it. */
export async function proposedLease(db: Db, actorId: string, invoiceId: string, purpose: Purpose) {
  const { leaseId, runNonce } = await openFor(db, actorId, invoiceId, purpose);
  const { output, model } = await localOutput(db, leaseId);
  const proposed = await proposeLease(db, {
    leaseId,
    actorId,
    runNonce,
    proposal: { ...output, model },
    // As the generation run does (inngest/generate-lease-proposal.ts): the receipt's prompt version (0079).
    detail: { prompt_version: purposeOf(purpose).promptVersion },
  });
  if (!proposed.ok) throw new Error(`propose failed: ${proposed.code}`);
  return { leaseId, output };
}

export { quietDispatch };
