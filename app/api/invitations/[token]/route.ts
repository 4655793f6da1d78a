import { getDb } from "@/db/client";
import { json, problem, publicRoute, readBody } from "@/app/_lib/http";
import { invitationViewJson } from "@/app/_lib/members-json";
import { actorJson } from "@/app/_lib/serialize";
import { deviceTokens, requestDevice } from "@/lib/device-cookie";
import { AcceptBody, acceptInvitation, isToken, peekInvitation, tokenSha256 } from "@/lib/members";
import { admitInvitation, clientAddress } from "@/lib/rate-limit";
import { requestSession } from "@/lib/sessions";

// The only routes besides sign-in open without a session: they read and consume one invitation,
// named by its token's hash, and nothing else. Rate-limited per link and per address.

/** The token from the path; publicRoute passes no params, so it is read from the URL. */
function tokenOf(req: Request): string {
  const last = new URL(req.url).pathname.split("/").pop() ?? "";
  return decodeURIComponent(last);
}

async function admitted(req: Request, token: string): Promise<Response | null> {
  const db = await getDb();
  const gate = await admitInvitation(db, { tokenKey: tokenSha256(token), address: clientAddress(req.headers) });
  if (gate.ok) return null;
  return problem("too_many_attempts", new Headers({ "retry-after": String(gate.retryAfterSeconds) }));
}

// GET /api/invitations/:token – what a live invitation invites to.
export const GET = publicRoute(async (req) => {
  const token = tokenOf(req);
  if (!isToken(token)) return problem("invitation_not_found");
  const refused = await admitted(req, token);
  if (refused) return refused;
  const view = await peekInvitation(await getDb(), token);
  return view ? json(invitationViewJson(view)) : problem("invitation_not_found");
});

// POST /api/invitations/:token – the invitee signs up {name, password}, or, when the email has an
// account (a removed member), signs in with its {password}: 201 {actor} and a session cookie.
export const POST = publicRoute(async (req, res) => {
  const token = tokenOf(req);
  if (!isToken(token)) return problem("invitation_not_found");
  const refused = await admitted(req, token);
  if (refused) return refused;
  const body = await readBody(req, AcceptBody);
  if (!body.ok) return problem(body.code);
  const db = await getDb();
  const device = await requestDevice(req, res);
  const result = await acceptInvitation(db, token, body.value, { address: clientAddress(req.headers), device: deviceTokens(device) });
  if (!result.ok && result.code === "too_many_attempts") {
    return problem(result.code, new Headers({ "retry-after": String(result.retryAfterSeconds) }));
  }
  if (!result.ok) return problem(result.code);
  const session = await requestSession(req, res);
  session.sid = result.sessionId;
  session.uid = result.actor.id;
  await session.save();
  if (result.device) {
    device.tokens = result.device;
    await device.save();
  }
  return json({ actor: actorJson(result.actor) }, 201, res.headers);
});
