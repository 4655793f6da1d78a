import { z } from "zod";
import { json, problem, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { text } from "@/lib/input";
import { openLeaseAs } from "@/app/_lib/leases";

// Types only: the actor comes from the session, and any actor field in the body is dropped.
const OpenLease = z.object({ invoice_id: text().max(200), purpose: text().max(200) });

// The session is checked (and held, FOR SHARE) in openLease's own transaction.
export const POST = sessionCheckedRoute(async ({ req, db, actor }) => {
  const body = await readBody(req, OpenLease);
  if (!body.ok) return body;
  const result = await openLeaseAs(db, actor, { invoiceId: body.value.invoice_id, purpose: body.value.purpose });
  if (!result.ok) {
    // Over a spending cap: nothing was inserted or dispatched; try again when the period resets.
    // (Open judged the session live in its transaction before it read the budget.)
    if (result.code === "budget_exhausted")
      return problem("budget_exhausted", new Headers({ "retry-after": String(result.retryAfterSeconds ?? 60) }));
    // The invoice changed hands while a lease was in flight: say whose, by name only.
    const more = result.code === "lease_in_flight" ? { held_by: result.heldBy ? { name: result.heldBy } : null } : undefined;
    return { ok: false, code: result.code, more };
  }
  const { lease } = result;
  return json({ lease_id: lease.id, deadline_at: lease.deadlineAt.toISOString(), status: lease.status }, result.created ? 201 : 200);
});
