import { json, param, sessionCheckedRoute } from "@/app/_lib/http";
import { openEventsCursor, readLeaseForSession } from "@/lib/leases";
import { leaseJson } from "@/app/_lib/serialize";

// The session is checked in the read's own statement (one transaction per read). The lease
// comes with the latest page of its events; `?events_before=<cursor>` (a response's
// `events_before`) asks for the page before it instead. A cursor that is not one this app sealed
// for this lease is 400, decided before anything is read.
export const GET = sessionCheckedRoute(async ({ req, db, actor, params }) => {
  const cursors = new URL(req.url).searchParams.getAll("events_before");
  const before = cursors.length > 1 ? "invalid" : openEventsCursor(param(params, "id"), cursors[0] ?? null);
  if (before === "invalid") return "invalid_cursor";
  const lease = await readLeaseForSession(db, { actorId: actor.id, sessionId: actor.sessionId }, param(params, "id"), { before });
  if (lease === "signed_out") return "not_signed_in";
  return lease ? json(leaseJson(lease)) : "lease_not_found";
});
