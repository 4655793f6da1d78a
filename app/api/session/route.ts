import { getDb } from "@/db/client";
import { requestSession } from "@/lib/sessions";
import { authedRoute, json, problem, publicRoute, readBody, refuseBody } from "@/app/_lib/http";
import { revokeSession } from "@/lib/leases";
import { actorJson } from "@/app/_lib/serialize";
import { deviceTokens, requestDevice } from "@/lib/device-cookie";
import { clientAddress } from "@/lib/rate-limit";
import { attemptSignIn, SignInInput } from "@/lib/sessions";
import { inngestDispatch } from "@/inngest/dispatch";

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

export const GET = authedRoute(async ({ actor }) => json({ actor: actorJson(actor) }));

export const DELETE = authedRoute(async ({ req, db, actor, session, cookies }) => {
  const body = refuseBody(req);
  if (!body.ok) return problem(body.code);
  const { revoked } = await revokeSession(db, { actorId: actor.id, sessionId: actor.sessionId }, inngestDispatch);
  session.destroy();
  return json({ status: "signed_out", revoked }, 200, cookies);
});
