// The deadline is judged when the lease row is ours (decision 0045): apply
// and propose that wait on a lease row another connection holds must judge the deadline on
// the clock once the lock is theirs, fail closed when it passed meanwhile, and date their
// events by the moment of the transition. PostgreSQL only: holding a row while another
// transaction waits on it needs two connections, and PGlite has one.
import { eq, sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { inferenceLease, leaseEvent } from "@/db/schema";
import { applyLease, proposeLease } from "@/lib/leases";
import { invoiceRow, leaseRow, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

if (inject("dbKind") !== "postgres") {
  throw new Error(
    "deadline-at-lock.connections.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).",
  );
}

let t: TestDb;
/** The other connection, which holds the lease row. */
let holder: postgres.Sql;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  holder = postgres(url.toString(), { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await holder?.end();
  await t?.close();
});

async function lease(status: "open" | "proposed", ttlMs: number) {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  const [row] = await t.db
    .insert(inferenceLease)
    .values({
      actorId: alice.id,
      invoiceId: inv.id,
      purpose: "summarize_invoice",
      status,
      deadlineAt: sql`now() + make_interval(secs => ${ttlMs / 1000})`,
      proposal: status === "proposed" ? { summary: "Held summary", model: "test" } : null,
    })
    .returning();
  return { alice, inv, lease: row! };
}

/**
 * Runs `during` while the holder's transaction has the lease row FOR UPDATE (changing
 * nothing, the case where PostgreSQL does not re-evaluate a waiter's WHERE), and lets go
 * after `holdMs`. Resolves with `during`'s result and the holder's clock when it let go.
 */
async function whileRowHeld<T>(leaseId: string, holdMs: number, during: () => Promise<T>): Promise<{ result: T; releasedAt: Date }> {
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  let releasedAt!: Date;
  const held = holder.begin(async (tx) => {
    await tx`select id from inference_lease where id = ${leaseId} for update`;
    locked();
    await new Promise((r) => setTimeout(r, holdMs));
    [{ releasedAt }] = (await tx`select clock_timestamp() as "releasedAt"`) as unknown as [{ releasedAt: Date }];
  });
  await isLocked;
  const pending = during();
  await held;
  return { result: await pending, releasedAt };
}

const eventsOf = (leaseId: string) =>
  t.db
    .select({ kind: leaseEvent.kind, at: leaseEvent.at, detail: leaseEvent.detail })
    .from(leaseEvent)
    .where(eq(leaseEvent.leaseId, leaseId))
    .orderBy(leaseEvent.id);

describe("a lease row held past its deadline", () => {
  it("apply waits for the row, finds the deadline passed: expired, refused, the invoice untouched", async () => {
    const { alice, inv, lease: l } = await lease("proposed", 1_000);
    const { result, releasedAt } = await whileRowHeld(l.id, 2_000, () => applyLease(t.db, alice.id, l.id));

    expect(result).toEqual({ ok: false, code: "lease_expired" });
    expect(await invoiceRow(t.db, inv.id)).toMatchObject({ summary: null, version: inv.version });
    expect(await leaseRow(t.db, l.id)).toMatchObject({ status: "expired", closedReason: "deadline_passed" });
    const events = await eventsOf(l.id);
    expect(events.map((e) => [e.kind, e.detail])).toEqual([
      ["expired", { by: "apply" }],
      ["apply_refused", { code: "lease_expired" }],
    ]);
    // When it really expired: after the deadline and after the row was let go.
    expect(events[0]!.at.getTime()).toBeGreaterThan(l.deadlineAt.getTime());
    expect(events[0]!.at.getTime()).toBeGreaterThanOrEqual(releasedAt.getTime());
  });

  it("propose waits for the row, finds the deadline passed: expired and a late completion, no proposal", async () => {
    const { alice, lease: l } = await lease("open", 1_000);
    const { result, releasedAt } = await whileRowHeld(l.id, 2_000, () =>
      proposeLease(t.db, { leaseId: l.id, actorId: alice.id, runNonce: l.runNonce, proposal: { summary: "Late", model: "test" } }),
    );

    expect(result).toEqual({ ok: false, code: "late_completion", status: "expired" });
    expect(await leaseRow(t.db, l.id)).toMatchObject({ status: "expired", closedReason: "deadline_passed", proposal: null });
    const events = await eventsOf(l.id);
    expect(events.map((e) => [e.kind, e.detail])).toEqual([
      ["expired", { by: "propose" }],
      ["late_completion", { status: "expired", model: "test" }],
    ]);
    expect(events[0]!.at.getTime()).toBeGreaterThan(l.deadlineAt.getTime());
    expect(events[0]!.at.getTime()).toBeGreaterThanOrEqual(releasedAt.getTime());
  });
});

describe("a lease row held within its deadline", () => {
  it("apply's applied event and the lease's updated_at say when it applied, not when its transaction began", async () => {
    const { alice, inv, lease: l } = await lease("proposed", 30_000);
    const { result, releasedAt } = await whileRowHeld(l.id, 1_000, () => applyLease(t.db, alice.id, l.id));

    expect(result).toEqual({ ok: true, invoiceVersion: inv.version + 1, written: ["summary"] });
    const [applied] = await eventsOf(l.id);
    expect(applied!.kind).toBe("applied");
    expect(applied!.at.getTime()).toBeGreaterThanOrEqual(releasedAt.getTime());
    expect((await leaseRow(t.db, l.id)).updatedAt!.getTime()).toBeGreaterThanOrEqual(releasedAt.getTime());
  });

  it("apply's applied event is dated when apply was judged in time, not by its later insert (the invoice's write took long)", async () => {
    const { alice, inv, lease: l } = await lease("proposed", 400);
    // The invoice's write, between the judgment and the event, takes 600 ms: longer than the lease has left.
    await t.db.execute(
      sql.raw(`create function slow_invoice_write() returns trigger language plpgsql as $$ begin perform pg_sleep(0.6); return new; end $$;
        create trigger slow_invoice_write before update on invoice for each row when (old.id = '${inv.id}') execute function slow_invoice_write()`),
    );
    try {
      const [{ ms: started }] = (await holder`select floor(extract(epoch from clock_timestamp()) * 1000)::float8 as ms`) as unknown as [
        { ms: number },
      ];
      expect(await applyLease(t.db, alice.id, l.id)).toEqual({ ok: true, invoiceVersion: inv.version + 1, written: ["summary"] });
      const [applied] = await eventsOf(l.id);
      expect(applied!.kind).toBe("applied");
      const deadline = (await leaseRow(t.db, l.id)).deadlineAt.getTime();
      expect(applied!.at.getTime()).toBeLessThan(deadline);
      expect(applied!.at.getTime()).toBeGreaterThanOrEqual(started);
    } finally {
      await t.db.execute(sql.raw(`drop trigger slow_invoice_write on invoice; drop function slow_invoice_write()`));
    }
  });

  it("propose's proposed event says when it proposed", async () => {
    const { alice, lease: l } = await lease("open", 30_000);
    const { result, releasedAt } = await whileRowHeld(l.id, 1_000, () =>
      proposeLease(t.db, { leaseId: l.id, actorId: alice.id, runNonce: l.runNonce, proposal: { summary: "In time", model: "test" } }),
    );

    expect(result).toEqual({ ok: true });
    const [proposed] = await eventsOf(l.id);
    expect(proposed!.kind).toBe("proposed");
    expect(proposed!.at.getTime()).toBeGreaterThanOrEqual(releasedAt.getTime());
  });
});
