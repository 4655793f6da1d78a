import "server-only";
// An organization's people: invitations (made by an admin, accepted by the invitee through a
// one-time link), the member list, role changes and removal, and a first organization made by
// command (tools/org-create.ts). Who may do what is lib/access.ts's; every write here first
// locks the organization's admin memberships (managersOf) in one order, so the acting admin's
// right and the "never without an admin" rule are judged on rows nobody else changes meanwhile.
// docs/decisions/0062-invitations-and-members.md.
import { createHash, randomBytes } from "node:crypto";
import { and, asc, eq, gt, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db, Tx } from "@/db/client";
import { appUser, invitation, membership, organization } from "@/db/schema";
import { isManagerRole, managersOf, memberMay, memberOf, type Member } from "./access";
import { actAs } from "./audit/actor";
import { isUuid } from "./ids";
import { text } from "./input";
import { revokeMemberSessions, tellClosed, type LeaseDispatch } from "./leases";
import { INVITATION_TTL_DAYS, NEW_PASSWORD_MAX, NEW_PASSWORD_MIN } from "./member-rules";
import { ROLES, type Role } from "./org-codes";
import { dummyPasswordHash, hashPassword, verifyPassword } from "./password";
import { withNewDeviceToken, type DeviceToken } from "./device-cookie";
import { admitSignIn, emailKey } from "./rate-limit";
import { startSession, type Actor } from "./sessions";

export { INVITATION_TTL_DAYS, NEW_PASSWORD_MIN, NEW_PASSWORD_MAX } from "./member-rules";

const email = text().trim().toLowerCase().max(320).pipe(z.email());
const role = z.enum(ROLES);

export const InvitationInput = z.object({ email, role });
export const RoleInput = z.object({ role });
export const AcceptInput = z.object({
  name: text().trim().min(1).max(200),
  password: text().min(NEW_PASSWORD_MIN).max(NEW_PASSWORD_MAX),
});
/**
 * What a link's POST may carry, before the invitation says which case it is: a new person's
 * name and new password (AcceptInput), or, for an email that has an account, that account's
 * own password (any stored one, as sign-in takes; a name is then not asked for and ignored).
 */
export const AcceptBody = z.object({ name: z.unknown().optional(), password: z.string().min(1).max(NEW_PASSWORD_MAX) });
export const OrgInput = z.object({ name: text().trim().min(1).max(200), adminEmail: email });

/** A link's secret and what is stored of it. The token itself is shown once and never kept. */
export function newToken(): { token: string; sha256: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, sha256: tokenSha256(token) };
}

export const tokenSha256 = (token: string) => createHash("sha256").update(token).digest("hex");

/** A link's token as it may appear in a path: 43 base64url characters (32 bytes). */
export const isToken = (value: unknown): value is string => typeof value === "string" && /^[A-Za-z0-9_-]{43}$/.test(value);

export const invitationUrl = (origin: string, token: string) => `${origin}/invitations/${token}`;

/**
 * Where an invitation link goes besides the admin's screen. No mail server is assumed: the
 * default writes nothing anywhere (the admin copies the link); a deployment with mail passes
 * its own (decision 0062 says how).
 */
export interface InvitationMailer {
  send(message: { to: string; orgName: string; role: Role; url: string; expiresAt: Date }): Promise<void>;
}
export const noMailer: InvitationMailer = { send: async () => {} };

export type MemberRefusal = "forbidden" | "not_signed_in";

/**
 * Locks the organization's admin memberships (FOR UPDATE, or FOR SHARE for writes that leave
 * roles alone), in user order, and says whether the actor is among them. Every member write
 * starts here: taken in one order, the locks cannot deadlock one another.
 */
async function holdManagers(
  tx: Tx,
  actor: Member,
  strength: "update" | "share",
): Promise<{ ok: true; managers: string[] } | { ok: false; code: MemberRefusal }> {
  const rows = await tx
    .select({ userId: membership.userId })
    .from(membership)
    .where(managersOf(actor.orgId))
    .orderBy(asc(membership.userId))
    .for(strength);
  const managers = rows.map((r) => r.userId);
  if (managers.includes(actor.id)) return { ok: true, managers };
  const [still] = await tx.select({ role: membership.role }).from(membership).where(memberOf(actor.orgId, actor.id)).limit(1);
  return { ok: false, code: still ? "forbidden" : "not_signed_in" };
}

// ---------------------------------------------------------------------------------------
// Invitations

