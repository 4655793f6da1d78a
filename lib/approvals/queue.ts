import "server-only";
// GET /api/approvals: the approver's queue ("Waiting for your approval"): the organization's
// requests still pending (no decision, the lease proposed and in its window by the database
// clock) that someone else submitted. One statement; the role is a condition of it.
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { memberMay, type Member } from "@/lib/access";

export type QueueEntry = {
  id: string;
  lease_id: string;
  invoice_id: string;
  invoice_number: string;
  purpose: string;
  requester: { id: string; name: string };
  proposal: unknown;
  proposal_sha256: string;
  invoice_version: number;
  accept: string[] | null;
  submitted_at: string;
  expires_at: string;
};

export async function approvalQueue(db: Db, member: Member): Promise<QueueEntry[]> {
  const result = await db.execute(sql`
    select r.id, r.lease_id, r.invoice_id, i.number as invoice_number, r.purpose,
      json_build_object('id', u.id, 'name', u.name) as requester,
      l.proposal, r.proposal_sha256, r.invoice_version, r.accept, r.submitted_at, l.deadline_at as expires_at
    from approval_request r
    join inference_lease l on l.id = r.lease_id
    join invoice i on i.id = r.invoice_id
    join app_user u on u.id = r.requester_id
    where r.org_id = ${member.orgId}::uuid and r.decision is null
      and ${memberMay(member.orgId, member.id, "approve")}
      and r.requester_id <> ${member.id}::uuid
      and l.status = 'proposed' and l.deadline_at > now()
    order by r.submitted_at, r.id
    limit 500`);
  const rows = rowsOf<QueueEntry>(result);
  const parse = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v);
  const iso = (v: unknown) => (v instanceof Date ? v : new Date(String(v))).toISOString();
  return rows.map((r) => ({
    ...r,
    requester: parse(r.requester) as QueueEntry["requester"],
    proposal: parse(r.proposal),
    invoice_version: Number(r.invoice_version),
    submitted_at: iso(r.submitted_at),
    expires_at: iso(r.expires_at),
  }));
}
