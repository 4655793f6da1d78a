// What the four-eyes lane's tests share (docs/decisions/0078): a team of one organization (Ada its
// admin, Carol an approver, Dave a member who owns the invoices and submits) and Bea, admin of
// another; a purpose put under four_eyes by Ada through the route; a proposed lease of Dave's;
// the request rows read back.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { approvalRequest } from "@/db/schema";
import type { Purpose } from "@/lib/purposes";
import { api, signInCookie } from "../../support/api";
import { joinOrgOf, makeInvoice, makeUser } from "../../support/db";
import { proposedLease } from "../purposes/purpose-support";

export async function team(db: Db) {
  const ada = await makeUser(db, "Ada");
  const carol = await makeUser(db, "Carol");
  const dave = await makeUser(db, "Dave");
  await joinOrgOf(db, carol, ada, "approver");
  await joinOrgOf(db, dave, ada, "member");
  const bea = await makeUser(db, "Bea");
  return {
    ada,
    carol,
    dave,
    bea,
    cookies: {
      ada: await signInCookie(ada.email),
      carol: await signInCookie(carol.email),
      dave: await signInCookie(dave.email),
      bea: await signInCookie(bea.email),
    },
  };
}
export type Team = Awaited<ReturnType<typeof team>>;

/** Ada puts `purpose` under four_eyes (the route, as an admin does). */
export async function fourEyes(t: Team, purpose: Purpose = "summarize_invoice", reviewHours = 24) {
  const res = await api("PUT", `/api/org/policies/${purpose}`, {
    cookie: t.cookies.ada,
    json: { apply: "four_eyes", review_hours: reviewHours },
  });
  if (res.status !== 200) throw new Error(`policy: ${res.status} ${JSON.stringify(res.body)}`);
}

/** A proposed lease of `owner` on a fresh invoice of theirs. */
export async function proposed(db: Db, owner: { id: string }, purpose: Purpose = "summarize_invoice") {
  const inv = await makeInvoice(db, owner.id);
  const { leaseId, output } = await proposedLease(db, owner.id, inv.id, purpose);
  return { inv, leaseId, output };
}

/** Dave's lease submitted through the route; the answer's body. */
export async function submitted(db: Db, t: Team, purpose: Purpose = "summarize_invoice") {
  const p = await proposed(db, t.dave, purpose);
  const res = await api("POST", `/api/leases/${p.leaseId}/submit`, { cookie: t.cookies.dave });
  if (res.status !== 200) throw new Error(`submit: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...p, approvalId: res.body.approval_id as string, hash: res.body.proposal_sha256 as string };
}

/** The hash a client computes on its own from the proposal it was shown: RFC 8785 by `canonicalize`. */
export const sha256Of = (proposal: unknown) => createHash("sha256").update(canonicalize(proposal)!).digest("hex");

export async function requestRow(db: Db, id: string) {
  const [row] = await db.select().from(approvalRequest).where(eq(approvalRequest.id, id));
  return row!;
}

export async function count(db: Db, table: string): Promise<number> {
  const result = await db.execute(sql.raw(`select count(*)::int as n from ${table}`));
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { n: number }[];
  return Number(rows[0]!.n);
}

export const approve = (t: Team, who: keyof Team["cookies"], id: string, hash: string, comment?: string) =>
  api("POST", `/api/approvals/${id}/approve`, { cookie: t.cookies[who], json: { proposal_sha256: hash, ...(comment ? { comment } : {}) } });
export const decline = (t: Team, who: keyof Team["cookies"], id: string, comment?: string) =>
  api("POST", `/api/approvals/${id}/decline`, { cookie: t.cookies[who], json: comment === undefined ? {} : { comment } });