export type CreatedInvitation = { id: string; url: string; expiresAt: Date };

/**
 * An admin invites `email` as `role`: 201 with the link, shown this once. The email of someone
 * who is a member of an organization now (this one or another) is refused: a person belongs to
 * one organization for now. An account with no membership (a member an admin removed, 0077) is
 * invited like a new person, and accepts with its own password (acceptInvitation). An earlier
 * pending invitation of the same email to this organization is revoked, so one link works at a time.
 */
export async function createInvitation(
  db: Db,
  actor: Member & { orgName?: string },
  input: z.output<typeof InvitationInput>,
  origin: string,
  mailer: InvitationMailer = noMailer,
): Promise<{ ok: true; invitation: CreatedInvitation } | { ok: false; code: MemberRefusal | "already_member" }> {
  const { token, sha256 } = newToken();
  const result = await db.transaction(async (tx) => {
    const held = await holdManagers(tx, actor, "share");
    if (!held.ok) return held;
    // One invitation write per (organization, email) at a time: a second create waits for the
    // first to commit, so its revoke below sees the first's link and exactly one stays pending.
    // (The admins' rows are only held FOR SHARE, which two creates hold together.)
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('invitation'), hashtext(${`${actor.orgId}:${input.email}`}))`);
    const [member] = await tx
      .select({ id: appUser.id })
      .from(appUser)
      .innerJoin(membership, eq(membership.userId, appUser.id))
      .where(eq(appUser.email, input.email))
      .limit(1);
    if (member) return { ok: false as const, code: "already_member" as const };
    await tx
      .update(invitation)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(invitation.orgId, actor.orgId), eq(invitation.email, input.email), pending));
    const [row] = await tx
      .insert(invitation)
      .values({
        orgId: actor.orgId,
        email: input.email,
        role: input.role,
        tokenSha256: sha256,
        invitedBy: actor.id,
        expiresAt: sql`now() + make_interval(days => ${INVITATION_TTL_DAYS})`,
      })
      .returning({ id: invitation.id, expiresAt: invitation.expiresAt });
    const [org] = await tx.select({ name: organization.name }).from(organization).where(eq(organization.id, actor.orgId));
    return {
      ok: true as const,
      invitation: { id: row!.id, url: invitationUrl(origin, token), expiresAt: row!.expiresAt },
      orgName: org!.name,
    };
  });
  if (!result.ok) return result;
  await mailer.send({
    to: input.email,
    orgName: result.orgName,
    role: input.role,
    url: result.invitation.url,
    expiresAt: result.invitation.expiresAt,
  });
  return { ok: true, invitation: result.invitation };
}

/** Not yet accepted, not revoked, not run out by the database clock. */
const pending = and(isNull(invitation.acceptedAt), isNull(invitation.revokedAt), gt(invitation.expiresAt, sql`now()`))!;

export type PendingInvitation = { id: string; email: string; role: Role; createdAt: Date; expiresAt: Date; invitedBy: string | null };

/** The organization's pending invitations, newest first (never a token: only its hash is kept). Admins only. */
export async function listInvitations(
  db: Db,
  actor: Member,
): Promise<{ ok: true; invitations: PendingInvitation[] } | { ok: false; code: "forbidden" }> {
  if (!(await managerNow(db, actor))) return { ok: false, code: "forbidden" };
  const invitations = await db
    .select({
      id: invitation.id,
      email: invitation.email,
      role: invitation.role,
      createdAt: invitation.createdAt,
      expiresAt: invitation.expiresAt,
      invitedBy: appUser.name,
    })
    .from(invitation)
    .leftJoin(appUser, eq(appUser.id, invitation.invitedBy))
    .where(and(eq(invitation.orgId, actor.orgId), pending, memberMay(invitation.orgId, actor.id, "manage_members")))
    .orderBy(sql`${invitation.createdAt} desc`, asc(invitation.id));
  return { ok: true, invitations };
}

/** Whether the member is one of their organization's managers now (managersOf). */
async function managerNow(db: Db, actor: Member): Promise<boolean> {
  const [row] = await db
    .select({ userId: membership.userId })
    .from(membership)
    .where(and(managersOf(actor.orgId), eq(membership.userId, actor.id)));
  return Boolean(row);
}

/** An admin revokes a pending invitation of their organization; another organization's id, or one no longer pending, is not found. */
export async function revokeInvitation(
  db: Db,
  actor: Member,
  id: unknown,
): Promise<{ ok: true } | { ok: false; code: MemberRefusal | "invitation_not_found" }> {
  return db.transaction(async (tx) => {
    const held = await holdManagers(tx, actor, "share");
    if (!held.ok) return held;
    if (!isUuid(id)) return { ok: false as const, code: "invitation_not_found" as const };
    const [row] = await tx
      .update(invitation)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(invitation.id, id), eq(invitation.orgId, actor.orgId), pending))
      .returning({ id: invitation.id });
    return row ? { ok: true as const } : { ok: false as const, code: "invitation_not_found" as const };
  });
}

/** `hasAccount`: the email has an account already, so the link is accepted with that account's password, not by signing up. */
export type InvitationView = { orgName: string; email: string; role: Role; expiresAt: Date; hasAccount: boolean };

/** What a live link invites to, for its sign-up page; null for an unknown, used, revoked or expired one alike. */
export async function peekInvitation(db: Db, token: unknown): Promise<InvitationView | null> {
  if (!isToken(token)) return null;
  const [row] = await db
    .select({
      orgName: organization.name,
      email: invitation.email,
      role: invitation.role,
      expiresAt: invitation.expiresAt,
      hasAccount: sql<boolean>`exists (select 1 from ${appUser} where ${appUser.email} = ${invitation.email})`,
    })
    .from(invitation)
    .innerJoin(organization, eq(organization.id, invitation.orgId))
    .where(and(eq(invitation.tokenSha256, tokenSha256(token)), pending));
  return row ?? null;
}

export type AcceptOutcome =
  | { ok: true; actor: Actor; sessionId: string; device: DeviceToken[] | null }
  | { ok: false; code: "invitation_not_found" | "already_member" | "invalid_request" | "invalid_credentials" }
  | { ok: false; code: "too_many_attempts"; retryAfterSeconds: number };

/**
 * The invitee accepts a live link. An email with no account signs up (`name` and a new
 * password: AcceptInput, else invalid_request); an email with an account (a removed member,
 * 0077) signs in with that account's password instead (`rejoin`). Either way the invitation is
 * consumed by a conditional update, so of two accepts racing one finds it used (not found), and
 * the membership with the invited role and a session are made in the same transaction.
 * `client` is what sign-in's limits count an existing account's attempt by (lib/rate-limit.ts).
 */
export async function acceptInvitation(
  db: Db,
  token: unknown,
  body: z.output<typeof AcceptBody>,
  client: { address: string | null; device?: DeviceToken[] },
): Promise<AcceptOutcome> {
  const invited = await peekInvitation(db, token);
  if (!invited) return { ok: false, code: "invitation_not_found" };
  if (invited.hasAccount) return rejoin(db, token as string, invited.email, body.password, client);
  const input = AcceptInput.safeParse(body);
  if (!input.success) return { ok: false, code: "invalid_request" };
  const result = await signUp(db, token as string, input.data);
  return result.ok ? { ...result, device: null } : result;
}

/**
 * A new person: the invitation consumed, then the user, their membership in the invited
 * organization and a session, in one transaction. The password is hashed before, so no lock
 * waits on it.
 */
async function signUp(
  db: Db,
  token: string,
  input: z.output<typeof AcceptInput>,
): Promise<{ ok: true; actor: Actor; sessionId: string } | { ok: false; code: "invitation_not_found" | "already_member" }> {
  const passwordHash = await hashPassword(input.password);
  return db
    .transaction(async (tx) => {
      const [taken] = await tx
        .update(invitation)
        .set({ acceptedAt: sql`now()` })
        .where(and(eq(invitation.tokenSha256, tokenSha256(token)), pending))
        .returning({ id: invitation.id, orgId: invitation.orgId, email: invitation.email, role: invitation.role });
      if (!taken) return { ok: false as const, code: "invitation_not_found" as const };
      const [user] = await tx
        .insert(appUser)
        .values({ email: taken.email, name: input.name, passwordHash })
        .onConflictDoNothing({ target: appUser.email })
        .returning({ id: appUser.id });
      // An account with this email was made since the invitation: nothing is kept.
      if (!user) throw new AlreadyMember();
      await tx.insert(membership).values({ orgId: taken.orgId, userId: user!.id, role: taken.role });
      await tx.update(invitation).set({ acceptedBy: user!.id }).where(eq(invitation.id, taken.id));
      const session = await startSession(tx, user!);
      if (!session.ok) throw new Error("a session could not be started for a new member");
      return session;
    })
    .catch(alreadyMember);
}

/**
 * An account comes back (0062's "add an existing user", for a member an admin removed): the
 * account's own password, counted against sign-in's limits as a sign-in is (a wrong one is 401
 * `invalid_credentials` and writes nothing; the right one takes its attempt back, and the browser
 * gets a device token as at sign-in). Then one transaction: the person's lock (the one
 * `user_home_org` takes, so two invitations accepted at once, or a first organization made
 * meanwhile, wait for each other), the invitation consumed (conditional: a second accept of the
 * same link finds it used, 404), the person still in no organization (else 409 `already_member`,
 * and the invitation is left as it was), `removed_at` cleared on the password just verified,
 * the membership with the invited role, and the session.
 */
async function rejoin(
  db: Db,
  token: string,
  email: string,
  password: string,
  client: { address: string | null; device?: DeviceToken[] },
): Promise<AcceptOutcome> {
  const gate = await admitSignIn(db, { email, address: client.address, device: client.device });
  if (!gate.ok) return { ok: false, code: "too_many_attempts", retryAfterSeconds: gate.retryAfterSeconds };
  const [user] = await db.select({ id: appUser.id, passwordHash: appUser.passwordHash }).from(appUser).where(eq(appUser.email, email));
  const valid = await verifyPassword(password, user?.passwordHash ?? (await dummyPasswordHash()));
  if (!user || !valid) return { ok: false, code: "invalid_credentials" };
  await gate.succeeded();
  const result = await db
    .transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('user_home_org'), hashtext(${user.id}))`);
      const [taken] = await tx
        .update(invitation)
        .set({ acceptedAt: sql`now()`, acceptedBy: user.id })
        .where(and(eq(invitation.tokenSha256, tokenSha256(token)), eq(invitation.email, email), pending))
        .returning({ orgId: invitation.orgId, role: invitation.role });
      if (!taken) return { ok: false as const, code: "invitation_not_found" as const };
      const [member] = await tx.select({ orgId: membership.orgId }).from(membership).where(eq(membership.userId, user.id)).limit(1);
      // In an organization now (this one or another): the invitation's consumption is undone.
      if (member) throw new AlreadyMember();
      const [back] = await tx
        .update(appUser)
        .set({ removedAt: null })
        .where(and(eq(appUser.id, user.id), eq(appUser.passwordHash, user.passwordHash)))
        .returning({ id: appUser.id });
      // The password was changed since it was verified: the one typed is no longer the account's.
      if (!back) throw new PasswordChanged();
      await tx.insert(membership).values({ orgId: taken.orgId, userId: user.id, role: taken.role });
      const session = await startSession(tx, user);
      if (!session.ok) throw new Error("a session could not be started for a returning member");
      return session;
    })
    .catch((error: unknown) => {
      if (error instanceof PasswordChanged) return { ok: false as const, code: "invalid_credentials" as const };
      return alreadyMember(error);
    });
  if (!result.ok) return result;
  return { ...result, device: withNewDeviceToken(client.device ?? [], emailKey(email)) };
}

