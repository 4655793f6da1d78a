// The audit chain against hands on the database (docs/decisions/0080): rows of audit_entry
// changed, deleted, reordered and forged with plain SQL, triggers off, and audited rows edited
// behind the chain's back. `verifyChain` (what `npm run audit:verify` runs) names the first entry
// at fault each time; a chain fed by an import, an edit, a lease's lifecycle, a role change and a
// budget verifies clean. PGlite and PostgreSQL.
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf } from "@/db/client";
import { genesisSha256 } from "@/lib/audit/chain";
import { reportLine, verifyChain, type ChainMark } from "@/lib/audit/verify";
import { api } from "../../support/api";
import { openTestDb, type TestDb } from "../../support/db";
import { behindTheTriggers, busyOrganization, entries, type Busy } from "./support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(async () => {
  await t?.close();
});

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

async function verdict(orgId: string) {
  const [report] = await verifyChain(t.db, { orgId });
  return report!;
}

/** The seq of the organization's first entry from `source` (with `op`). */
async function seqOf(b: Busy, source: string, op = "insert", nth = 0): Promise<number> {
  const found = (await entries(t.db, b.orgId)).filter((e) => e.source === source && e.op === op);
  expect(found.length).toBeGreaterThan(nth);
  return found[nth]!.seq;
}

