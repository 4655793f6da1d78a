import "server-only";
// Sign-in and both halves of a session. The cookie (iron-session) carries only the session
// id and user id; the app_session table decides whether they still mean anything.
import { and, eq, sql, type SQL } from "drizzle-orm";
import { getIronSession, type IronSession, type SessionOptions } from "iron-session";
import { z } from "zod";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { appSession, appUser, membership, organization } from "@/db/schema";
import { appEnv } from "./env";
import { isUuid } from "./ids";
import { text } from "./input";
import { dummyPasswordHash, hashPassword, needsRehash, verifyPassword } from "./password";
import { withNewDeviceToken, type DeviceToken } from "./device-cookie";
import { admitSignIn, emailKey } from "./rate-limit";
import type { Role } from "./org-codes";

/** The signed-in person, in the organization their session works in, with their role there (lib/access.ts's Member). */
export type Actor = { id: string; email: string; name: string; orgId: string; orgName: string; role: Role };
export type SessionData = { sid?: string; uid?: string };

/** One session's life: the cookie's seal (iron-session) and the row's `expires_at` (database clock). */
export const SESSION_TTL_SECONDS = 60 * 60 * 12;

/** The sign-in form, for the API route and the page's server action alike. */
export const SignInInput = z.object({
  email: text().trim().min(3).max(320),
  password: z.string().min(1).max(1024),
});

/** Why a sign-in was refused: the email and password do not match, or they do but the user is in no organization (0077). */
export type SignInRefusal = "invalid_credentials" | "no_organization";

export async function signIn(
  db: Db,
  email: string,
  password: string,
): Promise<{ ok: true; actor: Actor; sessionId: string } | { ok: false; code: SignInRefusal }> {
  const [user] = await db.select().from(appUser).where(eq(appUser.email, email.trim().toLowerCase()));
  // Hash even when the email is unknown, so the answer takes as long either way.
  const valid = await verifyPassword(password, user?.passwordHash ?? (await dummyPasswordHash()));
  if (!user || !valid) return { ok: false, code: "invalid_credentials" };
  if (needsRehash(user.passwordHash)) {
    // An older kind of hash (scrypt) or a lower cost: replaced now that the password is known.
    // Only if it is still the hash just verified, so a password changed meanwhile is kept.
    await db
      .update(appUser)
      .set({ passwordHash: await hashPassword(password) })
      .where(and(eq(appUser.id, user.id), eq(appUser.passwordHash, user.passwordHash)));
  }
  return startSession(db, user);
}

/**
 * A new session for a user whose password (or invitation) was just proven, in the organization
 * they work in (user_home_org, migrations 0006 and 0009: their oldest membership, or for a user
 * who never had one, one of their own). A member an admin removed has none and is given none:
 * `no_organization`, and no session row is written (docs/decisions/0077).
 */
export async function startSession(
  db: Db | Tx,
  user: { id: string },
): Promise<{ ok: true; actor: Actor; sessionId: string } | { ok: false; code: "no_organization" }> {
  // One statement: the organization is chosen and the session written together, or neither.
  const [session] = rowsOf<{ id: string }>(
    await db.execute(sql`
      insert into ${appSession} (user_id, org_id, expires_at)
      select ${user.id}, home.org_id, now() + make_interval(secs => ${SESSION_TTL_SECONDS})
      from (select user_home_org(${user.id}) as org_id) as home
      where home.org_id is not null
      returning id`),
  );
  if (!session) return { ok: false, code: "no_organization" };
  // Null only if the membership was removed between the two statements: no organization either.
  const actor = await actorOfSession(db, user.id, session.id, sql`true`);
  if (!actor) return { ok: false, code: "no_organization" };
  return { ok: true, actor, sessionId: session.id };
}

/** The session's actor, with their membership in the session's organization, where `condition` holds. */
async function actorOfSession(
  db: Db | Tx,
  userId: string,
  sessionId: string,
  condition: SQL,
): Promise<(Actor & { sessionId: string }) | null> {
  const [row] = await db
    .select({
      id: appUser.id,
      email: appUser.email,
      name: appUser.name,
      orgId: membership.orgId,
      orgName: organization.name,
      role: membership.role,
      sessionId: appSession.id,
    })
    .from(appSession)
    .innerJoin(appUser, eq(appUser.id, appSession.userId))
    .innerJoin(membership, and(eq(membership.orgId, appSession.orgId), eq(membership.userId, appSession.userId)))
    .innerJoin(organization, eq(organization.id, membership.orgId))
    .where(and(eq(appSession.id, sessionId), eq(appSession.userId, userId), condition));
  return row ?? null;
}

export type SignInOutcome =
  | (Extract<Awaited<ReturnType<typeof signIn>>, { ok: true }> & { device: DeviceToken[] })
  | Extract<Awaited<ReturnType<typeof signIn>>, { ok: false }>
  | { ok: false; code: "too_many_attempts"; retryAfterSeconds: number };

/**
 * Sign-in as the API and the page offer it: within the attempt limits (lib/rate-limit.ts),
 * which answer the same for known and unknown emails and, once hit, refuse even the right
 * password until the block ends, except to a browser whose device cookie holds a token for
 * that email. A success answers the browser's tokens with a fresh one for this user, for the
 * caller to write into the device cookie.
 */
