// Where pages send a browser whose session cookie names no live session (tampered, revoked,
// expired): a route handler may set cookies, a page may not. It clears only a cookie that
// is already dead, so a cross-site link here cannot sign anyone out.
import { getDb } from "@/db/client";
import { discardSession, requestSession } from "@/lib/sessions";
import { publicRoute } from "@/app/_lib/http";
import { safeReturnPath, signInPath } from "@/lib/return-path";
import { resolveActor } from "@/lib/sessions";

export const GET = publicRoute(async (req, res) => {
  const session = await requestSession(req, res);
  const actor = await resolveActor(await getDb(), session);
  if (!actor) discardSession(req, session);
  const headers = new Headers(res.headers);
  const next = safeReturnPath(new URL(req.url).searchParams.get("next"));
  headers.set("location", actor ? (next ?? "/invoices") : signInPath(next));
  headers.set("cache-control", "no-store");
  return new Response(null, { status: 303, headers });
});