class AlreadyMember extends Error {}
class PasswordChanged extends Error {}

const alreadyMember = (error: unknown) => {
  if (error instanceof AlreadyMember) return { ok: false as const, code: "already_member" as const };
  throw error;
};

// ---------------------------------------------------------------------------------------
// Members

export type MemberView = { id: string; name: string; email: string; role: Role };

/** The actor's organization's members, for any member of it, by name. */
export async function listMembers(db: Db, actor: Member): Promise<MemberView[]> {
  return db
    .select({ id: appUser.id, name: appUser.name, email: appUser.email, role: membership.role })
    .from(membership)
    .innerJoin(appUser, eq(appUser.id, membership.userId))
    .where(and(eq(membership.orgId, actor.orgId), memberOf(membership.orgId, actor.id)))
    .orderBy(asc(appUser.name), asc(appUser.email));
}

export type MemberWriteRefusal = MemberRefusal | "member_not_found" | "last_admin";

/** Locks the target's membership in the actor's organization and says whether the change would leave no admin. */
async function holdTarget(tx: Tx, actor: Member, memberId: unknown, managers: string[], newRole: Role | null) {
  if (!isUuid(memberId)) return { ok: false as const, code: "member_not_found" as const };
  const [target] = await tx
    .select({ userId: membership.userId, role: membership.role })
    .from(membership)
    .where(and(eq(membership.orgId, actor.orgId), eq(membership.userId, memberId)))
    .for("update");
  if (!target) return { ok: false as const, code: "member_not_found" as const };
  // The id as the database spells it: a path's upper-case uuid names the same member.
  const losesManager = isManagerRole(target.role) && (newRole === null || !isManagerRole(newRole));
  if (losesManager && managers.filter((m) => m !== target.userId).length === 0) return { ok: false as const, code: "last_admin" as const };
  return { ok: true as const, userId: target.userId };
}

