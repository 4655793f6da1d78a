// `audit:verify` on a live database: budget writes commit while the chain is walked and its rows
// are read. Each organization is verified on one snapshot (lib/audit/verify.ts), so a commit
// between the walk and the rows (its entry appended with it) cannot read as a row its entries do
// not explain. Several connections at once: PostgreSQL only.
import { beforeAll, afterAll, expect, inject, it } from "vitest";
import { verifyChain } from "@/lib/audit/verify";
import { api } from "../../support/api";
import { openTestDb, type TestDb } from "../../support/db";
import { busyOrganization, type Busy } from "./support";

let t: TestDb;
let org: Busy;
beforeAll(async () => {
  if (inject("dbKind") !== "postgres") throw new Error("verify-live.connections.test.ts needs PostgreSQL");
  t = await openTestDb();
  org = await busyOrganization(t.db);
});
afterAll(async () => {
  await t?.close();
});

it("a chain verified while budget writes commit is never reported changed", async () => {
  const failures: string[] = [];
  let writes = 0;
  for (let round = 0; round < 40; round++) {
    const budget = (k: number) => ({
      organization_daily_cents: null,
      organization_monthly_cents: 100_000 + round * 10 + k,
      member_daily_cents: null,
      member_monthly_cents: null,
    });
    const writers = Array.from({ length: 4 }, async (_, k) => {
      const res = await api("PUT", "/api/org/budget", { cookie: org.cookie, json: budget(k) });
      expect(res.status).toBe(200);
      writes++;
    });
    const [report] = await verifyChain(t.db, { orgId: org.orgId });
    if (report!.failure) failures.push(`round ${round}: ${JSON.stringify(report!.failure)}`);
    await Promise.all(writers);
  }
  expect(writes).toBe(160);
  expect(failures).toEqual([]);
  // And once the writes have settled, the whole chain verifies.
  const [last] = await verifyChain(t.db, { orgId: org.orgId });
  expect(last!.failure).toBeNull();
});
