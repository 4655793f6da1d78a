// What the audit tests share: an organization whose chain holds every feed (an import, an edit,
// a lease's whole lifecycle through the routes, a role change, a budget), and SQL run with the
// triggers off, as anyone holding the database can (session_replication_role = replica).
import { sql, type SQL } from "drizzle-orm";
import { expect } from "vitest";
import { rowsOf, type Db } from "@/db/client";
import { proposeLease } from "@/lib/leases";
import { api, signInCookie } from "../../support/api";
import { asMember, joinOrgOf, leaseRow, makeUser } from "../../support/db";

const HEADER = "number,counterparty,currency,issued_on,due_on,line_description,quantity,unit_price_cents";

export type Busy = { orgId: string; aliceId: string; daveId: string; cookie: string; invoiceId: string; leaseId: string };

/** An organization with an import, an edit, a lease opened, proposed and applied, a role change and a budget. */
export async function busyOrganization(db: Db): Promise<Busy> {
  const alice = await makeUser(db, "Alice");
  const cookie = await signInCookie(alice.email);
  const { orgId } = await asMember(db, alice);
  const dave = await makeUser(db, "Dave");
  await joinOrgOf(db, dave, alice, "member");
  const number = `A-${orgId.slice(0, 6)}`;
  const csv = [
    HEADER,
    `${number},Northwind Traders,EUR,2026-11-01,2026-12-01,Consulting,2,50000`,
    `${number},Northwind Traders,EUR,2026-11-01,2026-12-01,Travel,1,12000`,
  ].join("\r\n");
  const imported = await api("POST", "/api/invoices/import", { cookie, raw: `${csv}\r\n`, headers: { "content-type": "text/csv" } });
  expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  const [inv] = rowsOf<{ id: string }>(await db.execute(sql`select id from invoice where org_id = ${orgId} and number = ${number}`));
  const invoiceId = inv!.id;
  expect((await api("PATCH", `/api/invoices/${invoiceId}`, { cookie, json: { counterparty: "Northwind Traders Ltd" } })).status).toBe(200);
  const opened = await api("POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
  expect(opened.status).toBe(201);
  const leaseId = opened.body.lease_id as string;
  const lease = await leaseRow(db, leaseId);
  const proposal = { summary: "Northwind Traders Ltd, EUR 1,120.00", model: "test" };
  expect(await proposeLease(db, { leaseId, actorId: alice.id, runNonce: lease.runNonce, proposal })).toEqual({ ok: true });
  expect((await api("POST", `/api/leases/${leaseId}/apply`, { cookie })).status).toBe(200);
  expect((await api("PATCH", `/api/org/members/${dave.id}`, { cookie, json: { role: "approver" } })).status).toBe(200);
  const budget = {
    organization_daily_cents: null,
    organization_monthly_cents: 100_000,
    member_daily_cents: null,
    member_monthly_cents: null,
  };
  expect((await api("PUT", "/api/org/budget", { cookie, json: budget })).status).toBe(200);
  return { orgId, aliceId: alice.id, daveId: dave.id, cookie, invoiceId, leaseId };
}

/** Runs statements with every trigger off (the append-only guard and the chain's feeds too), in one transaction. */
export async function behindTheTriggers(db: Db, ...statements: SQL[]): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    for (const s of statements) await tx.execute(s);
  });
}

export type EntryRow = { seq: number; source: string; source_key: string; op: string; canonical: string };

export async function entries(db: Db, orgId: string): Promise<EntryRow[]> {
  return rowsOf<EntryRow & { seq: string }>(
    await db.execute(
      sql`select seq::text as seq, source, source_key, op, canonical from audit_entry where org_id = ${orgId} order by audit_entry.seq`,
    ),
  ).map((r) => ({ ...r, seq: Number(r.seq) }));
}