/** An admin changes a member's role; the organization's last admin cannot be demoted (themself included). */
export async function changeRole(
  db: Db,
  actor: Member,
  memberId: unknown,
  newRole: Role,
): Promise<{ ok: true; member: MemberView } | { ok: false; code: MemberWriteRefusal }> {
  return db.transaction(async (tx) => {
    const held = await holdManagers(tx, actor, "update");
    if (!held.ok) return held;
    const target = await holdTarget(tx, actor, memberId, held.managers, newRole);
    if (!target.ok) return target;
    // The chain's entry for the membership names the admin who acted (decision 0080).
    await actAs(tx, actor.id);
    await tx
      .update(membership)
      .set({ role: newRole })
      .where(and(eq(membership.orgId, actor.orgId), eq(membership.userId, target.userId)));
    const [member] = await tx
      .select({ id: appUser.id, name: appUser.name, email: appUser.email, role: membership.role })
      .from(membership)
      .innerJoin(appUser, eq(appUser.id, membership.userId))
      .where(and(eq(membership.orgId, actor.orgId), eq(membership.userId, target.userId)));
    return { ok: true as const, member: member! };
  });
}

/**
 * An admin removes a member (themself too, unless the last admin): in one transaction the
 * membership goes, every session of theirs in the organization ends and their leases in flight
 * there close, as at sign-out everywhere; the running generations are told after the commit.
 * Their invoices stay, owned by a non-member, until an admin gives them to someone.
 */
