import "server-only";
// Who may do what, decided here and nowhere else: each rule is a condition that goes into the
// statement that reads or writes, so an organization and a role are judged by the database in
// the same snapshot as the row (docs/decisions/0061-tenancy-in-the-statement.md). Another
// organization's row matches no condition here, so it reads as missing: the same 404 as an id
// that does not exist. A role refusal inside one's own organization is a separate question the
// callers ask only after the row was found (`visibleInvoice` true, `editableInvoice` false): 403.
import { and, eq, getTableName, inArray, or, sql, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { invoice, membership } from "@/db/schema";
import { ROLES, type Role } from "./org-codes";

/** A signed-in person as every rule sees them: who, in which organization, as what. */
export type Member = { id: string; orgId: string; role: Role };

/**
 * A column written out with its table's name: drizzle renders a column unqualified in some
 * statements (an UPDATE's WHERE), and inside the subquery below an unqualified `org_id` would
 * be the membership's own, making the condition always true.
 */
const qualified = (value: AnyPgColumn | string) =>
  typeof value === "string" ? sql`${value}::uuid` : sql`${sql.identifier(getTableName(value.table))}.${sql.identifier(value.name)}`;

const rolesSql = (roles: readonly Role[]) => sql.raw(roles.map((r) => `'${r}'`).join(","));

/**
 * The user is a member of the organization `org` (a column or a value) now, as this statement
 * reads it, with one of `roles` when given. The membership is read by the statement itself, so
 * a member removed (or demoted) a moment ago is refused even with a session resolved before.
 */
export function memberOf(org: AnyPgColumn | string, userId: string | AnyPgColumn, roles: readonly Role[] = ROLES): SQL {
  const all = roles.length === ROLES.length;
  return sql`exists (select 1 from ${membership} m where m.org_id = ${qualified(org)} and m.user_id = ${qualified(userId)}${
    all ? sql`` : sql` and m.role in (${rolesSql(roles)})`
  })`;
}

/** Invoices the member may read: every invoice of their organization. */
export function visibleInvoice(member: Member): SQL {
  return and(eq(invoice.orgId, member.orgId), memberOf(invoice.orgId, member.id))!;
}

/** Invoices the user owns in an organization they belong to: the only ones they may summarize and apply on. */
export function ownedInvoice(userId: string | AnyPgColumn): SQL {
  return and(eq(invoice.ownerId, userId), memberOf(invoice.orgId, userId))!;
}

/** Invoices the member may edit, mark paid or void: their own, or any of the organization's for an admin. */
export function editableInvoice(member: Member): SQL {
  return and(eq(invoice.orgId, member.orgId), or(ownedInvoice(member.id), memberOf(invoice.orgId, member.id, ["admin"])))!;
}

/** Organization-level acts and the roles that may do them. The page asks `may` to show a control; the statement decides. */
export const ROLE_RULES = {
  /** Invite, change roles, remove members, revoke invitations. */
  manage_members: ["admin"],
  /** Give an invoice to another member (withdraws its leases in flight). */
  reassign_invoice: ["admin"],
  /** Create an invoice for someone else (POST /api/invoices with another `owner_id`). */
  create_for_others: ["admin"],
  /** Create and import invoices of one's own. */
  create_invoice: ROLES,
  /** Export the organization's audit trail (GET /api/audit/export, decision 0080). */
  read_audit: ["admin"],
  /** Approve or decline another member's request under a four-eyes policy (never one's own: docs/decisions/0078). */
  approve: ["admin", "approver"],
  /** Set a purpose's approval policy (PUT /api/org/policies/:purpose). */
  set_policy: ["admin"],
} as const satisfies Record<string, readonly Role[]>;
export type OrgAct = keyof typeof ROLE_RULES;

/** Whether the member's role allows the act: for what a page shows. A write still states the role in its statement (`memberOf`). */
export function may(member: Pick<Member, "role">, act: OrgAct): boolean {
  return (ROLE_RULES[act] as readonly Role[]).includes(member.role);
}

/** memberOf for an act of ROLE_RULES, for the statement that does it. */
export function memberMay(orgId: string | AnyPgColumn, userId: string, act: OrgAct): SQL {
  return memberOf(orgId, userId, ROLE_RULES[act]);
}

/**
 * The organization's members who may manage members (its admins), as a condition on `membership`.
 * The member writes (lib/members.ts) lock these rows FOR UPDATE (or FOR SHARE) in one order before
 * anything else, so two admins demoting or removing each other at once cannot leave none, and the
 * acting admin's own right is judged on a row no one else can change until the commit.
 */
export function managersOf(orgId: string): SQL {
  return and(eq(membership.orgId, orgId), inArray(membership.role, [...ROLE_RULES.manage_members]))!;
}

/** Whether `role` counts among the managers of managersOf: a change away from it may leave an organization without one. */
export function isManagerRole(role: Role): boolean {
  return (ROLE_RULES.manage_members as readonly Role[]).includes(role);
}
