// Two admins (or two tabs of one) inviting the same email at once. Inviting an email again revokes
// its earlier pending link (docs/decisions/0062), so both answer 201 and exactly one invitation is
// left pending: the later one, whose link works, while the earlier link is 404. The test holds the
// organization's admin memberships FOR UPDATE on a connection of its own, so both creates stop at
// their FOR SHARE of those rows (lib/members.ts holdManagers) until both wait; then it lets them go
// at once. Without the lock on the (organization, email) pair, each one's revoke finds nothing
// the other has committed and both insert: two pending links for one email (seen before the fix:
// the first round already had two). PostgreSQL only: PGlite runs one transaction at a time.
import { randomUUID } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { invitation } from "@/db/schema";
import { api, signInCookie } from "../../support/api";
import { asMember, joinOrgOf, makeUser, openTestDb, type TestDb } from "../../support/db";
import { appsWaiting as waitForApps, holderFor, type RowHolder } from "../../support/row-holder";

let t: TestDb;
let holder: RowHolder;
beforeAll(async () => {
  if (inject("dbKind") !== "postgres") throw new Error("invitation-race.connections.test.ts needs PostgreSQL");
  t = await openTestDb();
  holder = holderFor(t);
});
afterAll(async () => {
  await holder?.end();
  await t?.close();
});

/** Resolves once `n` app connections wait on a lock. */
const appsWaiting = (n: number) => waitForApps(holder, t.name, n, "invitation creates");

it("two creates for the same email, released together: both 201, exactly one pending invitation, the other link dead, over 20 rounds", async () => {
  const alice = await makeUser(t.db, "Alice");
  const carol = await makeUser(t.db, "Carol");
  await joinOrgOf(t.db, carol, alice, "admin");
  const { orgId } = await asMember(t.db, alice);
  const cookies = [await signInCookie(alice.email), await signInCookie(carol.email)];
  for (let round = 0; round < 20; round++) {
    const email = `race-${randomUUID().slice(0, 8)}@example.test`;
    const held = holder.hold(`select 1 from membership where org_id = '${orgId}' and role = 'admin' for update`);
    await held.isLocked;
    const creates = cookies.map((cookie) => api("POST", "/api/org/invitations", { cookie, json: { email, role: "member" } }));
    await appsWaiting(2);
    held.release();
    await held.done;
    const answers = await Promise.all(creates);
    expect(
      answers.map((r) => r.status),
      `round ${round}`,
    ).toEqual([201, 201]);
    const pending = await t.db
      .select({ id: invitation.id })
      .from(invitation)
      .where(and(eq(invitation.orgId, orgId), eq(invitation.email, email), isNull(invitation.revokedAt), isNull(invitation.acceptedAt)));
    expect(pending, `round ${round}`).toHaveLength(1);
    // The one left pending is one of the two answered; the other's link is as dead as a revoked one.
    const [live, dead] = answers[0]!.body.id === pending[0]!.id ? answers : [answers[1]!, answers[0]!];
    expect(live!.body.id).toBe(pending[0]!.id);
    const tokenOf = (url: string) => url.split("/invitations/")[1]!;
    expect((await api("GET", `/api/invitations/${tokenOf(live!.body.url)}`)).status).toBe(200);
    expect(await api("GET", `/api/invitations/${tokenOf(dead!.body.url)}`)).toMatchObject({
      status: 404,
      body: { detail: "invitation_not_found" },
    });
  }
});