export async function removeMember(
  db: Db,
  actor: Member,
  memberId: unknown,
  dispatch: LeaseDispatch,
): Promise<{ ok: true; revoked: string[] } | { ok: false; code: MemberWriteRefusal }> {
  const result = await db.transaction(async (tx) => {
    const held = await holdManagers(tx, actor, "update");
    if (!held.ok) return held;
    const target = await holdTarget(tx, actor, memberId, held.managers, null);
    if (!target.ok) return target;
    await actAs(tx, actor.id);
    const revoked = await revokeMemberSessions(tx, { userId: target.userId, orgId: actor.orgId });
    await tx.delete(membership).where(and(eq(membership.orgId, actor.orgId), eq(membership.userId, target.userId)));
    // So their next sign-in finds no organization rather than making one of their own (0077).
    await tx
      .update(appUser)
      .set({ removedAt: sql`clock_timestamp()` })
      .where(eq(appUser.id, target.userId));
    return { ok: true as const, revoked };
  });
  if (result.ok) await tellClosed(dispatch, result.revoked, "signed_out");
  return result;
}

// ---------------------------------------------------------------------------------------
// A first organization, by command

/** A new organization with no members yet and an admin invitation for `adminEmail`: the setup link. */
export async function createOrganization(
  db: Db,
  input: z.output<typeof OrgInput>,
  origin: string,
): Promise<{ ok: true; orgId: string; invitation: CreatedInvitation } | { ok: false; code: "already_member" }> {
  const { token, sha256 } = newToken();
  return db.transaction(async (tx) => {
    const [existing] = await tx.select({ id: appUser.id }).from(appUser).where(eq(appUser.email, input.adminEmail));
    if (existing) return { ok: false as const, code: "already_member" as const };
    const [org] = await tx.insert(organization).values({ name: input.name }).returning({ id: organization.id });
    const [row] = await tx
      .insert(invitation)
      .values({
        orgId: org!.id,
        email: input.adminEmail,
        role: "admin",
        tokenSha256: sha256,
        expiresAt: sql`now() + make_interval(days => ${INVITATION_TTL_DAYS})`,
      })
      .returning({ id: invitation.id, expiresAt: invitation.expiresAt });
    return { ok: true as const, orgId: org!.id, invitation: { id: row!.id, url: invitationUrl(origin, token), expiresAt: row!.expiresAt } };
  });
}
