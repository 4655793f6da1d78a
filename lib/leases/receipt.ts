import "server-only";
// A write's receipt (docs/decisions/0079), for GET /api/leases/:id/receipt: read by the lease's
// actor, the approver its request names, and the admins of its organization, in one statement
// that judges the session too. Anyone else finds no lease, exactly as on every lease route.
import { rowsOf, type Db } from "@/db/client";
import { ROLE_RULES } from "@/lib/access";
import { isUuid } from "@/lib/ids";
import { sqlCodes } from "@/db/schema";
import { sql } from "drizzle-orm";

export type ReceiptJson = {
  lease_id: string;
  invoice_id: string;
  purpose: string;
  prompt_version: string | null;
  model: string | null;
  lane: "self" | "four_eyes";
  requester: { id: string; name: string; session_id: string | null };
  approval: {
    id: string;
    approver: { id: string; name: string; session_id: string | null };
    approved_at: string;
    comment: string | null;
  } | null;
  proposal_sha256: string;
  at_proposal: { invoice_version: number | null; invoice_sha256: string | null; at: string | null };
  at_write: { invoice_version: number; invoice_sha256: string; at: string };
  written: string[];
};

type Row = {
  live: boolean;
  receipt_id: string | null;
  lease_id: string;
  invoice_id: string;
  purpose: string;
  prompt_version: string | null;
  model: string | null;
  lane: "self" | "four_eyes";
  requester_id: string;
  requester_name: string;
  requester_session_id: string | null;
  approval_id: string | null;
  approver_id: string | null;
  approver_name: string | null;
  approver_session_id: string | null;
  approved_at: unknown;
  comment: string | null;
  proposal_sha256: string;
  proposed_invoice_version: number | null;
  proposed_invoice_sha256: string | null;
  proposed_at: unknown;
  written_invoice_version: number;
  written_invoice_sha256: string;
  written_at: unknown;
  written_keys: string[];
};

const iso = (v: unknown): string | null =>
  v === null || v === undefined ? null : (v instanceof Date ? v : new Date(String(v))).toISOString();

/**
 * The receipt of `leaseId` for the session's user: `signed_out` when the session is not live,
 * `lease_not_found` when they may not read the lease (or it is another organization's, or no
 * lease), `receipt_not_found` when it wrote nothing.
 */
export async function readReceiptForSession(
  db: Db,
  session: { actorId: string; sessionId: string },
  leaseId: unknown,
): Promise<ReceiptJson | "signed_out" | "lease_not_found" | "receipt_not_found"> {
  const { actorId, sessionId } = session;
  if (!isUuid(leaseId) || !isUuid(sessionId)) return "lease_not_found";
  const result = await db.execute(sql`
    select
      (s.revoked_at is null and s.expires_at > now()
        and exists (select 1 from membership m where m.org_id = s.org_id and m.user_id = s.user_id)) as live,
      rc.id as receipt_id, l.id as lease_id, l.invoice_id, rc.purpose, rc.prompt_version, rc.model, rc.lane,
      rc.requester_id, ru.name as requester_name, rc.requester_session_id,
      rc.approval_id, rc.approver_id, au.name as approver_name, rc.approver_session_id, rc.approved_at, r.comment,
      rc.proposal_sha256, rc.proposed_invoice_version, rc.proposed_invoice_sha256, rc.proposed_at,
      rc.written_invoice_version, rc.written_invoice_sha256, rc.written_at, rc.written_keys
    from inference_lease l
    join invoice i on i.id = l.invoice_id
    join app_session s on s.id = ${sessionId}::uuid and s.user_id = ${actorId}::uuid and s.org_id = i.org_id
    left join lease_receipt rc on rc.lease_id = l.id
    left join app_user ru on ru.id = rc.requester_id
    left join app_user au on au.id = rc.approver_id
    left join approval_request r on r.id = rc.approval_id
    where l.id = ${leaseId}::uuid
      and (l.actor_id = ${actorId}::uuid
        or exists (select 1 from approval_request q where q.lease_id = l.id and q.approver_id = ${actorId}::uuid)
        or exists (select 1 from membership m where m.org_id = i.org_id and m.user_id = ${actorId}::uuid
          and m.role in (${sqlCodes(ROLE_RULES.read_audit)})))`);
  const [row] = rowsOf<Row>(result);
  if (!row) return "lease_not_found";
  if (!row.live) return "signed_out";
  if (!row.receipt_id) return "receipt_not_found";
  return {
    lease_id: row.lease_id,
    invoice_id: row.invoice_id,
    purpose: row.purpose,
    prompt_version: row.prompt_version,
    model: row.model,
    lane: row.lane,
    requester: { id: row.requester_id, name: row.requester_name, session_id: row.requester_session_id },
    approval: row.approval_id
      ? {
          id: row.approval_id,
          approver: { id: row.approver_id!, name: row.approver_name!, session_id: row.approver_session_id },
          approved_at: iso(row.approved_at)!,
          comment: row.comment,
        }
      : null,
    proposal_sha256: row.proposal_sha256,
    at_proposal: {
      invoice_version: row.proposed_invoice_version === null ? null : Number(row.proposed_invoice_version),
      invoice_sha256: row.proposed_invoice_sha256,
      at: iso(row.proposed_at),
    },
    at_write: {
      invoice_version: Number(row.written_invoice_version),
      invoice_sha256: row.written_invoice_sha256,
      at: iso(row.written_at)!,
    },
    written: row.written_keys,
  };
}
