import { z } from "zod";
import { json, param, readBody, refuseBody, sessionCheckedRoute } from "@/app/_lib/http";
import { applyLease } from "@/lib/leases";

// A partial apply (categorize_lines): the keys of the changes accepted, as the changes list names
// them. No body: every change the proposal makes.
const ApplyBody = z.strictObject({ lines: z.array(z.string().max(100)).max(1000) });

// The session is checked (and held, FOR SHARE) in the apply's own transaction, before anything is written.
export const POST = sessionCheckedRoute(async ({ req, db, actor, params }) => {
  const leaseId = param(params, "id");
  let accept: string[] | undefined;
  if (!refuseBody(req).ok) {
    const body = await readBody(req, ApplyBody);
    if (!body.ok) return body;
    accept = body.value.lines;
  }
  const result = await applyLease(db, actor.id, leaseId, { sessionId: actor.sessionId, accept });
  return result.ok ? json({ status: "applied", lease_id: leaseId, written: result.written }) : result;
});