describe("a clean chain", () => {
  it("records every feed in one order per organization, and verifies", async () => {
    const b = await busyOrganization(t.db);
    const all = await entries(t.db, b.orgId);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    const kinds = all.map((e) => `${e.source}:${e.op}${e.source === "lease_event" ? `:${JSON.parse(e.canonical).row.kind}` : ""}`);
    for (const k of [
      "membership:insert",
      "invoice_change:insert",
      "lease_event:insert:opened",
      "lease_event:insert:proposed",
      "lease_event:insert:applied",
      "membership:update",
      "org_budget:insert",
    ]) {
      expect(kinds).toContain(k);
    }
    // Imported, then edited: both invoice changes, each naming its actor.
    const changes = all.filter((e) => e.source === "invoice_change").map((e) => JSON.parse(e.canonical));
    expect(changes.map((c) => c.row.kind)).toEqual(["imported", "edited"]);
    expect(changes.every((c) => c.actor_id === b.aliceId)).toBe(true);
    // The role change names the admin who made it, and the role before.
    const role = JSON.parse(all.find((e) => e.source === "membership" && e.op === "update")!.canonical);
    expect(role).toMatchObject({ actor_id: b.aliceId, before: { role: "member" }, row: { role: "approver", user_id: b.daveId } });
    const report = await verdict(b.orgId);
    expect(report.failure, reportLine(report)).toBeNull();
    expect(report.entries).toBe(all.length);
    expect(reportLine(report)).toBe(`${b.orgId}: ok, ${all.length} entries, head ${report.head}`);
    // The first entry follows the organization's genesis.
    const [first] = rowsOf<{ prev_sha256: string }>(
      await t.db.execute(sql`select prev_sha256 from audit_entry where org_id = ${b.orgId} and seq = 1`),
    );
    expect(first!.prev_sha256).toBe(genesisSha256(b.orgId));
  });

  it("the trail refuses an UPDATE, a DELETE and a TRUNCATE while the triggers are on", async () => {
    const b = await busyOrganization(t.db);
    await expect(t.db.execute(sql`update audit_entry set op = 'update' where org_id = ${b.orgId} and seq = 1`)).rejects.toThrow();
    await expect(t.db.execute(sql`delete from audit_entry where org_id = ${b.orgId} and seq = 1`)).rejects.toThrow();
    await expect(t.db.execute(sql`truncate audit_entry`)).rejects.toThrow();
    expect((await verdict(b.orgId)).failure).toBeNull();
  });

  it("a write rolled back appends nothing", async () => {
    const b = await busyOrganization(t.db);
    const before = (await entries(t.db, b.orgId)).length;
    await expect(
      t.db.transaction(async (tx) => {
        await tx.execute(sql`update org_budget set member_daily_cents = 5 where org_id = ${b.orgId}`);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect((await entries(t.db, b.orgId)).length).toBe(before);
    expect((await verdict(b.orgId)).failure).toBeNull();
  });
});

describe("tampered with by hand, caught, naming the entry", () => {
  it("an entry's content changed: changed, at that entry", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "membership", "update");
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set canonical = replace(canonical, '"role":"approver"', '"role":"admin"') where org_id = ${b.orgId} and seq = ${seq}`,
    );
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "changed", seq, source: "membership" });
  });

  it("an entry's content changed and rehashed: changed, at that entry (its entry hash no longer adds up)", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "invoice_change");
    const [row] = rowsOf<{ canonical: string }>(
      await t.db.execute(sql`select canonical from audit_entry where org_id = ${b.orgId} and seq = ${seq}`),
    );
    const forged = row!.canonical.replace('"kind":"imported"', '"kind":"created"');
    expect(forged).not.toBe(row!.canonical);
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set canonical = ${forged}, content_sha256 = ${sha256(forged)} where org_id = ${b.orgId} and seq = ${seq}`,
    );
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "changed", seq, source: "invoice_change" });
  });

  it("an entry rewritten with all its hashes: out of order, at the entry after it", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "lease_event");
    const [row] = rowsOf<{ canonical: string; prev_sha256: string }>(
      await t.db.execute(sql`select canonical, prev_sha256 from audit_entry where org_id = ${b.orgId} and seq = ${seq}`),
    );
    const forged = row!.canonical.replace('"kind":"opened"', '"kind":"cancelled"');
    expect(forged).not.toBe(row!.canonical);
    const content = sha256(forged);
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set canonical = ${forged}, content_sha256 = ${content}, entry_sha256 = ${sha256(`${row!.prev_sha256}:${seq}:${content}`)}
        where org_id = ${b.orgId} and seq = ${seq}`,
    );
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "out_of_order", seq: seq + 1 });
  });

  it("content rewritten in another JSON form, its hashes made to match: not canonical, at that entry", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "membership", "update");
    const [row] = rowsOf<{ canonical: string; prev_sha256: string }>(
      await t.db.execute(sql`select canonical, prev_sha256 from audit_entry where org_id = ${b.orgId} and seq = ${seq}`),
    );
    const reworded = JSON.stringify(JSON.parse(row!.canonical), null, 1);
    const content = sha256(reworded);
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set canonical = ${reworded}, content_sha256 = ${content}, entry_sha256 = ${sha256(`${row!.prev_sha256}:${seq}:${content}`)}
        where org_id = ${b.orgId} and seq = ${seq}`,
    );
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "not_canonical", seq, source: "membership" });
  });

  it("a column that disagrees with the entry's content (the actor): changed", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "org_budget");
    await behindTheTriggers(t.db, sql`update audit_entry set actor_id = ${b.daveId} where org_id = ${b.orgId} and seq = ${seq}`);
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "changed", seq, source: "org_budget" });
  });

  it("an entry deleted: deleted, naming the missing seq", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "lease_event", "insert", 1);
    await behindTheTriggers(t.db, sql`delete from audit_entry where org_id = ${b.orgId} and seq = ${seq}`);
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "deleted", seq });
  });

  it("the last entries deleted: deleted, from the first one missing (the head is ahead)", async () => {
    const b = await busyOrganization(t.db);
    const all = await entries(t.db, b.orgId);
    const from = all[all.length - 2]!.seq;
    await behindTheTriggers(t.db, sql`delete from audit_entry where org_id = ${b.orgId} and seq >= ${from}`);
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "deleted", seq: from });
  });

  it("two entries swapped: out of order, at the first of them", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "invoice_change");
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set seq = -1 where org_id = ${b.orgId} and seq = ${seq}`,
      sql`update audit_entry set seq = ${seq} where org_id = ${b.orgId} and seq = ${seq + 1}`,
      sql`update audit_entry set seq = ${seq + 1} where org_id = ${b.orgId} and seq = -1`,
    );
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "out_of_order", seq });
  });

  it("an entry inserted in the middle, the rest renumbered: out of order, at the inserted one", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "membership", "update");
    const [row] = rowsOf<{ canonical: string }>(
      await t.db.execute(sql`select canonical from audit_entry where org_id = ${b.orgId} and seq = ${seq}`),
    );
    const content = sha256(row!.canonical);
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set seq = -seq where org_id = ${b.orgId} and seq >= ${seq}`,
      sql`update audit_entry set seq = -seq + 1 where org_id = ${b.orgId} and seq < 0`,
      sql`insert into audit_entry (org_id, seq, at, source, source_key, op, actor_id, canonical, content_sha256, prev_sha256, entry_sha256)
        select org_id, ${seq}, at, source, source_key, op, actor_id, canonical, content_sha256, ${"0".repeat(64)},
          ${sha256(`${"0".repeat(64)}:${seq}:${content}`)}
        from audit_entry where org_id = ${b.orgId} and seq = ${seq + 1}`,
      sql`update audit_head set seq = seq + 1 where org_id = ${b.orgId}`,
    );
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "out_of_order", seq });
  });

  it("an entry appended past the head by hand: inserted", async () => {
    const b = await busyOrganization(t.db);
    const all = await entries(t.db, b.orgId);
    const last = all[all.length - 1]!;
    const [row] = rowsOf<{ entry_sha256: string }>(
      await t.db.execute(sql`select entry_sha256 from audit_entry where org_id = ${b.orgId} and seq = ${last.seq}`),
    );
    const canonical = last.canonical;
    const content = sha256(canonical);
    await behindTheTriggers(
      t.db,
      sql`insert into audit_entry (org_id, seq, at, source, source_key, op, actor_id, canonical, content_sha256, prev_sha256, entry_sha256)
        select org_id, ${last.seq + 1}, at, source, source_key, op, actor_id, canonical, content_sha256, ${row!.entry_sha256},
          ${sha256(`${row!.entry_sha256}:${last.seq + 1}:${content}`)} from audit_entry where org_id = ${b.orgId} and seq = ${last.seq}`,
    );
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "inserted", seq: last.seq + 1 });
  });

  it("a lease event edited by hand: source changed, naming its entry", async () => {
    const b = await busyOrganization(t.db);
    const [ev] = rowsOf<{ id: string }>(
      await t.db.execute(sql`select id::text as id from lease_event where lease_id = ${b.leaseId} and kind = 'applied'`),
    );
    const seq = (await entries(t.db, b.orgId)).find((e) => e.source === "lease_event" && e.source_key === ev!.id)!.seq;
    await t.db.execute(sql`update lease_event set detail = '{"note":"nothing to see"}'::jsonb where id = ${ev!.id}`);
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "source_changed", seq, source: "lease_event", key: ev!.id });
  });

  it("an invoice change deleted by hand: source changed (the row is gone)", async () => {
    const b = await busyOrganization(t.db);
    const seq = await seqOf(b, "invoice_change", "insert", 1);
    const key = (await entries(t.db, b.orgId)).find((e) => e.seq === seq)!.source_key;
    await t.db.execute(sql`delete from invoice_change where id = ${Number(key)}`);
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "source_changed", seq, source: "invoice_change", key });
  });

  it("a membership made with the triggers off: unrecorded", async () => {
    const b = await busyOrganization(t.db);
    const [u] = rowsOf<{ id: string }>(
      await t.db.execute(
        sql`insert into app_user (email, name, password_hash) values (${`m-${b.orgId}@example.test`}, 'Mallory', 'x') returning id`,
      ),
    );
    await behindTheTriggers(t.db, sql`insert into membership (org_id, user_id, role) values (${b.orgId}, ${u!.id}, 'admin')`);
    expect((await verdict(b.orgId)).failure).toMatchObject({ kind: "unrecorded", source: "membership", key: `${b.orgId}:${u!.id}` });
  });

  it("one organization's tampering is its own: another's chain still verifies", async () => {
    const b = await busyOrganization(t.db);
    const c = await busyOrganization(t.db);
    await behindTheTriggers(t.db, sql`delete from audit_entry where org_id = ${b.orgId} and seq = 2`);
    const reports = await verifyChain(t.db);
    expect(reports.find((r) => r.orgId === b.orgId)!.failure).toMatchObject({ kind: "deleted", seq: 2 });
    expect(reports.find((r) => r.orgId === c.orgId)!.failure).toBeNull();
  });
});

