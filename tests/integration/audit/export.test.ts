// GET /api/audit/export (docs/decisions/0080), through the route handler, on PGlite and
// PostgreSQL: admins only (403 for a member, 401 without a session, 422 for a bad period or
// format, each writing nothing); the export is recorded first and is itself a chain entry; JSON
// and CSV carry the chain's hashes and check offline (checkExport: sha256 and `canonicalize`
// alone); a tail rewritten whole, hashes and head included, verifies in itself but not against
// an export taken before.
import { createHash } from "node:crypto";
import { parse } from "csv-parse/sync";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf } from "@/db/client";
import { checkExport, entrySha256, genesisSha256, type AuditExportDocument, type ChainEntry } from "@/lib/audit/chain";
import { verifyAgainst, verifyChain } from "@/lib/audit/verify";
import { api, signInCookie } from "../../support/api";
import { makeUser, openTestDb, type TestDb } from "../../support/db";
import { behindTheTriggers, busyOrganization, entries } from "./support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(async () => {
  await t?.close();
});

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

async function today(): Promise<{ today: string; tomorrow: string }> {
  const [row] = rowsOf<{ today: string; tomorrow: string }>(
    await t.db.execute(sql`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as today,
      to_char((now() at time zone 'UTC') + interval '1 day', 'YYYY-MM-DD') as tomorrow`),
  );
  return row!;
}

async function counts(orgId: string) {
  const [row] = rowsOf<{ exports: number; entries: number }>(
    await t.db.execute(sql`select (select count(*)::int from audit_export) as exports,
      (select count(*)::int from audit_entry where org_id = ${orgId}) as entries`),
  );
  return row!;
}

describe("GET /api/audit/export: who may, and what is refused", () => {
  it("401 without a session, 403 forbidden for a member, 422 for a bad period or format; none writes anything", async () => {
    const b = await busyOrganization(t.db);
    const { today: from, tomorrow: to } = await today();
    const daveCookie = await signInCookie(
      rowsOf<{ email: string }>(await t.db.execute(sql`select email from app_user where id = ${b.daveId}`))[0]!.email,
    );
    // Dave is an approver now (the busy organization's role change): not an admin.
    const before = await counts(b.orgId);
    expect((await api("GET", `/api/audit/export?from=${from}&to=${to}&format=json`)).status).toBe(401);
    const refused = await api("GET", `/api/audit/export?from=${from}&to=${to}&format=json`, { cookie: daveCookie });
    expect(refused).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    for (const query of [
      "",
      `from=${from}&to=${to}`,
      `from=${from}&to=${to}&format=xml`,
      `from=${from}&format=csv`,
      `to=${to}&format=csv`,
      `from=2026-02-30&to=2026-03-02&format=csv`,
      `from=2026-1-1&to=2026-02-01&format=csv`,
      `from=${to}&to=${from}&format=csv`,
      `from=${from}&to=${from}&format=csv`,
      `from=2024-01-01&to=2025-01-02&format=json`,
      `from=2026-01-01T00:00:00Z&to=2026-02-01&format=json`,
      `from=%00&to=2026-02-01&format=json`,
    ]) {
      const res = await api("GET", `/api/audit/export?${query}`, { cookie: b.cookie });
      expect(res, query).toMatchObject({ status: 422, body: { detail: "invalid_request" } });
    }
    // A member's bad query is 422 too (judged before the role, as the other admin routes do).
    expect((await api("GET", "/api/audit/export?format=json", { cookie: daveCookie })).status).toBe(422);
    expect(await counts(b.orgId)).toEqual(before);
  });

  it("366 days is the longest period", async () => {
    const b = await busyOrganization(t.db);
    expect((await api("GET", "/api/audit/export?from=2024-01-01&to=2025-01-01&format=json", { cookie: b.cookie })).status).toBe(200);
  });
});

