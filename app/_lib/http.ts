import "server-only";
// The route layer's one wrapper: actor from the session, then the handler; results mapped
// to HTTP in one place. Web Request/Response only, so tests call route handlers directly.
import type { z } from "zod";
import { getDb, isConnectionError, isDbUnavailable, type Db } from "@/db/client";
import { isUuid } from "@/lib/ids";
import { log } from "@/lib/log";
import { withRequestId } from "@/lib/log-context";
import { isForeignOrigin, isStateChanging } from "@/lib/origin";
import { discardSession, requestSession, resolveActor, SessionEnded, sessionHeld, type Actor } from "@/lib/sessions";

export const ERROR_STATUS = {
  invalid_request: 422,
  // A CSV import with a bad row: `errors` names each row, column and what is wrong; nothing written.
  invalid_csv: 422,
  invalid_cursor: 400,
  purpose_not_allowed: 422,
  // Apply of categorize_lines: an accepted line that is not one of the proposal's, or none accepted.
  invalid_lines: 422,
  // A payment date after the database's today (POST /api/invoices/:id/status).
  paid_on_in_future: 422,
  invalid_credentials: 401,
  not_signed_in: 401,
  invoice_not_found: 404,
  lease_not_found: 404,
  // An approval request unknown, another organization's, or not visible to the caller: all the same.
  approval_not_found: 404,
  // A lease one may read that wrote nothing (GET /api/leases/:id/receipt, docs/decisions/0079).
  receipt_not_found: 404,
  member_not_found: 404,
  // An invitation link unknown, used, revoked or expired: all the same.
  invitation_not_found: 404,
  cross_origin: 403,
  // The row is visibly there (the member's own organization), but the member's role may not do this.
  forbidden: 403,
  // Sign-in with the right password of a user removed from their organization and in no other (0077).
  no_organization: 403,
  // The requester deciding their own approval request (the four-eyes lane: admins included).
  same_person: 403,
  lease_open: 409,
  lease_applied: 409,
  lease_rejected: 409,
  lease_expired: 409,
  lease_not_cancelable: 409,
  lease_in_flight: 409,
  invoice_changed: 409,
  invoice_number_taken: 409,
  // The email has an account already: a person belongs to one organization for now.
  already_member: 409,
  // The change would leave the organization without an admin.
  last_admin: 409,
  proposal_unusable: 409,
  // The four-eyes lane (docs/decisions/0078): apply under four_eyes; apply of a submitted lease;
  // submit under self; the approver's hash is not the proposal's; a request already ended.
  approval_required: 409,
  approval_pending: 409,
  approval_not_required: 409,
  proposal_changed: 409,
  approval_approved: 409,
  approval_declined: 409,
  approval_expired: 409,
  approval_withdrawn: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_attempts: 429,
  // A spending cap of the organization or the member is reached (lib/spend): Retry-After until it resets.
  budget_exhausted: 429,
  internal_error: 500,
  dispatch_failed: 503,
  too_many_streams: 429,
  service_unavailable: 503,
  // The event stream could not LISTEN; the page polls GET /api/leases/:id meanwhile.
  events_unavailable: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Seconds a client should wait before trying again, sent as Retry-After with the code by
 * problem(). too_many_attempts sends the rate limiter's own figure.
 */
export const RETRY_AFTER_S: Partial<Record<ErrorCode, number>> = {
  service_unavailable: 3,
  events_unavailable: 3,
  too_many_streams: 10,
};

export function json(body: unknown, status = 200, headers?: Headers): Response {
  const out = new Headers(headers);
  out.set("content-type", "application/json");
  out.set("cache-control", "no-store");
  return new Response(JSON.stringify(body), { status, headers: out });
}

/** `{detail: code}`, and `more` beside it where a refusal has more to say (lease_in_flight's holder). */
export function problem(code: ErrorCode, headers?: Headers, more?: Record<string, unknown>): Response {
  const out = new Headers(headers);
  const retryAfter = RETRY_AFTER_S[code];
  if (retryAfter !== undefined && !out.has("retry-after")) out.set("retry-after", String(retryAfter));
  return json({ detail: code, ...more }, ERROR_STATUS[code], out);
}

export const MAX_BODY_BYTES = 16 * 1024;

const mediaType = (contentType: string | null) => contentType?.split(";")[0]?.trim().toLowerCase();
const isJson = (contentType: string | null) => mediaType(contentType) === "application/json";
/**
 * The CSV import's body type. Like JSON it is no type a cross-site form or "simple" fetch can
 * send (those are text/plain, form and multipart), so accepting it opens no cross-site write.
 */
export const isCsv = (contentType: string | null) => mediaType(contentType) === "text/csv";

/**
 * The cross-site write guard, run before the session or the body is read. A foreign Origin
 * is 403; a declared non-JSON content type, or a body with none, is 415: a cross-site form
 * or a "simple" fetch can only send text/plain, form or multipart, and a JSON one needs a
 * CORS preflight that this app never grants. Bodiless POSTs and DELETEs (curl -X POST) pass.
 */
export function refuseCrossSite(req: Request, accepts: (contentType: string | null) => boolean = isJson): Response | null {
  if (!isStateChanging(req.method)) return null;
  if (isForeignOrigin(req.headers, req.url)) return problem("cross_origin");
  const contentType = req.headers.get("content-type");
  const hasBody = Number(req.headers.get("content-length") ?? "0") > 0 || req.headers.has("transfer-encoding");
  if (contentType !== null ? !accepts(contentType) : hasBody) return problem("unsupported_media_type");
  return null;
}

/** Reads a JSON body of at most MAX_BODY_BYTES, validated by `schema`. Never throws. */
export async function readBody<S extends z.ZodType>(
  req: Request,
  schema: S,
): Promise<{ ok: true; value: z.output<S> } | { ok: false; code: ErrorCode }> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) return { ok: false, code: "payload_too_large" };
  let text = "";
  if (req.body) {
    const reader = req.body.getReader();
    const decoder = new TextDecoder();
    let size = 0;
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        // The body's framing broke (a bad chunked encoding, a client gone mid-body).
        return { ok: false, code: "invalid_request" };
      }
      const { done, value } = chunk;
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) {
        await reader.cancel();
        return { ok: false, code: "payload_too_large" };
      }
      text += decoder.decode(value, { stream: true });
    }
    text += decoder.decode();
  }
  // A body that came without a length header and without a type (refuseCrossSite saw neither).
  if (text !== "" && !isJson(req.headers.get("content-type"))) return { ok: false, code: "unsupported_media_type" };
  let parsed: unknown;
  try {
    parsed = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { ok: false, code: "invalid_request" };
  }
  const result = schema.safeParse(parsed);
  return result.success ? { ok: true, value: result.data } : { ok: false, code: "invalid_request" };
}