// What the model test runs after every step: a walk from the mark the last clean walk left, over
// the entries since and the rows they name. It sees what happened since; behind the mark, only
// the marked entry itself; a full walk (no `from`) is still what sees everything.
describe("walked on from a mark", () => {
  /** A clean full walk's mark, then `more` done through the routes. */
  async function marked(more: (b: Busy) => Promise<void>) {
    const b = await busyOrganization(t.db);
    const full = await verdict(b.orgId);
    expect(full.failure).toBeNull();
    const mark = full.mark!;
    const all = await entries(t.db, b.orgId);
    expect(mark).toEqual({ seq: all.length, entry_sha256: full.head });
    await more(b);
    return { b, mark };
  }
  const edit = (b: Busy, counterparty: string) => async () => {
    expect((await api("PATCH", `/api/invoices/${b.invoiceId}`, { cookie: b.cookie, json: { counterparty } })).status).toBe(200);
  };
  async function since(orgId: string, from: ChainMark) {
    const [report] = await verifyChain(t.db, { orgId, from });
    return report!;
  }

  it("walks only the marked entry and those after it, and marks the new head", async () => {
    const { b, mark } = await marked(async (b) => edit(b, "Northwind Traders plc")());
    const all = await entries(t.db, b.orgId);
    expect(all.length).toBeGreaterThan(mark.seq);
    const report = await since(b.orgId, mark);
    expect(report.failure, reportLine(report)).toBeNull();
    expect(report.entries).toBe(all.length - mark.seq + 1);
    expect(report.mark).toEqual({ seq: all.length, entry_sha256: report.head });
    // Nothing new: the marked entry alone, and the same mark.
    const again = await since(b.orgId, report.mark!);
    expect(again).toMatchObject({ failure: null, entries: 1, mark: report.mark });
    // From the genesis mark: every entry, and every row an entry names, picked by its key in
    // audit_source_rows (migration 0015) and rendered as a whole walk renders it, or a clean chain would read as changed.
    expect((await verifyChain(t.db, { orgId: b.orgId, from: { seq: 0, entry_sha256: genesisSha256(b.orgId) } }))[0]).toMatchObject({
      failure: null,
      entries: all.length,
    });
    // `from` is one organization's.
    await expect(verifyChain(t.db, { from: mark })).rejects.toThrow(/needs `orgId`/);
  });

  it("the marked entry deleted, given another hash, or its content changed: named at the mark", async () => {
    const gone = await marked(async () => {});
    await behindTheTriggers(t.db, sql`delete from audit_entry where org_id = ${gone.b.orgId} and seq = ${gone.mark.seq}`);
    expect((await since(gone.b.orgId, gone.mark)).failure).toMatchObject({ kind: "deleted", seq: gone.mark.seq });

    const rehashed = await marked(async () => {});
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set entry_sha256 = ${"1".repeat(64)} where org_id = ${rehashed.b.orgId} and seq = ${rehashed.mark.seq}`,
      sql`update audit_head set entry_sha256 = ${"1".repeat(64)} where org_id = ${rehashed.b.orgId}`,
    );
    expect((await since(rehashed.b.orgId, rehashed.mark)).failure).toMatchObject({ kind: "changed", seq: rehashed.mark.seq });

    const reworded = await marked(async () => {});
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set canonical = replace(canonical, '"org_id"', '"org_id" ') where org_id = ${reworded.b.orgId} and seq = ${reworded.mark.seq}`,
    );
    expect((await since(reworded.b.orgId, reworded.mark)).failure).toMatchObject({ kind: "changed", seq: reworded.mark.seq });
  });

  it("an entry after the mark changed, deleted or appended past the head: named as a full walk names it", async () => {
    const changed = await marked(async (b) => edit(b, "Changed Ltd")());
    const seq = changed.mark.seq + 1;
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set canonical = replace(canonical, 'Changed Ltd', 'Chained Ltd') where org_id = ${changed.b.orgId} and seq = ${seq}`,
    );
    expect((await since(changed.b.orgId, changed.mark)).failure).toMatchObject({ kind: "changed", seq });

    const deleted = await marked(async (b) => {
      await edit(b, "Deleted Ltd")();
      await edit(b, "Deleted again Ltd")();
    });
    await behindTheTriggers(t.db, sql`delete from audit_entry where org_id = ${deleted.b.orgId} and seq = ${deleted.mark.seq + 1}`);
    expect((await since(deleted.b.orgId, deleted.mark)).failure).toMatchObject({ kind: "deleted", seq: deleted.mark.seq + 1 });

    const appended = await marked(async () => {});
    const last = appended.mark.seq;
    await behindTheTriggers(
      t.db,
      sql`insert into audit_entry (org_id, seq, at, source, source_key, op, actor_id, canonical, content_sha256, prev_sha256, entry_sha256)
        select org_id, ${last + 1}, at, source, source_key, op, actor_id, canonical, content_sha256, entry_sha256,
          encode(sha256(convert_to(entry_sha256 || ':' || ${last + 1} || ':' || content_sha256, 'UTF8')), 'hex')
        from audit_entry where org_id = ${appended.b.orgId} and seq = ${last}`,
    );
    expect((await since(appended.b.orgId, appended.mark)).failure).toMatchObject({ kind: "inserted", seq: last + 1 });
  });

  it("a row a new entry names, edited behind it: source changed; a row no new entry names: seen by the full walk only", async () => {
    const { b, mark } = await marked(async (b) => edit(b, "Named Ltd")());
    const named = (await entries(t.db, b.orgId)).find((e) => e.seq > mark.seq && e.source === "invoice_change")!;
    await t.db.execute(sql`update invoice_change set changes = '{"note":"nothing to see"}'::jsonb where id = ${Number(named.source_key)}`);
    expect((await since(b.orgId, mark)).failure).toMatchObject({ kind: "source_changed", seq: named.seq, key: named.source_key });

    const other = await marked(async (b) => edit(b, "Other Ltd")());
    const ev = (await entries(t.db, other.b.orgId)).find((e) => e.seq <= other.mark.seq && e.source === "lease_event")!;
    await t.db.execute(sql`update lease_event set detail = '{"note":"nothing to see"}'::jsonb where id = ${ev.source_key}`);
    expect((await since(other.b.orgId, other.mark)).failure).toBeNull();
    expect((await verdict(other.b.orgId)).failure).toMatchObject({ kind: "source_changed", seq: ev.seq, key: ev.source_key });
  });
});