describe("GET /api/audit/export: what it carries", () => {
  it("JSON: the period's entries with their hashes, checked offline; the export is recorded and is a chain entry", async () => {
    const b = await busyOrganization(t.db);
    const { today: from, tomorrow: to } = await today();
    const chain = await entries(t.db, b.orgId);
    const res = await api("GET", `/api/audit/export?from=${from}&to=${to}&format=json`, { cookie: b.cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="audit-${from}-${to}.json"`);
    const doc = res.body as AuditExportDocument;
    expect(doc).toMatchObject({ org_id: b.orgId, genesis_sha256: genesisSha256(b.orgId), from, to });
    expect(doc.entries.map((e) => e.seq)).toEqual(chain.map((e) => e.seq));
    expect(doc.head).toEqual({ seq: chain.length, entry_sha256: doc.entries[doc.entries.length - 1]!.entry_sha256 });
    expect(checkExport(doc)).toEqual({ ok: true, entries: chain.length });
    // Recorded, with its head, and appended to the chain, by the admin.
    const [recorded] = rowsOf<{ id: string; head_seq: string; actor_id: string; format: string }>(
      await t.db.execute(sql`select id, head_seq::text as head_seq, actor_id, format from audit_export where org_id = ${b.orgId}`),
    );
    expect(recorded).toMatchObject({ head_seq: String(chain.length), actor_id: b.aliceId, format: "json" });
    const after = await entries(t.db, b.orgId);
    expect(after).toHaveLength(chain.length + 1);
    expect(after[after.length - 1]).toMatchObject({ source: "audit_export", source_key: recorded!.id, op: "insert" });
    expect(JSON.parse(after[after.length - 1]!.canonical)).toMatchObject({ actor_id: b.aliceId, row: { from_day: from, to_day: to } });
    const [report] = await verifyChain(t.db, { orgId: b.orgId });
    expect(report!.failure).toBeNull();
    expect(await verifyAgainst(t.db, doc)).toBeNull();
  });

  it("CSV: the same columns, each line checked offline", async () => {
    const b = await busyOrganization(t.db);
    const { today: from, tomorrow: to } = await today();
    const res = await api("GET", `/api/audit/export?from=${from}&to=${to}&format=csv`, { cookie: b.cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    // (Response.text() drops the byte-order mark.)
    const text = (res.body as string).replace(/^\ufeff/, "");
    expect(text.startsWith("seq,at,source,source_key,op,actor_id,canonical,content_sha256,prev_sha256,entry_sha256\r\n")).toBe(true);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    const slice = rows.map((r) => ({ ...r, seq: Number(r.seq), actor_id: r.actor_id || null }) as ChainEntry);
    const chain = await entries(t.db, b.orgId);
    expect(slice.map((e) => e.seq)).toEqual(chain.slice(0, -1).map((e) => e.seq)); // the export's own entry comes after its cut
    const head = { seq: slice.length, entry_sha256: slice[slice.length - 1]!.entry_sha256 };
    expect(checkExport({ org_id: b.orgId, genesis_sha256: genesisSha256(b.orgId), from, to, entries: slice, head })).toEqual({
      ok: true,
      entries: slice.length,
    });
  });

  it("a period with nothing in it is an empty export, recorded all the same", async () => {
    const b = await busyOrganization(t.db);
    const before = await counts(b.orgId);
    const res = await api("GET", "/api/audit/export?from=2020-01-01&to=2020-02-01&format=json", { cookie: b.cookie });
    expect(res.status).toBe(200);
    expect(res.body.entries).toEqual([]);
    expect(checkExport(res.body)).toEqual({ ok: true, entries: 0 });
    expect(await counts(b.orgId)).toEqual({ exports: before.exports + 1, entries: before.entries + 1 });
  });

  it("only the admin's own organization's entries", async () => {
    const b = await busyOrganization(t.db);
    const other = await busyOrganization(t.db);
    const { today: from, tomorrow: to } = await today();
    const res = await api("GET", `/api/audit/export?from=${from}&to=${to}&format=json`, { cookie: other.cookie });
    expect(res.body.org_id).toBe(other.orgId);
    const mine = new Set((await entries(t.db, b.orgId)).map((e) => e.canonical));
    expect((res.body as AuditExportDocument).entries.some((e) => mine.has(e.canonical))).toBe(false);
  });
});

describe("checking an export", () => {
  it("offline: an entry altered in the file is caught, at that entry", async () => {
    const b = await busyOrganization(t.db);
    const { today: from, tomorrow: to } = await today();
    const doc = (await api("GET", `/api/audit/export?from=${from}&to=${to}&format=json`, { cookie: b.cookie })).body as AuditExportDocument;
    const altered = structuredClone(doc);
    altered.entries[2]!.canonical = altered.entries[2]!.canonical.replace('"op":"insert"', '"op":"delete"');
    expect(checkExport(altered)).toMatchObject({ ok: false, failure: { kind: "changed", seq: 3 } });
    const dropped = structuredClone(doc);
    dropped.entries.splice(1, 1);
    expect(checkExport(dropped)).toMatchObject({ ok: false, failure: { kind: "deleted", seq: 2 } });
    const spliced = { ...structuredClone(doc), org_id: (await makeUser(t.db, "Eve")).id };
    expect(checkExport(spliced)).toMatchObject({ ok: false });
  });

  it("against the database: a tail rewritten whole, hashes and head included, verifies in itself but not against the export", async () => {
    const b = await busyOrganization(t.db);
    const { today: from, tomorrow: to } = await today();
    const doc = (await api("GET", `/api/audit/export?from=${from}&to=${to}&format=json`, { cookie: b.cookie })).body as AuditExportDocument;
    // Rewrite the role change and everything after it, as someone holding the database could.
    const chain = await entries(t.db, b.orgId);
    const from_ = chain.find((e) => e.source === "membership" && e.op === "update")!.seq;
    const rows = rowsOf<{ seq: string; canonical: string; prev_sha256: string }>(
      await t.db.execute(
        sql`select seq::text as seq, canonical, prev_sha256 from audit_entry where org_id = ${b.orgId} and seq >= ${from_} order by audit_entry.seq`,
      ),
    );
    let prev = rows[0]!.prev_sha256;
    const statements = [];
    for (const r of rows) {
      const seq = Number(r.seq);
      const canonical = seq === from_ ? r.canonical.replace('"role":"approver"', '"role":"admin"') : r.canonical;
      const content = sha256(canonical);
      const entry = entrySha256(prev, seq, content);
      statements.push(
        sql`update audit_entry set canonical = ${canonical}, content_sha256 = ${content}, prev_sha256 = ${prev}, entry_sha256 = ${entry}
          where org_id = ${b.orgId} and seq = ${seq}`,
      );
      prev = entry;
    }
    statements.push(sql`update audit_head set entry_sha256 = ${prev} where org_id = ${b.orgId}`);
    // The membership too, so that the rows agree with the forged trail.
    statements.push(sql`update membership set role = 'admin' where org_id = ${b.orgId} and user_id = ${b.daveId}`);
    await behindTheTriggers(t.db, ...statements);
    const [report] = await verifyChain(t.db, { orgId: b.orgId });
    expect(report!.failure).toBeNull();
    expect(await verifyAgainst(t.db, doc)).toMatchObject({ kind: "changed", seq: from_, source: "membership" });
  });
});
