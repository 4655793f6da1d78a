// `npm run audit:verify` itself (tools/audit-verify.ts), as an operator runs it against the app's
// PostgreSQL: one line per organization, exit 0 on a clean chain, exit 1 naming the entry at
// fault, and `--against` an export catching a tail rewritten whole. The tool is a process of its
// own with a connection of its own: PostgreSQL only (PGlite's in-memory database is this test's alone).
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { rowsOf } from "@/db/client";
import { entrySha256, sha256 } from "@/lib/audit/chain";
import { TSX_SERVER_FLAGS } from "../../../tools/tsx-server";
import { api } from "../../support/api";
import { openTestDb, type TestDb } from "../../support/db";
import { behindTheTriggers, busyOrganization, entries } from "./support";

let t: TestDb;
beforeAll(async () => {
  if (inject("dbKind") !== "postgres") throw new Error("verify-command.connections.test.ts needs PostgreSQL");
  t = await openTestDb();
});
afterAll(async () => {
  await t?.close();
});

async function verifyCommand(...args: string[]): Promise<{ code: number; out: string }> {
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  try {
    const { stdout } = await promisify(execFile)("npx", ["tsx", ...TSX_SERVER_FLAGS, "tools/audit-verify.ts", ...args], {
      env: { ...process.env, DATABASE_URL: url.toString() },
    });
    return { code: 0, out: stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: `${e.stdout}${e.stderr}` };
  }
}

describe("npm run audit:verify", () => {
  it("ok and exit 0 on a clean chain; exit 1 naming the deleted entry; --against an export catches a tail rewritten whole", async () => {
    const b = await busyOrganization(t.db);
    const clean = await verifyCommand("--org", b.orgId);
    expect(clean.code, clean.out).toBe(0);
    expect(clean.out).toMatch(new RegExp(`^${b.orgId}: ok, \\d+ entries, head [0-9a-f]{64}$`, "m"));

    const [today] = rowsOf<{ from: string; to: string }>(
      await t.db.execute(sql`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as from,
        to_char((now() at time zone 'UTC') + interval '1 day', 'YYYY-MM-DD') as to`),
    );
    const exported = await api("GET", `/api/audit/export?from=${today!.from}&to=${today!.to}&format=json`, { cookie: b.cookie });
    expect(exported.status).toBe(200);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "audit-")), "export.json");
    fs.writeFileSync(file, JSON.stringify(exported.body));
    const against = await verifyCommand("--org", b.orgId, "--against", file);
    expect(against.code, against.out).toBe(0);
    expect(against.out).toContain(`export ${file}: ok`);

    // The last entry before the export rewritten with its hashes and the head: consistent in itself.
    const chain = await entries(t.db, b.orgId);
    const last = chain[chain.length - 2]!;
    const [row] = rowsOf<{ prev_sha256: string }>(
      await t.db.execute(sql`select prev_sha256 from audit_entry where org_id = ${b.orgId} and seq = ${last.seq}`),
    );
    // Its actor made Dave, in the content and the column alike.
    const canonical = last.canonical.replace(`"actor_id":"${b.aliceId}"`, `"actor_id":"${b.daveId}"`);
    expect(canonical).not.toBe(last.canonical);
    const content = sha256(canonical);
    const hash = entrySha256(row!.prev_sha256, last.seq, content);
    const next = chain[chain.length - 1]!;
    const nextContent = sha256(next.canonical);
    await behindTheTriggers(
      t.db,
      sql`update audit_entry set canonical = ${canonical}, actor_id = ${b.daveId}, content_sha256 = ${content}, entry_sha256 = ${hash}
        where org_id = ${b.orgId} and seq = ${last.seq}`,
      sql`update audit_entry set prev_sha256 = ${hash}, entry_sha256 = ${entrySha256(hash, next.seq, nextContent)} where org_id = ${b.orgId} and seq = ${next.seq}`,
      sql`update audit_head set prev_sha256 = ${hash}, entry_sha256 = ${entrySha256(hash, next.seq, nextContent)} where org_id = ${b.orgId}`,
    );
    expect((await verifyCommand("--org", b.orgId)).code).toBe(0);
    const caught = await verifyCommand("--org", b.orgId, "--against", file);
    expect(caught.code).toBe(1);
    expect(caught.out).toContain(`export ${file}: changed at entry ${last.seq}`);

    await behindTheTriggers(t.db, sql`delete from audit_entry where org_id = ${b.orgId} and seq = 3`);
    const deleted = await verifyCommand("--org", b.orgId);
    expect(deleted.code).toBe(1);
    expect(deleted.out).toContain(`${b.orgId}: deleted at entry 3: entry 3 is missing (the next is 4)`);
  }, 120_000);

  it("a bad argument is exit 2 with the usage", async () => {
    const bad = await verifyCommand("--org", "not-an-id");
    expect(bad.code).toBe(2);
    expect(bad.out).toContain("usage: npm run audit:verify");
  });
});