/**
 * For the bodiless writes (apply, cancel, sign-out): a request that declares a body (a length
 * above zero, or chunks) is refused before anything is read or written. Reading it instead
 * let a body that broke off abort the request under Next.js after the write was done (found
 * by fuzzing), and these routes take nothing from a body.
 */
export function refuseBody(req: Request): { ok: true } | { ok: false; code: ErrorCode } {
  const length = req.headers.get("content-length");
  const declared = req.headers.has("transfer-encoding") || (length !== null && length.trim() !== "0");
  return declared ? { ok: false, code: "invalid_request" } : { ok: true };
}

type Params = Record<string, string | string[] | undefined>;
export type RouteContext = { params: Promise<Params> };
export type Authed = {
  req: Request;
  db: Db;
  actor: Actor & { sessionId: string };
  params: Params;
  /** Carries Set-Cookie headers written by the session. */
  cookies: Headers;
  session: Awaited<ReturnType<typeof requestSession>>;
};

/**
 * A refusal for the wrapper to answer: an error code, or a result that carries one (a domain
 * call's `{ ok: false, code }`, readBody's, refuseBody's), with `more` for what the body says
 * beside the code (lease_in_flight's holder). Only `code` and `more` reach the answer.
 */
export type Refusal = ErrorCode | { ok: false; code: ErrorCode; more?: Record<string, unknown> };
/**
 * What an actor route's handler returns: the Response it built (its 2xx, or a refusal it
 * answers itself, with headers of its own), or a Refusal, which the wrapper turns into
 * `{detail: code}` with its status; `not_signed_in` is the 401 that also clears the cookie.
 */
export type Answer = Response | Refusal;

/** A route that needs no actor (sign-in), with the same error handling. */
export function publicRoute(handler: (req: Request, res: Response) => Promise<Response>) {
  return (req: Request): Promise<Response> =>
    withRequestId(req.headers.get("x-request-id"), async () => {
      try {
        const refused = refuseCrossSite(req);
        if (refused) return refused;
        return await handler(req, new Response());
      } catch (error) {
        return internalError(req, error);
      }
    });
}

/**
 * What every actor route shares: the cross-site refusal first; a read that lost its
 * connection is run once more (the pool reconnects); a write is not, since it may have
 * committed: its transactions retry themselves (db/client.ts); anything else is 503 or 500.
 */
function guardedRoute(body: (req: Request, context: RouteContext) => Promise<Response>, accepts?: (contentType: string | null) => boolean) {
  const route = async (req: Request, context: RouteContext, retried = false): Promise<Response> => {
    try {
      const refused = refuseCrossSite(req, accepts);
      if (refused) return refused;
      return await body(req, context);
    } catch (error) {
      if (!retried && (req.method === "GET" || req.method === "HEAD") && isConnectionError(error)) {
        log.warn("read retried after a lost database connection", { path: new URL(req.url).pathname, error: String(error) });
        return route(req, context, true);
      }
      return internalError(req, error);
    }
  };
  return (req: Request, context: RouteContext) => withRequestId(req.headers.get("x-request-id"), () => route(req, context));
}

