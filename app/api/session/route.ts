import { getDb } from "@/db/client";
import { requestSession } from "@/lib/sessions";
import { authedRoute, json, problem, publicRoute, readBody, refuseBody, sessionCheckedRoute } from "@/app/_lib/http";
import { revokeAllSessions, revokeSession } from "@/app/_lib/leases";
import { actorJson, sessionActorJson } from "@/app/_lib/serialize";
import { deviceTokens, requestDevice } from "@/lib/device-cookie";
import { clientAddress } from "@/lib/rate-limit";
import { attemptSignIn, SignInInput } from "@/lib/sessions";

export const POST = publicRoute(async (req, res) => {
  const body = await readBody(req, SignInInput);
  if (!body.ok) return problem(body.code);
  const db = await getDb();
  const device = await requestDevice(req, res);
  const result = await attemptSignIn(db, { ...body.value, address: clientAddress(req.headers), device: deviceTokens(device) });
  if (!result.ok && result.code === "too_many_attempts") {
    return problem(result.code, new Headers({ "retry-after": String(result.retryAfterSeconds) }));
  }
  if (!result.ok) return problem(result.code);
  const session = await requestSession(req, res);
  session.sid = result.sessionId;
  session.uid = result.actor.id;
  await session.save();
  device.tokens = result.device;
  await device.save();
  return json({ actor: actorJson(result.actor) }, 200, res.headers);
});

export const GET = authedRoute(async ({ actor }) => json({ actor: sessionActorJson(actor) }));

/** `?scope=`: absent for this session, `all` for every session of the user; anything else is no scope. */
function signOutScope(query: URLSearchParams): "this" | "all" | null {
  const scopes = query.getAll("scope");
  if (scopes.length === 0) return "this";
  return scopes.length === 1 && scopes[0] === "all" ? "all" : null;
}

// DELETE /api/session – sign out; ?scope=all signs out everywhere. The cookie's claim is enough
// to close its session's leases even when that session is no longer live (it ran out, or was
// ended): the answer is then 401, but nothing it opened stays in flight.
export const DELETE = sessionCheckedRoute(async ({ req, db, actor, session, cookies }) => {
  const body = refuseBody(req);
  if (!body.ok) return body;
  const scope = signOutScope(new URL(req.url).searchParams);
  if (!scope) return "invalid_request";
  const input = { actorId: actor.id, sessionId: actor.sessionId };
  const result =
    scope === "all"
      ? await revokeAllSessions(db, input)
      : await revokeSession(db, input).then(({ live, revoked }) => ({ ok: live, revoked }));
  if (!result.ok) return "not_signed_in";
  session.destroy();
  return json({ status: "signed_out", revoked: result.revoked }, 200, cookies);
});