export async function attemptSignIn(
  db: Db,
  input: { email: string; password: string; address: string | null; device?: DeviceToken[] },
): Promise<SignInOutcome> {
  const gate = await admitSignIn(db, input);
  if (!gate.ok) return { ok: false, code: "too_many_attempts", retryAfterSeconds: gate.retryAfterSeconds };
  const result = await signIn(db, input.email, input.password);
  // The right password of a user in no organization is no failed attempt: it takes its attempt back too.
  if (!result.ok && result.code === "no_organization") await gate.succeeded();
  if (!result.ok) return result;
  await gate.succeeded();
  return { ...result, device: withNewDeviceToken(input.device ?? [], emailKey(input.email)) };
}

/**
 * The actor a cookie names, if its server-side session is still live (not revoked, not past its
 * end by the database clock) and its user still a member of the session's organization.
 */
export async function resolveActor(db: Db, data: SessionData): Promise<(Actor & { sessionId: string }) | null> {
  if (!isUuid(data.sid) || !isUuid(data.uid)) return null;
  return actorOfSession(db, data.uid, data.sid, liveSession(data.uid, data.sid));
}

/** The actor's session row, while it is live: not revoked, not run out by the database clock. */
export function liveSession(actorId: string, sessionId: string): SQL {
  return and(
    eq(appSession.id, sessionId),
    eq(appSession.userId, actorId),
    sql`${appSession.revokedAt} is null`,
    sql`${appSession.expiresAt} > now()`,
  )!;
}

/** Whether the actor's session is live by the database clock; if so, held FOR SHARE until commit (sign-out waits). */
export async function holdLiveSession(tx: Tx, actorId: string, sessionId: string): Promise<boolean> {
  if (!isUuid(sessionId)) return false;
  const [live] = await tx.select({ id: appSession.id }).from(appSession).where(liveSession(actorId, sessionId)).for("share");
  return Boolean(live);
}

/**
 * The session has not run out by the clock as this statement runs, not as its transaction began:
 * the one judgement of `expires_at` after a wait for a row (sessionHeld, open, apply). Revocation
 * needs no second look: the transaction holds the row FOR SHARE, so a sign-out waits for it.
 */
const unexpiredNow = sql`${appSession.expiresAt} > clock_timestamp()`;

/** `unexpiredNow` as a boolean for a clause or a column of the statement that writes, so it costs no statement. */
export const sessionLiveNow = (sessionId: string) =>
  sql<boolean>`exists (select 1 from ${appSession} where ${appSession.id} = ${sessionId} and ${unexpiredNow})`;

/** Thrown inside a transaction of `sessionHeld` when its session is not live: the transaction rolls back. */
export class SessionEnded extends Error {
  constructor() {
    super("the session is not live");
  }
}

/**
 * `db` for the writes of a server action: each of its transactions first holds the session
 * FOR SHARE (so a sign-out waits for the commit, and a session revoked before writes nothing)
 * and last checks `expires_at` on the clock of that moment, after any wait for a row; either
 * failing throws SessionEnded, rolling back what the transaction did. Reads pass through.
 */
export function sessionHeld(db: Db, session: { actorId: string; sessionId: string }): Db {
  const { actorId, sessionId } = session;
  const transaction = ((work: (tx: Tx) => Promise<unknown>, config?: Parameters<Db["transaction"]>[1]) =>
    db.transaction(async (tx) => {
      if (!(await holdLiveSession(tx, actorId, sessionId))) throw new SessionEnded();
      const result = await work(tx);
      const [live] = await tx
        .select({ id: appSession.id })
        .from(appSession)
        .where(and(eq(appSession.id, sessionId), unexpiredNow));
      if (!live) throw new SessionEnded();
      return result;
    }, config)) as Db["transaction"];
  // Everything else is the pool's own db (db/client.ts forwards to the pool of the moment).
  return Object.assign(Object.create(db) as Db, { transaction });
}

// ---------------------------------------------------------------------------------------
// The cookie

export const SESSION_COOKIE = "claimcheck_session";

export function sessionOptions(): SessionOptions {
  const env = appEnv();
  return {
    cookieName: SESSION_COOKIE,
    password: env.sessionPasswords,
    ttl: SESSION_TTL_SECONDS,
    cookieOptions: { httpOnly: true, sameSite: "lax", secure: env.cookieSecure, path: "/" },
  };
}

export type Session = IronSession<SessionData>;

// iron-session reads some cookies that do not unseal as an empty session (bad MAC, expired)
// and throws on others (a changed prefix, a non-numeric expiry, bad base64). Either way the
// cookie names nobody: we open the session again as if no cookie had come, which still
// throws on a configuration error and still writes Set-Cookie where the first would have.
// (app/_lib/actor.ts does the same for pages and server actions.)

/** The session of a route handler's request; `save()` and `destroy()` write Set-Cookie onto `res`. */
export async function requestSession(req: Request, res: Response): Promise<Session> {
  try {
    return await getIronSession<SessionData>(req, res, sessionOptions());
  } catch {
    return getIronSession<SessionData>(new Request(req.url), res, sessionOptions());
  }
}

/** Whether a request header `cookie` carries the session cookie at all, readable or not. */
export function sentSessionCookie(cookieHeader: string | null): boolean {
  return (cookieHeader ?? "").split(";").some((part) => part.trim().startsWith(`${SESSION_COOKIE}=`));
}

/**
 * A route's answer to a cookie that names no live session (unreadable, revoked, expired):
 * clear it, so the browser stops sending it. No cookie sent, nothing to clear.
 */
export function discardSession(req: Request, session: Session): void {
  if (sentSessionCookie(req.headers.get("cookie"))) session.destroy();
}
