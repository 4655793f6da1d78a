import { z } from "zod";
import { json, problem, readBody, sessionCheckedRoute } from "@/app/_lib/http";
import { text } from "@/lib/input";
import { openLeaseAs } from "@/app/_lib/open-lease";

// Types only: the actor comes from the session, and any actor field in the body is dropped.
const OpenLease = z.object({ invoice_id: text().max(200), purpose: text().max(200) });

// The session is checked (and held, FOR SHARE) in openLease's own transaction.
export const POST = sessionCheckedRoute(async ({ req, db, actor, notSignedIn, unlessSignedOut }) => {
  const body = await readBody(req, OpenLease);
  if (!body.ok) return unlessSignedOut(problem(body.code));
  const result = await openLeaseAs(db, actor, { invoiceId: body.value.invoice_id, purpose: body.value.purpose });
  if (!result.ok) {
    if (result.code === "not_signed_in") return notSignedIn();
    // The invoice changed hands while a lease was in flight: say whose, by name only.
    const more = result.code === "lease_in_flight" ? { held_by: result.heldBy ? { name: result.heldBy } : null } : undefined;
    return unlessSignedOut(problem(result.code, undefined, more));
  }
  const { lease } = result;
  return json(
    { lease_id: lease.id, deadline_at: lease.deadlineAt.toISOString(), status: lease.status },
    result.created ? 201 : 200,
  );
});
