// The write routes hold their live session inside the transaction that writes, as the server
// actions do (the same finding as the actions', for `POST /api/leases/:id/cancel`, `PATCH /api/invoices/:id`
// and `POST /api/leases`): a request that waits on a row another connection holds either
// commits before a sign-out of its session answers, or writes nothing; and a session that runs
// out (by the database clock) while the request waits writes nothing and is 401 with the
// clearing cookie. The route handlers are called in-process on the test's database, as in
// api.test.ts. PostgreSQL only: a held row needs a second connection, which PGlite cannot give.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { appSession, inferenceLease } from "@/db/schema";
import { api, signInCookie, type ApiResponse } from "../../support/api";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { holderFor, type RowHolder } from "../../support/row-holder";

if (inject("dbKind") !== "postgres") {
  const example = "postgres://postgres@127.0.0.1:5432/postgres";
  throw new Error(`session-held-routes.connections.test.ts needs PostgreSQL: set DATABASE_URL (e.g. ${example}).`);
}

let t: TestDb;
let held: RowHolder;

beforeAll(async () => {
  t = await openTestDb();
  held = holderFor(t);
});
afterAll(async () => {
  await held?.end();
  await t?.close();
});

/**
 * Alice, signed in, with an invoice; `lease`: an open lease of hers on it, opened in another
 * session (so a sign-out of this one leaves it to the request under test), or none.
 */
async function world(opts: { lease: boolean }) {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  const [lease] = opts.lease
    ? await t.db
        .insert(inferenceLease)
        .values({
          actorId: alice.id,
          invoiceId: inv.id,
          purpose: "summarize_invoice",
          status: "open",
          deadlineAt: sql`now() + interval '10 minutes'`,
        })
        .returning()
    : [];
  const cookie = await signInCookie(alice.email);
  const [session] = await t.db.select({ id: appSession.id }).from(appSession).where(eq(appSession.userId, alice.id));
  return { alice, inv, leaseId: lease?.id ?? "", cookie, sessionId: session!.id };
}

const open = (w: World) => api("POST", "/api/leases", { cookie: w.cookie, json: { invoice_id: w.inv.id, purpose: "summarize_invoice" } });

type World = Awaited<ReturnType<typeof world>>;
type Case = {
  name: string;
  lease: boolean;
  /** What the other connection holds while the request runs: a row FOR UPDATE, or an insert it rolls back. */
  held: (w: World) => string;
  rollback?: boolean;
  send: (w: World) => Promise<ApiResponse>;
  /** The success status when the session lives. */
  ok: number;
  /** Whether that success writes (the lease already in flight is answered as it is). */
  writes: boolean;
};

const CASES: Case[] = [
  {
    name: "POST /api/leases/:id/cancel",
    lease: true,
    held: (w) => `select id from inference_lease where id = '${w.leaseId}' for update`,
    send: (w) => api("POST", `/api/leases/${w.leaseId}/cancel`, { cookie: w.cookie }),
    ok: 200,
    writes: true,
  },
  {
    name: "PATCH /api/invoices/:id",
    lease: false,
    held: (w) => `select id from invoice where id = '${w.inv.id}' for update`,
    send: (w) => api("PATCH", `/api/invoices/${w.inv.id}`, { cookie: w.cookie, json: { counterparty: "Edited" } }),
    ok: 200,
    writes: true,
  },
  {
    name: "POST /api/invoices/:id/status",
    lease: false,
    held: (w) => `select id from invoice where id = '${w.inv.id}' for update`,
    send: (w) => api("POST", `/api/invoices/${w.inv.id}/status`, { cookie: w.cookie, json: { status: "void" } }),
    ok: 200,
    writes: true,
  },
  {
    name: "POST /api/leases (a new lease)",
    lease: false,
    held: (w) => `select id from invoice where id = '${w.inv.id}' for update`,
    send: open,
    ok: 201,
    writes: true,
  },
  {
    // The insert waits for the other open's lease to commit or roll back (the partial unique
    // index); rolled back, the insert goes on: its RETURNING is judged after that wait.
    name: "POST /api/leases (a new lease, waiting on another open's slot)",
    lease: false,
    held: (w) => `insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at)
      values ('${w.alice.id}', '${w.inv.id}', 'summarize_invoice', 'open', now() + interval '10 minutes')`,
    rollback: true,
    send: open,
    ok: 201,
    writes: true,
  },
  {
    name: "POST /api/leases (the actor's lease already in flight)",
    lease: true,
    held: (w) => `select id from invoice where id = '${w.inv.id}' for update`,
    send: open,
    ok: 200,
    writes: false,
  },
];

