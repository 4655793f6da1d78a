// The four-eyes lane costs the lifecycle under `self` no statement (docs/decisions/0078): apply
// asks its lease lock whether a request exists and left-joins the policy into its invoice lock,
// so the statements an apply sends are the ones it sent before the lane. Counted through
// drizzle's logger, which every statement of the handle's transactions passes (PGlite and
// postgres.js alike). The figure is the one apply sent before the lane (b5971c2).
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyLease } from "@/lib/leases";
import { api, signInCookie } from "../../support/api";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { proposedLease } from "../purposes/purpose-support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

/** Runs `work` with every statement the handle sends recorded. */
async function statements(work: () => Promise<unknown>): Promise<string[]> {
  const session = (t.db as unknown as { session: { logger: unknown; options: { logger?: unknown } } }).session;
  const sent: string[] = [];
  const logger = { logQuery: (query: string) => void sent.push(query) };
  const [before, beforeOption] = [session.logger, session.options.logger];
  session.logger = logger;
  session.options.logger = logger;
  try {
    await work();
  } finally {
    session.logger = before;
    session.options.logger = beforeOption;
  }
  return sent;
}

it("an apply under self sends as many statements as before the lane: 6 for a summary", async () => {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  const { leaseId } = await proposedLease(t.db, alice.id, inv.id, "summarize_invoice");
  const sent = await statements(() => applyLease(t.db, alice.id, leaseId));
  expect(sent.filter((q) => !/^(begin|commit|rollback)/i.test(q.trim()))).toHaveLength(6);
});

it("POST /api/leases/:id/apply under self: the session held, then the same 6 (7 in all)", async () => {
  const alice = await makeUser(t.db, "Alice");
  const cookie = await signInCookie(alice.email);
  const inv = await makeInvoice(t.db, alice.id);
  const { leaseId } = await proposedLease(t.db, alice.id, inv.id, "summarize_invoice");
  let status = 0;
  const sent = await statements(async () => {
    status = (await api("POST", `/api/leases/${leaseId}/apply`, { cookie })).status;
  });
  expect(status).toBe(200);
  expect(sent.filter((q) => !/^(begin|commit|rollback)/i.test(q.trim()))).toHaveLength(7);
});
