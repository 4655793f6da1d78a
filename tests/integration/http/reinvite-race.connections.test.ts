// A removed member invited back (lib/members.ts rejoin), with two acceptances truly at once. The
// test holds a row on a connection of its own so both requests stop mid-transaction, waits until
// both wait on a lock, then lets them go together.
// - Two teams' links for the same person: the test holds the person's app_user row, which the
//   first acceptance updates (removed_at) after it found them in no organization. Without the
//   person's lock (the one user_home_org takes) the second has made the same check by then, and
//   both answer 201: one person in two organizations (seen when the lock is taken out). With it,
//   the second waits for the first's commit, then finds the membership: 409 already_member.
// - The same link twice: the test holds the invitation row; the second finds it used: 404.
// PostgreSQL only: PGlite runs one transaction at a time.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { rowsOf } from "@/db/client";
import { membership } from "@/db/schema";
import { api, signInCookie } from "../../support/api";
import { joinOrgOf, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";
import { appsWaiting as waitForApps, holderFor, type RowHolder } from "../../support/row-holder";

let t: TestDb;
let holder: RowHolder;
beforeAll(async () => {
  if (inject("dbKind") !== "postgres") throw new Error("reinvite-race.connections.test.ts needs PostgreSQL");
  t = await openTestDb();
  holder = holderFor(t);
});
afterAll(async () => {
  await holder?.end();
  await t?.close();
});

/** Resolves once `n` app connections wait on a lock. */
const appsWaiting = (n: number) => waitForApps(holder, t.name, n, "acceptances");

/** Alice's team and Bob's, and someone Alice removed (a fresh one each round). */
async function removedPerson(alice: { id: string }, aliceCookie: string) {
  const dave = await makeUser(t.db, "Dave");
  await joinOrgOf(t.db, dave, alice, "member");
  expect((await api("DELETE", `/api/org/members/${dave.id}`, { cookie: aliceCookie })).status).toBe(200);
  return dave;
}

async function link(cookie: string, email: string) {
  const res = await api("POST", "/api/org/invitations", { cookie, json: { email, role: "member" } });
  expect(res.status).toBe(201);
  return { id: res.body.id as string, token: (res.body.url as string).split("/invitations/")[1]! };
}

const accept = (token: string) => api("POST", `/api/invitations/${token}`, { json: { password: PASSWORD } });

it("two teams' links accepted at once: one 201, one 409 already_member, one membership, over 5 rounds", async () => {
  const alice = await makeUser(t.db, "Alice");
  const bob = await makeUser(t.db, "Bob");
  const [aliceCookie, bobCookie] = [await signInCookie(alice.email), await signInCookie(bob.email)];
  for (let round = 0; round < 5; round++) {
    const dave = await removedPerson(alice, aliceCookie);
    const links = [await link(aliceCookie, dave.email), await link(bobCookie, dave.email)];
    const held = holder.hold(`select 1 from app_user where id = '${dave.id}' for update`);
    await held.isLocked;
    const answers = links.map((l) => accept(l.token));
    await appsWaiting(2);
    held.release();
    await held.done;
    const statuses = (await Promise.all(answers)).map((r) => `${r.status} ${r.body?.detail ?? ""}`.trim());
    expect(statuses.sort(), `round ${round}`).toEqual(["201", "409 already_member"]);
    expect(await t.db.select().from(membership).where(eq(membership.userId, dave.id)), `round ${round}`).toHaveLength(1);
    // The refused link was left as it was: still pending.
    const pending = rowsOf<{ n: number }>(
      await t.db.execute(sql`select count(*)::int as n from invitation where email = ${dave.email} and accepted_at is null`),
    );
    expect(pending[0]!.n, `round ${round}`).toBe(1);
  }
});

it("the same link accepted twice at once: one 201, one 404 invitation_not_found, over 5 rounds", async () => {
  const alice = await makeUser(t.db, "Alice");
  const aliceCookie = await signInCookie(alice.email);
  for (let round = 0; round < 5; round++) {
    const dave = await removedPerson(alice, aliceCookie);
    const one = await link(aliceCookie, dave.email);
    const held = holder.hold(`select 1 from invitation where id = '${one.id}' for update`);
    await held.isLocked;
    const answers = [accept(one.token), accept(one.token)];
    await appsWaiting(2);
    held.release();
    await held.done;
    const statuses = (await Promise.all(answers)).map((r) => `${r.status} ${r.body?.detail ?? ""}`.trim());
    expect(statuses.sort(), `round ${round}`).toEqual(["201", "404 invitation_not_found"]);
    expect(await t.db.select().from(membership).where(eq(membership.userId, dave.id)), `round ${round}`).toHaveLength(1);
  }
});
