// The apply target, held as an invariant on a real database (PGlite or PostgreSQL, per run): for
// each purpose, every column of every invoice and invoice_line row of the organization is read
// before and after an apply, and the only columns that differ are the purpose's target (plus
// invoice.version and updated_at), on the lease's invoice only. A purpose whose apply wrote
// anything else (another purpose's target, a field the model reads, another invoice) fails here.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { applyLease } from "@/lib/leases";
import { PURPOSES, purposeOf } from "@/lib/purposes";
import { joinOrgOf, makeUser, openTestDb, type TestDb } from "../../support/db";
import { invoiceWith, proposedLease } from "./purpose-support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

type Snapshot = Map<string, Record<string, unknown>>;

/** Every row of invoice and invoice_line in the organization, keyed `table:id`, every column by its SQL name. */
async function snapshot(db: Db, orgId: string): Promise<Snapshot> {
  const result = await db.execute(sql`
    select 'invoice' as t, i.id::text as id, to_jsonb(i) as row from invoice i where i.org_id = ${orgId}
    union all
    select 'invoice_line', l.id::text, to_jsonb(l) from invoice_line l join invoice i on i.id = l.invoice_id where i.org_id = ${orgId}`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    t: string;
    id: string;
    row: Record<string, unknown>;
  }[];
  return new Map(rows.map((r) => [`${r.t}:${r.id}`, r.row]));
}

/** `table.column` for every column that differs, with the row it is in. */
function changes(before: Snapshot, after: Snapshot): { column: string; row: string }[] {
  expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
  const changed: { column: string; row: string }[] = [];
  for (const [key, row] of before) {
    const next = after.get(key)!;
    for (const column of Object.keys(row)) {
      if (JSON.stringify(row[column]) !== JSON.stringify(next[column]))
        changed.push({ column: `${key.split(":")[0]}.${column}`, row: key });
    }
  }
  return changed;
}

describe("an apply writes its purpose's target and nothing else", () => {
  for (const purpose of PURPOSES) {
    it(`${purpose}: only ${purposeOf(purpose).target.join(", ")} (and the version), on the lease's invoice only`, async () => {
      const alice = await makeUser(t.db, "Alice");
      const bob = await makeUser(t.db, "Bob");
      const { orgId } = await joinOrgOf(t.db, bob, alice);
      const lines = [
        { description: "Consulting services", quantity: 3, unitPriceCents: 40_000 },
        { description: "Laptop", quantity: 0, unitPriceCents: 150_000 },
      ];
      // Findings to write (the zero-quantity line, a duplicate), and neighbours an apply must leave alone:
      // Alice's other invoice of the same counterparty, and a teammate's.
      const inv = await invoiceWith(t.db, alice.id, { lines, issuedOn: "2026-01-10", dueOn: "2099-01-01" });
      await invoiceWith(t.db, alice.id, { lines, issuedOn: "2026-01-01", dueOn: "2099-01-01" });
      await invoiceWith(t.db, bob.id, { lines, issuedOn: "2026-01-05", dueOn: "2099-01-01" });
      const { leaseId } = await proposedLease(t.db, alice.id, inv.id, purpose);

      const before = await snapshot(t.db, orgId);
      const applied = await applyLease(t.db, alice.id, leaseId);
      expect(applied).toMatchObject({ ok: true });
      const afterApply = await snapshot(t.db, orgId);
      const changed = changes(before, afterApply);

      const allowed = new Set<string>([...purposeOf(purpose).target, "invoice.version", "invoice.updated_at"]);
      expect(changed.filter((c) => !allowed.has(c.column))).toEqual([]);
      // Only the lease's invoice and its lines.
      const own = new Set([`invoice:${inv.id}`, ...[...before.entries()].filter(([, r]) => r.invoice_id === inv.id).map(([k]) => k)]);
      expect(changed.filter((c) => !own.has(c.row))).toEqual([]);
      // Not vacuous: the apply did write each of its target's columns, and bumped the version once.
      expect(new Set(changed.map((c) => c.column))).toEqual(
        new Set([...purposeOf(purpose).target, "invoice.version", "invoice.updated_at"]),
      );
      const version = (snap: Snapshot) => snap.get(`invoice:${inv.id}`)!.version;
      expect(version(afterApply)).toBe(Number(version(before)) + 1);
    });
  }
});