/** A refusal's code and what its body says beside it. */
function refusalOf(refusal: Refusal): { code: ErrorCode; more?: Record<string, unknown> } {
  return typeof refusal === "string" ? { code: refusal } : { code: refusal.code, more: refusal.more };
}

/** The 401 of a session that is not (or no longer) live: the cookie is cleared with it. */
function signedOut(req: Request, session: Authed["session"], cookies: Headers): Response {
  discardSession(req, session);
  return problem("not_signed_in", cookies);
}

export function authedRoute(handler: (ctx: Authed) => Promise<Answer>) {
  return guardedRoute(async (req, context) => {
    const res = new Response();
    const session = await requestSession(req, res);
    const db = await getDb();
    const actor = await resolveActor(db, session);
    if (!actor) return signedOut(req, session, res.headers);
    const params = (await context?.params) ?? {};
    const answer = await handler({ req, db, actor, params, cookies: res.headers, session });
    if (answer instanceof Response) return answer;
    // The session was resolved above: the refusal is answered as it is.
    const { code, more } = refusalOf(answer);
    return code === "not_signed_in" ? signedOut(req, session, res.headers) : problem(code, undefined, more);
  });
}

/** The actor and session a cookie names, not yet checked against the session row. */
export type Claim = { id: string; sessionId: string };
export type Claimed = Omit<Authed, "actor"> & {
  actor: Claim;
  /**
   * `db` for the handler's writes: each transaction holds the session FOR SHARE first and judges
   * its end on the clock last, after any wait for a row (sessionHeld, as the server actions do);
   * a session found dead there rolls the transaction back and the request answers 401.
   */
  held: Db;
};

/**
 * Like authedRoute, for the routes whose handler checks the session in its own statement or
 * transaction (the lease's read, open, apply; cancel and the invoice edit through `held`), so
 * the request costs one transaction, not two, and a write's session is judged in the
 * transaction that writes. The handler must check it before any write and on every path that
 * answers with a Response of its own. A Refusal it returns is answered here: `not_signed_in`
 * (its statement found the session not live) is 401 at once; any other code is 401 all the
 * same if the session is not live (one read: 401 outranks every refusal), else that code.
 */
export function sessionCheckedRoute(handler: (ctx: Claimed) => Promise<Answer>, accepts?: (contentType: string | null) => boolean) {
  return guardedRoute(async (req, context) => {
    const res = new Response();
    const session = await requestSession(req, res);
    const db = await getDb();
    const cookies = res.headers;
    if (!isUuid(session.sid) || !isUuid(session.uid)) return signedOut(req, session, cookies);
    const actor = { id: session.uid, sessionId: session.sid };
    const held = sessionHeld(db, { actorId: actor.id, sessionId: actor.sessionId });
    const params = (await context?.params) ?? {};
    let answer: Answer;
    try {
      answer = await handler({ req, db, held, actor, params, cookies, session });
    } catch (error) {
      if (error instanceof SessionEnded) return signedOut(req, session, cookies);
      throw error;
    }
    if (answer instanceof Response) return answer;
    const { code, more } = refusalOf(answer);
    if (code === "not_signed_in" || !(await resolveActor(db, session))) return signedOut(req, session, cookies);
    return problem(code, undefined, more);
  }, accepts);
}

/**
 * sessionCheckedRoute for the invoice writes off a lease's path (create, import, edit, status,
 * owner), which need the member's organization and role: read once from the session, here, in
 * one place; the write still judges the session in its own transaction through `held`.
 */
export function memberWriteRoute(
  handler: (ctx: Claimed & { member: Actor }) => Promise<Answer>,
  accepts?: (contentType: string | null) => boolean,
) {
  return sessionCheckedRoute(async (ctx) => {
    const member = await resolveActor(ctx.db, ctx.session);
    if (!member) return "not_signed_in";
    return handler({ ...ctx, member });
  }, accepts);
}

function internalError(req: Request, error: unknown): Response {
  // The database went away or gave up (killed connections, a restart, statement_timeout):
  // a 503 the client may retry, not a 500. See docs/decisions/0009-database-faults.md.
  const unavailable = isDbUnavailable(error);
  log.warn(unavailable ? "request failed: database unavailable" : "request failed", {
    method: req.method,
    path: new URL(req.url).pathname,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  if (unavailable) return problem("service_unavailable");
  return problem("internal_error");
}

export function param(params: Params, name: string): string {
  const value = params[name];
  return typeof value === "string" ? value : "";
}
