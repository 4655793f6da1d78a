import { z } from "zod";
import { authedRoute, json, problem, readBody } from "@/app/_lib/http";
import { text } from "@/lib/input";
import { openLeaseAs } from "@/app/_lib/open-lease";

// Types only: the actor comes from the session, and any actor field in the body is dropped.
const OpenLease = z.object({ invoice_id: text().max(200), purpose: text().max(200) });

export const POST = authedRoute(async ({ req, db, actor }) => {
  const body = await readBody(req, OpenLease);
  if (!body.ok) return problem(body.code);
  const result = await openLeaseAs(db, actor, { invoiceId: body.value.invoice_id, purpose: body.value.purpose });
  if (!result.ok) return problem(result.code);
  const { lease } = result;
  return json(
    { lease_id: lease.id, deadline_at: lease.deadlineAt.toISOString(), status: lease.status },
    result.created ? 201 : 200,
  );
});
