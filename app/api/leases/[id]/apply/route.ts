import { z } from "zod";
import { json, param, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { applyLease } from "@/lib/leases";

// A partial apply (categorize_lines): the keys of the changes accepted, as the changes list names
// them. No body (or `{}`): every change the proposal makes. The body is read whole before anything
// is written, however it is framed (a length, chunks, or neither), so a body that breaks off is a
// refusal, never a write.
const ApplyBody = z.strictObject({ lines: z.array(z.string().max(100)).max(1000).optional() });

// The session is checked (and held, FOR SHARE) in the apply's own transaction, before anything is written.
export const POST = sessionCheckedRoute(async ({ req, db, actor, params }) => {
  const leaseId = param(params, "id");
  const body = await readBody(req, ApplyBody);
  if (!body.ok) return body;
  const result = await applyLease(db, actor.id, leaseId, { sessionId: actor.sessionId, accept: body.value.lines });
  return result.ok ? json({ status: "applied", lease_id: leaseId, written: result.written }) : result;
});