/** Sends the case's request while its row is held for `holdMs`; `during` runs once the request waits on the row. */
async function whileHeld<T>(c: Case, w: World, holdMs: number, during: () => Promise<T> = async () => undefined as T) {
  const row = held.hold(c.held(w), c.rollback);
  await row.isLocked;
  const sent = c.send(w);
  await held.appWaitingOnLock(sent);
  const meanwhile = during();
  await new Promise((r) => setTimeout(r, holdMs));
  row.release();
  await row.done;
  return { res: await sent, meanwhile: await meanwhile };
}

describe("a write route racing a sign-out of its session", () => {
  // One open is enough: the others take the same path up to the held row.
  for (const c of CASES.slice(0, 3)) {
    it(`${c.name}: the write commits before the sign-out answers, or not at all`, async () => {
      const w = await world({ lease: c.lease });
      const before = await held.snapshot(w.inv.id);
      const { res, meanwhile: signedOut } = await whileHeld(c, w, 1_000, async () => {
        const out = await api("DELETE", "/api/session", { cookie: w.cookie });
        // What the database says at the moment the sign-out answers.
        return { status: out.status, then: await held.snapshot(w.inv.id) };
      });

      expect(signedOut.status).toBe(200);
      expect((await api("GET", "/api/session", { cookie: w.cookie })).status).toBe(401);
      const after = await held.snapshot(w.inv.id);
      if (res.status === c.ok) {
        // Written: then it was written while the session was live, before sign-out answered.
        expect({ whenSignOutAnswered: signedOut.then }).toEqual({ whenSignOutAnswered: after });
      } else {
        expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: { detail: "not_signed_in" } });
        expect(after).toEqual(before);
      }
    });
  }
});

describe("a write route whose session runs out while it waits on a row", () => {
  for (const c of CASES) {
    it(`${c.name}: with its session live, the same request waits and writes (the control)`, async () => {
      const w = await world({ lease: c.lease });
      const before = await held.snapshot(w.inv.id);
      const { res } = await whileHeld(c, w, 2_000);
      expect(res.status).toBe(c.ok);
      if (c.writes) expect(await held.snapshot(w.inv.id)).not.toEqual(before);
      else expect(res.body.lease_id).toBe(w.leaseId);
    });

    it(`${c.name}: 401 not_signed_in with the clearing cookie, and nothing written`, async () => {
      const w = await world({ lease: c.lease });
      const before = await held.snapshot(w.inv.id);
      // Live when the request starts; past its end by the time the row is let go.
      const row = held.hold(c.held(w), c.rollback);
      await row.isLocked;
      await t.db
        .update(appSession)
        .set({ expiresAt: sql`clock_timestamp() + interval '1 second'` })
        .where(eq(appSession.id, w.sessionId));
      const sent = c.send(w);
      await held.appWaitingOnLock(sent);
      await new Promise((r) => setTimeout(r, 2_000));
      row.release();
      await row.done;
      const res = await sent;

      expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: { detail: "not_signed_in" } });
      const cleared = /claimcheck_session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/i;
      expect(res.headers.getSetCookie().join("\n")).toMatch(cleared);
      expect(await held.snapshot(w.inv.id)).toEqual(before);
    });
  }
});
