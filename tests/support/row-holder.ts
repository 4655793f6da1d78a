// A connection of the test's own that holds rows while the app's request or action waits on them
// (tests/integration/sessions/session-held-*.test.ts): the same window the review used to race a sign-out.
import postgres from "postgres";
import { inject } from "vitest";

const HOLDER_APP_NAME = "claimcheck-test-holder";

class RolledBack extends Error {}

export type RowHolder = ReturnType<typeof rowHolder>;

/** `url` is the test file's database (`name`); its connections are told apart by application name. */
export function rowHolder(url: string, name: string) {
  /** The test's own connections: one holds a row, one watches. */
  const sql = postgres(url, { max: 2, onnotice: () => {}, connection: { application_name: HOLDER_APP_NAME } });

  /** What the app could write: the invoice, its leases and their events. */
  async function snapshot(invoiceId: string) {
    const rows = await sql`
      select (select row_to_json(i) from (select version, number, counterparty, summary from invoice
          where id = ${invoiceId}) i) as invoice,
        (select json_agg(json_build_object('status', l.status, 'reason', l.closed_reason) order by l.created_at)
          from inference_lease l where l.invoice_id = ${invoiceId}) as leases,
        (select count(*)::int from lease_event e join inference_lease l on l.id = e.lease_id
          where l.invoice_id = ${invoiceId}) as events`;
    return rows[0]!;
  }

  /** Resolves once an app connection waits on a lock: the request or action is mid-transaction. */
  async function appWaitingOnLock(pending: Promise<unknown>): Promise<void> {
    let answered: unknown;
    void pending.then((a) => (answered = a));
    for (let i = 0; i < 500 && answered === undefined; i++) {
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = ${name} and application_name <> ${HOLDER_APP_NAME} and wait_event_type = 'Lock'`;
      if (row!.n > 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`the app never waited on the held row; it answered ${JSON.stringify(answered)}`);
  }

  /**
   * Runs `lockSql` (a row FOR UPDATE, or an insert) in a transaction of the test's own and holds it
   * until `release` is called; then commits, or with `rollback` rolls back.
   */
  function hold(lockSql: string, rollback = false) {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const done = sql
      .begin(async (tx) => {
        await tx.unsafe(lockSql);
        locked();
        await released;
        if (rollback) throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      });
    return { isLocked, release, done };
  }

  return { sql, snapshot, appWaitingOnLock, hold, end: () => sql.end() };
}

/**
 * Resolves once `n` of the app's connections to database `name` wait on a lock (the holder's own
 * excluded); `what` names them in the error when they never do.
 */
export async function appsWaiting(holder: RowHolder, name: string, n: number, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [row] = await holder.sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = ${name} and application_name <> ${HOLDER_APP_NAME} and wait_event_type = 'Lock'`;
    if (row!.n >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`fewer than ${n} ${what} ever waited on a lock`);
}

/** The URL of the test file's own database (`t`, opened by openTestDb on PostgreSQL). */
export function testDbUrl(t: { name: string }): string {
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  return url.toString();
}

/** A holder on the test file's own database. */
export const holderFor = (t: { name: string }): RowHolder => rowHolder(testDbUrl(t), t.name);
