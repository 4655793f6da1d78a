// The organization's people through the real route handlers on a real database: invitations
// (create, list, revoke, open, accept, and two accepts racing), the member list, role changes
// and removal (the last admin kept, removal ending sessions and closing leases), a removed member
// invited back and accepting with their own password, every id of another organization answered
// 404 as a missing one.
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf } from "@/db/client";
import { appSession, appUser, invitation, membership } from "@/db/schema";
import { createOrganization, newToken } from "@/lib/members";
import { SIGN_IN_LIMITS } from "@/lib/rate-limit";
import { api, cookieFrom, signInCookie, sink } from "../../support/api";
import { asMember, eventKinds, joinOrgOf, leaseRow, makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

const NEW_PASSWORD = "a long enough passphrase";
const freshEmail = () => `new-${randomUUID().slice(0, 8)}@example.test`;

/** An admin (alice) with a member (dave) and, elsewhere, another organization's admin (bob). */
async function team() {
  const alice = await makeUser(t.db, "Alice");
  const dave = await makeUser(t.db, "Dave");
  await joinOrgOf(t.db, dave, alice, "member");
  const bob = await makeUser(t.db, "Bob");
  return {
    alice,
    dave,
    bob,
    aliceCookie: await signInCookie(alice.email),
    daveCookie: await signInCookie(dave.email),
    bobCookie: await signInCookie(bob.email),
  };
}

const tokenOf = (url: string) => url.split("/invitations/")[1]!;

async function invite(cookie: string, email = freshEmail(), role = "member") {
  const res = await api("POST", "/api/org/invitations", { cookie, json: { email, role } });
  expect(res.status).toBe(201);
  return { ...res.body, email, token: tokenOf(res.body.url) } as {
    id: string;
    url: string;
    expires_at: string;
    email: string;
    token: string;
  };
}

async function invitationCount() {
  const [row] = await t.db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(invitation);
  return row!.n;
}

describe("POST /api/org/invitations", () => {
  it("an admin invites: 201 {id, url, expires_at} 7 days on by the database clock; only the token's sha256 is stored", async () => {
    const { aliceCookie } = await team();
    const email = freshEmail();
    const res = await api("POST", "/api/org/invitations", {
      cookie: aliceCookie,
      json: { email: ` ${email.toUpperCase()} `, role: "approver" },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["expires_at", "id", "url"]);
    expect(res.body.url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/invitations\/[A-Za-z0-9_-]{43}$/);
    const [row] = await t.db.select().from(invitation).where(eq(invitation.id, res.body.id));
    expect(row).toMatchObject({ email, role: "approver", acceptedAt: null, revokedAt: null });
    const token = tokenOf(res.body.url);
    expect(row!.tokenSha256).not.toContain(token);
    expect(row!.tokenSha256).toBe((await import("node:crypto")).createHash("sha256").update(token).digest("hex"));
    expect(await rowsDays(res.body.id)).toBeCloseTo(7, 3);
  });

  it("403 forbidden for an approver or a member, 401 without a session; nothing written", async () => {
    const { alice, daveCookie } = await team();
    const carol = await makeUser(t.db, "Carol");
    await joinOrgOf(t.db, carol, alice, "approver");
    const carolCookie = await signInCookie(carol.email);
    const before = await invitationCount();
    for (const cookie of [daveCookie, carolCookie]) {
      const res = await api("POST", "/api/org/invitations", { cookie, json: { email: freshEmail(), role: "member" } });
      expect(res).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    }
    expect((await api("POST", "/api/org/invitations", { json: { email: freshEmail(), role: "member" } })).status).toBe(401);
    expect(await invitationCount()).toBe(before);
  });

  it("409 already_member for the email of a member (of this organization or another); 422 for a bad email or role", async () => {
    const { aliceCookie, bob, dave } = await team();
    const before = await invitationCount();
    for (const email of [bob.email, dave.email.toUpperCase()]) {
      expect(await api("POST", "/api/org/invitations", { cookie: aliceCookie, json: { email, role: "member" } })).toMatchObject({
        status: 409,
        body: { detail: "already_member" },
      });
    }
    for (const json of [{ email: "not an email", role: "member" }, { email: freshEmail(), role: "owner" }, { email: freshEmail() }, {}]) {
      expect(await api("POST", "/api/org/invitations", { cookie: aliceCookie, json })).toMatchObject({
        status: 422,
        body: { detail: "invalid_request" },
      });
    }
    expect(await invitationCount()).toBe(before);
  });

  it("inviting the same email again replaces the earlier link: the first stops working", async () => {
    const { aliceCookie } = await team();
    const email = freshEmail();
    const first = await invite(aliceCookie, email);
    const second = await invite(aliceCookie, email);
    expect((await api("GET", `/api/invitations/${first.token}`)).status).toBe(404);
    expect((await api("GET", `/api/invitations/${second.token}`)).status).toBe(200);
  });
});

async function rowsDays(id: string): Promise<number> {
  const result = (await t.db.execute(
    sql`select extract(epoch from (expires_at - created_at)) / 86400 as days from invitation where id = ${id}`,
  )) as unknown as { rows?: { days: number }[] } & { days: number }[];
  return Number((result.rows ?? result)[0]!.days);
}

describe("GET /api/org/invitations and DELETE /api/org/invitations/:id", () => {
  it("lists the organization's pending invitations without tokens; revoking one is 200 and the link stops working", async () => {
    const { aliceCookie, bobCookie } = await team();
    const one = await invite(aliceCookie);
    const two = await invite(aliceCookie, freshEmail(), "approver");
    await invite(bobCookie);
    const list = await api("GET", "/api/org/invitations", { cookie: aliceCookie });
    expect(list.status).toBe(200);
    expect(list.body.map((i: { id: string }) => i.id).sort()).toEqual([one.id, two.id].sort());
    expect(JSON.stringify(list.body)).not.toContain(one.token);
    expect(list.body[0]).toMatchObject({ email: two.email, role: "approver", invited_by: "Alice" });

    const revoked = await api("DELETE", `/api/org/invitations/${one.id}`, { cookie: aliceCookie });
    expect(revoked).toMatchObject({ status: 200, body: { id: one.id, status: "revoked" } });
    expect(await api("GET", `/api/invitations/${one.token}`)).toMatchObject({ status: 404, body: { detail: "invitation_not_found" } });
    expect((await api("GET", "/api/org/invitations", { cookie: aliceCookie })).body.map((i: { id: string }) => i.id)).toEqual([two.id]);
    // Revoked already: no longer pending, not found.
    expect((await api("DELETE", `/api/org/invitations/${one.id}`, { cookie: aliceCookie })).status).toBe(404);
  });

  it("another organization's invitation id is 404, as a missing or malformed one; nothing written", async () => {
    const { aliceCookie, bobCookie } = await team();
    const bobs = await invite(bobCookie);
    for (const id of [bobs.id, randomUUID(), "not-a-uuid"]) {
      expect(await api("DELETE", `/api/org/invitations/${id}`, { cookie: aliceCookie })).toMatchObject({
        status: 404,
        body: { detail: "invitation_not_found" },
      });
    }
    expect((await api("GET", `/api/invitations/${bobs.token}`)).status).toBe(200);
  });

  it("403 forbidden for a member, listing or revoking", async () => {
    const { aliceCookie, daveCookie } = await team();
    const one = await invite(aliceCookie);
    expect(await api("GET", "/api/org/invitations", { cookie: daveCookie })).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    expect(await api("DELETE", `/api/org/invitations/${one.id}`, { cookie: daveCookie })).toMatchObject({ status: 403 });
    expect((await api("GET", `/api/invitations/${one.token}`)).status).toBe(200);
  });
});

describe("GET and POST /api/invitations/:token", () => {
  it("a live link shows {org_name, email, role, expires_at}; accepting makes the user, the membership and a session: 201", async () => {
    const { alice, aliceCookie } = await team();
    const inv = await invite(aliceCookie, freshEmail(), "approver");
    const peek = await api("GET", `/api/invitations/${inv.token}`);
    expect(peek).toMatchObject({
      status: 200,
      body: { org_name: "Alice", email: inv.email, role: "approver", expires_at: inv.expires_at },
    });

    const res = await api("POST", `/api/invitations/${inv.token}`, { json: { name: "Erin", password: NEW_PASSWORD } });
    expect(res.status).toBe(201);
    expect(res.body.actor).toMatchObject({ email: inv.email, name: "Erin" });
    const cookie = cookieFrom(res.headers);
    expect(cookie).toMatch(/^claimcheck_session=/);
    const me = await api("GET", "/api/session", { cookie });
    expect(me).toMatchObject({ status: 200, body: { actor: { email: inv.email } } });
    const members = await api("GET", "/api/org/members", { cookie });
    expect(members.body.map((m: { name: string; role: string }) => [m.name, m.role])).toEqual([
      ["Alice", "admin"],
      ["Dave", "member"],
      ["Erin", "approver"],
    ]);
    // Alice's invoices are the team's: Erin reads them.
    const aliceInvoice = await makeInvoice(t.db, alice.id);
    expect((await api("GET", `/api/invoices/${aliceInvoice.id}`, { cookie })).status).toBe(200);
    // The password works for sign-in afterwards; the link is used up.
    expect(await signInCookie(inv.email, NEW_PASSWORD)).toMatch(/^claimcheck_session=/);
    expect(await api("GET", `/api/invitations/${inv.token}`)).toMatchObject({ status: 404, body: { detail: "invitation_not_found" } });
    expect((await api("POST", `/api/invitations/${inv.token}`, { json: { name: "Erin", password: NEW_PASSWORD } })).status).toBe(404);
  });

  it("unknown, used, revoked and expired links are all 404 invitation_not_found, and write no user", async () => {
    const { aliceCookie } = await team();
    const revoked = await invite(aliceCookie);
    await api("DELETE", `/api/org/invitations/${revoked.id}`, { cookie: aliceCookie });
    const expired = await invite(aliceCookie);
    await t.db.execute(sql`update invitation set expires_at = now() - interval '1 second' where id = ${expired.id}`);
    const users = async () => (await t.db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(appUser))[0]!.n;
    const before = await users();
    for (const token of [newToken().token, "short", revoked.token, expired.token]) {
      expect(await api("GET", `/api/invitations/${token}`)).toMatchObject({ status: 404, body: { detail: "invitation_not_found" } });
      expect(await api("POST", `/api/invitations/${token}`, { json: { name: "X", password: NEW_PASSWORD } })).toMatchObject({
        status: 404,
        body: { detail: "invitation_not_found" },
      });
    }
    expect(await users()).toBe(before);
  });

  it("422 for a password under 12 characters or a missing name; the link still works after", async () => {
    const { aliceCookie } = await team();
    const inv = await invite(aliceCookie);
    for (const json of [{ name: "Erin", password: "short-pass1" }, { password: NEW_PASSWORD }, { name: " ", password: NEW_PASSWORD }]) {
      expect(await api("POST", `/api/invitations/${inv.token}`, { json })).toMatchObject({
        status: 422,
        body: { detail: "invalid_request" },
      });
    }
    expect((await api("GET", `/api/invitations/${inv.token}`)).status).toBe(200);
  });

  it("two accepts racing make one user: one 201, one 404", async () => {
    const { aliceCookie } = await team();
    const inv = await invite(aliceCookie);
    const both = await Promise.all(
      ["Erin", "Eve"].map((name) => api("POST", `/api/invitations/${inv.token}`, { json: { name, password: NEW_PASSWORD } })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 404]);
    const made = await t.db.select().from(appUser).where(eq(appUser.email, inv.email));
    expect(made).toHaveLength(1);
    expect(await t.db.select().from(membership).where(eq(membership.userId, made[0]!.id))).toHaveLength(1);
  });

  it("a cross-site POST is refused before anything is read", async () => {
    const { aliceCookie } = await team();
    const inv = await invite(aliceCookie);
    const res = await api("POST", `/api/invitations/${inv.token}`, {
      json: { name: "Erin", password: NEW_PASSWORD },
      headers: { origin: "https://evil.example" },
    });
    expect(res).toMatchObject({ status: 403, body: { detail: "cross_origin" } });
    expect((await api("GET", `/api/invitations/${inv.token}`)).status).toBe(200);
  });

  it("rate-limited per link: past 20 uses in 15 minutes, 429 too_many_attempts with Retry-After", async () => {
    const token = newToken().token;
    const answers = [];
    for (let i = 0; i < 21; i++) answers.push((await api("GET", `/api/invitations/${token}`)).status);
    expect(answers.slice(0, 20).every((s) => s === 404)).toBe(true);
    const last = await api("GET", `/api/invitations/${token}`);
    expect(last).toMatchObject({ status: 429, body: { detail: "too_many_attempts" } });
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("a removed member invited back (0062's existing user, 0077)", () => {
  /** Alice's team after she removed Dave; Bob is the admin of an organization of his own. */
  async function removedDave() {
    const t0 = await team();
    expect((await api("DELETE", `/api/org/members/${t0.dave.id}`, { cookie: t0.aliceCookie })).status).toBe(200);
    return t0;
  }

  /** Everything an acceptance could write about `userId` and the invitation `id`. */
  async function written(userId: string, id: string) {
    const [row] = rowsOf<Record<string, unknown>>(
      await t.db.execute(sql`
        select (select json_agg(json_build_object('org', org_id, 'role', role)) from membership where user_id = ${userId}) as memberships,
               (select count(*)::int from app_session where user_id = ${userId}) as sessions,
               (select count(*)::int from organization) as orgs,
               (select row_to_json(u) from (select name, password_hash, removed_at from app_user where id = ${userId}) u) as account,
               (select row_to_json(i) from (select accepted_at, accepted_by, revoked_at from invitation where id = ${id}) i) as invitation`),
    );
    return row!;
  }

  it("invite a removed member: 201; the link says the email has an account; their own password makes them a member again with the invited role, signed in", async () => {
    const { alice, dave, aliceCookie } = await removedDave();
    const inv = await invite(aliceCookie, dave.email.toUpperCase(), "approver");
    expect(await api("GET", `/api/invitations/${inv.token}`)).toMatchObject({
      status: 200,
      body: { org_name: "Alice", email: dave.email, role: "approver", has_account: true },
    });
    // A new person's link says so too.
    const other = await invite(aliceCookie);
    expect((await api("GET", `/api/invitations/${other.token}`)).body.has_account).toBe(false);

    // No name, no new password: the account's own (any name sent is ignored).
    const res = await api("POST", `/api/invitations/${inv.token}`, { json: { name: "Someone Else", password: PASSWORD } });
    expect(res.status).toBe(201);
    expect(res.body.actor).toEqual({ id: dave.id, email: dave.email, name: "Dave" });
    const cookies = res.headers.getSetCookie().map((c) => c.split("=")[0]);
    expect(cookies.sort()).toEqual(["claimcheck_device", "claimcheck_session"]);
    const cookie = cookieFrom(res.headers);
    const me = await api("GET", "/api/session", { cookie });
    expect(me).toMatchObject({ status: 200, body: { actor: { id: dave.id, role: "approver", org: { name: "Alice" } } } });
    const { orgId } = await asMember(t.db, alice);
    expect(await written(dave.id, inv.id)).toMatchObject({
      memberships: [{ org: orgId, role: "approver" }],
      account: { name: "Dave", removed_at: null },
      invitation: { accepted_by: dave.id, revoked_at: null },
    });
    // The link is used up; signing in works again, into the team.
    expect(await api("GET", `/api/invitations/${inv.token}`)).toMatchObject({ status: 404, body: { detail: "invitation_not_found" } });
    expect((await api("POST", `/api/invitations/${inv.token}`, { json: { password: PASSWORD } })).status).toBe(404);
    const again = await api("GET", "/api/session", { cookie: await signInCookie(dave.email) });
    expect(again.body.actor).toMatchObject({ org: { id: orgId }, role: "approver" });
  });

  it("the wrong password is 401 invalid_credentials and writes nothing; the link still works after", async () => {
    const { dave, aliceCookie } = await removedDave();
    const inv = await invite(aliceCookie, dave.email);
    const before = await written(dave.id, inv.id);
    for (const json of [{ password: "not the password" }, { name: "Dave", password: NEW_PASSWORD }]) {
      expect(await api("POST", `/api/invitations/${inv.token}`, { json })).toMatchObject({
        status: 401,
        body: { detail: "invalid_credentials" },
      });
    }
    // A body with no password at all is 422, as sign-in's.
    for (const json of [{}, { name: "Dave" }, { password: "" }, { password: 5 }]) {
      expect(await api("POST", `/api/invitations/${inv.token}`, { json })).toMatchObject({
        status: 422,
        body: { detail: "invalid_request" },
      });
    }
    expect(await written(dave.id, inv.id)).toEqual(before);
    expect((await api("GET", `/api/invitations/${inv.token}`)).status).toBe(200);
    // Still no organization without the invitation being accepted (0077).
    expect(await api("POST", "/api/session", { json: { email: dave.email, password: PASSWORD } })).toMatchObject({
      status: 403,
      body: { detail: "no_organization" },
    });
  });

  it("wrong passwords on the link count against sign-in's limit for the email: then 429 there and at sign-in, even with the right password", async () => {
    const { dave, aliceCookie } = await removedDave();
    const inv = await invite(aliceCookie, dave.email);
    const before = await written(dave.id, inv.id);
    for (let i = 0; i < SIGN_IN_LIMITS.email.points; i++) {
      expect((await api("POST", `/api/invitations/${inv.token}`, { json: { password: `wrong ${i}` } })).status).toBe(401);
    }
    const refused = await api("POST", `/api/invitations/${inv.token}`, { json: { password: PASSWORD } });
    expect(refused).toMatchObject({ status: 429, body: { detail: "too_many_attempts" } });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await api("POST", "/api/session", { json: { email: dave.email, password: PASSWORD } })).toMatchObject({
      status: 429,
      body: { detail: "too_many_attempts" },
    });
    expect(await written(dave.id, inv.id)).toEqual(before);
  });

  it("the email of a member of another organization is refused (409 already_member), at the invitation and, if they joined since, at the link; nothing written", async () => {
    const { dave, bob, aliceCookie, bobCookie } = await removedDave();
    expect(await api("POST", "/api/org/invitations", { cookie: aliceCookie, json: { email: bob.email, role: "member" } })).toMatchObject({
      status: 409,
      body: { detail: "already_member" },
    });
    // Both teams invite Dave; he accepts Bob's first; Alice's link then refuses, and stays as it was.
    const alices = await invite(aliceCookie, dave.email);
    const bobs = await invite(bobCookie, dave.email, "admin");
    expect((await api("POST", `/api/invitations/${bobs.token}`, { json: { password: PASSWORD } })).status).toBe(201);
    const before = await written(dave.id, alices.id);
    expect(await api("POST", `/api/invitations/${alices.token}`, { json: { password: PASSWORD } })).toMatchObject({
      status: 409,
      body: { detail: "already_member" },
    });
    expect(await written(dave.id, alices.id)).toEqual(before);
    expect(before).toMatchObject({ memberships: [{ role: "admin" }], invitation: { accepted_at: null } });
    // And now that he is a member, inviting him anywhere is refused.
    expect(await api("POST", "/api/org/invitations", { cookie: aliceCookie, json: { email: dave.email, role: "member" } })).toMatchObject({
      status: 409,
      body: { detail: "already_member" },
    });
  });

  it("two accepts of the link at once: one 201, one 404; one membership, one session", async () => {
    const { dave, aliceCookie } = await removedDave();
    const inv = await invite(aliceCookie, dave.email);
    const both = await Promise.all([0, 1].map(() => api("POST", `/api/invitations/${inv.token}`, { json: { password: PASSWORD } })));
    expect(both.map((r) => r.status).sort()).toEqual([201, 404]);
    expect(await written(dave.id, inv.id)).toMatchObject({ memberships: [{ role: "member" }], invitation: { accepted_by: dave.id } });
    const live = await t.db.execute(sql`select id from app_session where user_id = ${dave.id} and revoked_at is null`);
    expect(rowsOf(live)).toHaveLength(1);
  });

  it("two teams' links accepted at once: one 201, one 409 already_member; a member of one organization", async () => {
    const { dave, aliceCookie, bobCookie } = await removedDave();
    const links = [await invite(aliceCookie, dave.email), await invite(bobCookie, dave.email)];
    const both = await Promise.all(links.map((l) => api("POST", `/api/invitations/${l.token}`, { json: { password: PASSWORD } })));
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const memberships = (await written(dave.id, links[0]!.id)).memberships as unknown[];
    expect(memberships).toHaveLength(1);
  });

  it("a removed member's revoked or expired invitation is 404 and leaves them in no organization (403 no_organization)", async () => {
    const { dave, aliceCookie } = await removedDave();
    const inv = await invite(aliceCookie, dave.email);
    await api("DELETE", `/api/org/invitations/${inv.id}`, { cookie: aliceCookie });
    expect(await api("POST", `/api/invitations/${inv.token}`, { json: { password: PASSWORD } })).toMatchObject({
      status: 404,
      body: { detail: "invitation_not_found" },
    });
    expect((await api("POST", "/api/session", { json: { email: dave.email, password: PASSWORD } })).status).toBe(403);
  });
});

describe("GET /api/org/members and PATCH /api/org/members/:id", () => {
  it("any member reads the team: [{id, name, email, role}] of their organization only", async () => {
    const { alice, dave, daveCookie } = await team();
    const res = await api("GET", "/api/org/members", { cookie: daveCookie });
    expect(res).toMatchObject({ status: 200 });
    expect(res.body).toEqual([
      { id: alice.id, name: "Alice", email: alice.email, role: "admin" },
      { id: dave.id, name: "Dave", email: dave.email, role: "member" },
    ]);
    expect((await api("GET", "/api/org/members")).status).toBe(401);
  });

  it("an admin changes a role: 200 the member; a member may not (403); another org's member is 404; bad role 422", async () => {
    const { dave, bob, aliceCookie, daveCookie } = await team();
    expect(await api("PATCH", `/api/org/members/${dave.id}`, { cookie: aliceCookie, json: { role: "approver" } })).toMatchObject({
      status: 200,
      body: { id: dave.id, role: "approver" },
    });
    expect(await api("PATCH", `/api/org/members/${dave.id}`, { cookie: daveCookie, json: { role: "admin" } })).toMatchObject({
      status: 403,
      body: { detail: "forbidden" },
    });
    for (const id of [bob.id, randomUUID(), "nope"]) {
      expect(await api("PATCH", `/api/org/members/${id}`, { cookie: aliceCookie, json: { role: "member" } })).toMatchObject({
        status: 404,
        body: { detail: "member_not_found" },
      });
    }
    expect((await api("PATCH", `/api/org/members/${dave.id}`, { cookie: aliceCookie, json: { role: "owner" } })).status).toBe(422);
    const [row] = await t.db.select().from(membership).where(eq(membership.userId, bob.id));
    expect(row!.role).toBe("admin");
  });

  it("the last admin cannot be demoted (409 last_admin); with a second admin they can", async () => {
    const { alice, dave, aliceCookie } = await team();
    expect(await api("PATCH", `/api/org/members/${alice.id}`, { cookie: aliceCookie, json: { role: "member" } })).toMatchObject({
      status: 409,
      body: { detail: "last_admin" },
    });
    await api("PATCH", `/api/org/members/${dave.id}`, { cookie: aliceCookie, json: { role: "admin" } });
    expect((await api("PATCH", `/api/org/members/${alice.id}`, { cookie: aliceCookie, json: { role: "member" } })).status).toBe(200);
  });

  it("the last admin stays the last admin however their id is spelled (an upper-case id is the same member)", async () => {
    const { alice, aliceCookie } = await team();
    const upper = alice.id.toUpperCase();
    for (const [method, json] of [
      ["PATCH", { role: "member" }],
      ["DELETE", undefined],
    ] as const) {
      expect(await api(method, `/api/org/members/${upper}`, { cookie: aliceCookie, json })).toMatchObject({
        status: 409,
        body: { detail: "last_admin" },
      });
    }
    const [row] = await t.db.select().from(membership).where(eq(membership.userId, alice.id));
    expect(row!.role).toBe("admin");
    expect((await api("GET", "/api/session", { cookie: aliceCookie })).status).toBe(200);
  });

  it("two admins demoting each other at once: one succeeds, the other is refused, one admin remains", async () => {
    const { alice, dave, aliceCookie, daveCookie } = await team();
    await api("PATCH", `/api/org/members/${dave.id}`, { cookie: aliceCookie, json: { role: "admin" } });
    const [a, d] = await Promise.all([
      api("PATCH", `/api/org/members/${dave.id}`, { cookie: aliceCookie, json: { role: "member" } }),
      api("PATCH", `/api/org/members/${alice.id}`, { cookie: daveCookie, json: { role: "member" } }),
    ]);
    expect([a.status, d.status].sort()).toEqual([200, 403]);
    const admins = await t.db
      .select()
      .from(membership)
      .where(sql`${membership.orgId} = (select org_id from membership where user_id = ${alice.id}) and role = 'admin'`);
    expect(admins).toHaveLength(1);
  });

  it("two admins removing each other at once leave one admin", async () => {
    const { alice, dave, aliceCookie, daveCookie } = await team();
    await api("PATCH", `/api/org/members/${dave.id}`, { cookie: aliceCookie, json: { role: "admin" } });
    const [a, d] = await Promise.all([
      api("DELETE", `/api/org/members/${dave.id}`, { cookie: aliceCookie }),
      api("DELETE", `/api/org/members/${alice.id}`, { cookie: daveCookie }),
    ]);
    // The second finds its admin gone: its session no longer names a member (401), or not an admin (403).
    expect([a.status, d.status].filter((s) => s === 200)).toHaveLength(1);
    const left = await t.db
      .select()
      .from(membership)
      .where(sql`${membership.userId} in (${alice.id}, ${dave.id})`);
    expect(left.map((m) => m.role)).toEqual(["admin"]);
  });
});

describe("DELETE /api/org/members/:id", () => {
  it("removes a member: their sessions end, their lease in flight closes as at sign-out, their invoices stay", async () => {
    const { dave, aliceCookie, daveCookie } = await team();
    const otherDaveSession = await signInCookie(dave.email);
    const inv = await makeInvoice(t.db, dave.id);
    const opened = await api("POST", "/api/leases", { cookie: daveCookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    expect(opened.status).toBe(201);
    const leaseId = opened.body.lease_id as string;

    const res = await api("DELETE", `/api/org/members/${dave.id}`, { cookie: aliceCookie });
    expect(res).toMatchObject({ status: 200, body: { id: dave.id, status: "removed", revoked: [leaseId] } });
    expect(await leaseRow(t.db, leaseId)).toMatchObject({ status: "rejected", closedReason: "signed_out" });
    expect(await eventKinds(t.db, leaseId)).toContain("revoked");
    expect(sink().events).toContainEqual(expect.objectContaining({ name: "lease/closed", data: expect.objectContaining({ leaseId }) }));
    const sessions = await t.db.select({ revokedAt: appSession.revokedAt }).from(appSession).where(eq(appSession.userId, dave.id));
    expect(sessions.length).toBeGreaterThanOrEqual(2);
    expect(sessions.every((s) => s.revokedAt !== null)).toBe(true);
    for (const cookie of [daveCookie, otherDaveSession]) expect((await api("GET", "/api/session", { cookie })).status).toBe(401);
    expect((await api("GET", `/api/invoices/${inv.id}`, { cookie: aliceCookie })).status).toBe(200);
    expect((await api("GET", "/api/org/members", { cookie: aliceCookie })).body.map((m: { name: string }) => m.name)).toEqual(["Alice"]);
  });

  it("the last admin cannot remove themself (409 last_admin); a member may not remove anyone (403); another org's member 404", async () => {
    const { alice, dave, bob, aliceCookie, daveCookie } = await team();
    expect(await api("DELETE", `/api/org/members/${alice.id}`, { cookie: aliceCookie })).toMatchObject({
      status: 409,
      body: { detail: "last_admin" },
    });
    expect(await api("DELETE", `/api/org/members/${alice.id}`, { cookie: daveCookie })).toMatchObject({
      status: 403,
      body: { detail: "forbidden" },
    });
    for (const id of [bob.id, randomUUID(), "x"]) {
      expect(await api("DELETE", `/api/org/members/${id}`, { cookie: aliceCookie })).toMatchObject({
        status: 404,
        body: { detail: "member_not_found" },
      });
    }
    expect(
      await t.db
        .select()
        .from(membership)
        .where(sql`${membership.userId} in (${alice.id}, ${dave.id}, ${bob.id})`),
    ).toHaveLength(3);
  });

  it("a removed member who signs in again gets no organization of their own: 403 no_organization, no session, nothing made (0062, 0077)", async () => {
    const { dave, aliceCookie } = await team();
    expect((await api("DELETE", `/api/org/members/${dave.id}`, { cookie: aliceCookie })).status).toBe(200);
    const count = async () => {
      const [row] = rowsOf<{ orgs: number; mine: number; live: number }>(
        await t.db.execute(sql`
          select (select count(*)::int from organization) as orgs,
                 (select count(*)::int from membership where user_id = ${dave.id}) as mine,
                 (select count(*)::int from app_session where user_id = ${dave.id} and revoked_at is null) as live`),
      );
      return row!;
    };
    const before = await count();
    expect(before).toMatchObject({ mine: 0, live: 0 });
    const res = await api("POST", "/api/session", { json: { email: dave.email, password: PASSWORD } });
    expect(res).toMatchObject({ status: 403, body: { detail: "no_organization" } });
    expect(res.headers.getSetCookie().some((c) => c.startsWith("claimcheck_session=") && !/Max-Age=0/i.test(c))).toBe(false);
    expect(await count()).toEqual(before);
    // The wrong password is the wrong password still: no word on whether the account is in a team.
    expect(await api("POST", "/api/session", { json: { email: dave.email, password: "not the password" } })).toMatchObject({
      status: 401,
      body: { detail: "invalid_credentials" },
    });
    // A user made with only the contract's columns still gets an organization of their own on first need.
    const fresh = await makeUser(t.db, "Fresh");
    expect((await api("POST", "/api/session", { json: { email: fresh.email, password: PASSWORD } })).status).toBe(200);
  });

  it("an admin with another admin beside them may remove themself", async () => {
    const { alice, dave, aliceCookie } = await team();
    await api("PATCH", `/api/org/members/${dave.id}`, { cookie: aliceCookie, json: { role: "admin" } });
    expect((await api("DELETE", `/api/org/members/${alice.id}`, { cookie: aliceCookie })).status).toBe(200);
    expect((await api("GET", "/api/session", { cookie: aliceCookie })).status).toBe(401);
  });
});

describe("a first organization by command (lib/members.ts createOrganization, run by npm run org:create)", () => {
  it("makes the organization and an admin invitation; accepting it makes its first admin, who may invite", async () => {
    const email = freshEmail();
    const made = await createOrganization(t.db, { name: "Acme Ltd", adminEmail: email }, "http://127.0.0.1:3000");
    if (!made.ok) throw new Error(made.code);
    const token = tokenOf(made.invitation.url);
    expect(await api("GET", `/api/invitations/${token}`)).toMatchObject({
      status: 200,
      body: { org_name: "Acme Ltd", email, role: "admin" },
    });
    const res = await api("POST", `/api/invitations/${token}`, { json: { name: "Ada", password: NEW_PASSWORD } });
    expect(res.status).toBe(201);
    const cookie = cookieFrom(res.headers);
    expect((await api("GET", "/api/org/members", { cookie })).body).toEqual([{ id: res.body.actor.id, name: "Ada", email, role: "admin" }]);
    expect((await api("POST", "/api/org/invitations", { cookie, json: { email: freshEmail(), role: "member" } })).status).toBe(201);
    // An email with an account already is refused, and nothing is made.
    expect(await createOrganization(t.db, { name: "Again", adminEmail: email }, "http://x")).toEqual({ ok: false, code: "already_member" });
  });
});
