// The bench's in-process generation (bench/support/generate-in-process.ts, `npm run bench
// lifecycle`'s domain figures) mirrors the real Inngest function (inngest/generate-lease-proposal.ts):
// for every purpose, a lifecycle through each writes the same lease row and the same one
// model_usage row (the call's usage, priced, written by propose), so the bench measures the
// statements production runs. Before this test the mirror proposed without the usage: no row.
import { InngestTestEngine } from "@inngest/test";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { orgBudget } from "@/db/schema";
import { generateLeaseProposal } from "@/inngest/generate-lease-proposal";
import { applyLease } from "@/lib/leases";
import { createLocalProvider } from "@/lib/model";
import { PURPOSES } from "@/lib/purposes";
import { generateInProcess } from "@/bench/support/generate-in-process";
import { asMember, eventKinds, leaseRow, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { opened } from "../../harness/step-data";
import { openedLease, usageRows, withEnv } from "./support";

let t: TestDb;
let restore: () => void = () => {};
beforeAll(async () => {
  t = await openTestDb();
  restore = withEnv({ MODEL_PROVIDER: "local", MODEL_PRICE_PER_MTOK: "1000,2000", MODEL_LATENCY_MS: undefined });
});
afterAll(async () => {
  restore();
  await t?.close();
});
afterEach(() => vi.restoreAllMocks());

/** A usage row without what names its own lease, invoice or moment. */
const shape = ({ id: _id, leaseId, invoiceId: _inv, at: _at, callKey, ...row }: Awaited<ReturnType<typeof usageRows>>[number]) => ({
  ...row,
  callKey: callKey.replace(leaseId, "<lease>"),
});

it.each(PURPOSES)("%s: the mirror writes what the real function writes, one model_usage row per lifecycle", async (purpose) => {
  const alice = await makeUser(t.db, "Alice");
  const { orgId } = await asMember(t.db, alice);
  // A cap, so the open reserves and the propose must clear the reservation.
  await t.db.insert(orgBudget).values({ orgId, organizationMonthlyCents: 1_000_000 });
  const invoices = [
    await makeInvoice(t.db, alice.id, { counterparty: "Northwind Traders" }),
    await makeInvoice(t.db, alice.id, { counterparty: "Northwind Traders" }),
  ];
  const realLease = await openedLease(t.db, alice.id, invoices[0]!.id, purpose);
  const { result } = await new InngestTestEngine({
    function: generateLeaseProposal,
    events: [{ name: "lease/opened", id: `lease-opened-${realLease.data.leaseId}`, data: realLease.data }],
  }).execute();
  expect(await opened(result)).toEqual({ leaseId: realLease.lease.id, outcome: "proposed" });

  const mirrorLease = await openedLease(t.db, alice.id, invoices[1]!.id, purpose);
  expect(await generateInProcess(t.db, mirrorLease.lease.id, mirrorLease.data.runNonce, createLocalProvider({ latencyMs: 0 }))).toBe(
    "proposed",
  );

  const [realUsage, mirrorUsage] = [await usageRows(t.db, realLease.lease.id), await usageRows(t.db, mirrorLease.lease.id)];
  expect(realUsage).toHaveLength(1);
  expect(mirrorUsage.map(shape)).toEqual(realUsage.map(shape));
  expect(mirrorUsage[0]).toMatchObject({ outcome: "proposed", purpose, actorId: alice.id, orgId });
  for (const id of [realLease.lease.id, mirrorLease.lease.id]) {
    expect(await leaseRow(t.db, id)).toMatchObject({ status: "proposed", reservedCents: null });
  }
  expect(await eventKinds(t.db, mirrorLease.lease.id)).toEqual(await eventKinds(t.db, realLease.lease.id));
  // Then the bench applies, as the lifecycle does: nothing more is counted.
  expect((await applyLease(t.db, alice.id, mirrorLease.lease.id)).ok).toBe(true);
  expect(await usageRows(t.db, mirrorLease.lease.id)).toHaveLength(1);
});
