// The lease guarantee as checks on the database, run after every command of a schedule.
// They read only rows of the schedule's own invoices, so schedules can share a database.
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { expect } from "vitest";
import { appSession, inferenceLease, invoice, invoiceChange, invoiceLine, leaseEvent, membership } from "@/db/schema";
import type { LeaseStatus } from "@/lib/lease-codes";
import type { TestDb } from "../support/db";
import { CLOSING_EVENT, isInFlight, isTransition, type Detail } from "../harness/lease-rules";

type ModelView = {
  /**
   * `reviewNotes` and `categories` (line id → category), when the caller's model tracks them: the
   * other purposes' targets, held to the model like the summary.
   */
  invoices: { id: string; version: number; summary: string | null; reviewNotes?: unknown; categories?: Record<string, string | null> }[];
  leases: { id: string; status: LeaseStatus }[];
};

/** What earlier checks saw, so a closed lease can be held to its status forever after. */
export type Ledger = { statuses: Map<string, LeaseStatus> };

export async function checkInvariants(db: TestDb, model: ModelView, ledger: Ledger): Promise<void> {
  const invoiceIds = model.invoices.map((i) => i.id);
  const leases = await db.db
    .select({
      id: inferenceLease.id,
      invoiceId: inferenceLease.invoiceId,
      purpose: inferenceLease.purpose,
      status: inferenceLease.status,
      closedReason: inferenceLease.closedReason,
      proposal: inferenceLease.proposal,
      sessionId: inferenceLease.sessionId,
      fence: inferenceLease.invoiceVersion,
      deadlineAt: inferenceLease.deadlineAt,
      // Microseconds since the epoch: a JavaScript Date keeps milliseconds only, and an event a
      // fraction of a millisecond before the deadline would compare as equal to it.
      deadlineUs: sql<number>`(extract(epoch from ${inferenceLease.deadlineAt}) * 1000000)::float8`.mapWith(Number),
      // Submitted for approval (decision 0078): sign-out leaves it waiting for its approver.
      // (Qualified by hand: drizzle may write the column unqualified, and `id` would be the request's.)
      submitted: sql<boolean>`exists (select 1 from approval_request r where r.lease_id = "inference_lease"."id")`.mapWith(Boolean),
    })
    .from(inferenceLease)
    .where(inArray(inferenceLease.invoiceId, invoiceIds));

  // Every lease in the database is one the model knows of: nothing opened behind its back.
  expect(leases.map((l) => l.id).sort(), "leases in the database vs the model").toEqual(model.leases.map((l) => l.id).sort());

  // At most one lease in flight per invoice and purpose.
  const slots = new Map<string, number>();
  for (const l of leases) {
    if (!isInFlight(l.status)) continue;
    const key = `${l.invoiceId}:${l.purpose}`;
    slots.set(key, (slots.get(key) ?? 0) + 1);
    expect(slots.get(key), `leases in flight on ${key}`).toBe(1);
  }

  const events = leases.length
    ? await db.db
        .select({
          leaseId: leaseEvent.leaseId,
          kind: leaseEvent.kind,
          detail: leaseEvent.detail,
          at: leaseEvent.at,
          atUs: sql<number>`(extract(epoch from ${leaseEvent.at}) * 1000000)::float8`.mapWith(Number),
        })
        .from(leaseEvent)
        .where(
          inArray(
            leaseEvent.leaseId,
            leases.map((l) => l.id),
          ),
        )
        .orderBy(asc(leaseEvent.id))
    : [];

  for (const l of leases) {
    const where = `lease ${l.id.slice(0, 8)} (${l.status}${l.closedReason ? `/${l.closedReason}` : ""})`;
    const mine = events.filter((e) => e.leaseId === l.id);
    const transitions = mine.filter((e) => isTransition(e.kind, e.detail as Detail)).map((e) => e.kind);

    // A closed lease never changes status again.
    const seen = ledger.statuses.get(l.id);
    if (seen && !isInFlight(seen)) expect(l.status, `${where} was ${seen}`).toBe(seen);
    ledger.statuses.set(l.id, l.status);

    // Exactly one `opened`, first; `proposed` once if and only if a proposal was written;
    // one terminal event, last, matching the status; none while in flight.
    expect(transitions[0], `${where}: first event`).toBe("opened");
    expect(transitions.filter((k) => k === "opened").length, `${where}: opened events`).toBe(1);
    const hasProposal = l.proposal !== null;
    expect(transitions.filter((k) => k === "proposed").length, `${where}: proposed events`).toBe(hasProposal ? 1 : 0);
    if (l.status === "open") expect(hasProposal, `${where}: an open lease has no proposal`).toBe(false);
    if (l.status === "proposed" || l.status === "applied") expect(hasProposal, `${where}: proposal`).toBe(true);
    const closing = transitions.filter((k) => k !== "opened" && k !== "proposed");
    if (isInFlight(l.status)) {
      expect(closing, `${where}: terminal events while in flight`).toEqual([]);
    } else {
      const expected = CLOSING_EVENT[`${l.status}:${l.closedReason ?? ""}`];
      expect(expected, `${where}: a known way to close`).toBeDefined();
      expect(closing, `${where}: terminal events`).toEqual([expected]);
      expect(transitions.at(-1), `${where}: the terminal event is the last transition`).toBe(expected);
    }

    // Nothing proposed or applied at or after the deadline, on the database clock (an
    // event's `at` is the time of the transaction that wrote it).
    for (const e of mine) {
      if (e.kind === "proposed" || e.kind === "applied") {
        expect(e.atUs, `${where}: ${e.kind} before the deadline (µs)`).toBeLessThan(l.deadlineUs);
      }
    }
    // Applied only over the invoice version it was opened against (the fencing token).
    const applied = mine.find((e) => e.kind === "applied");
    if (applied) expect((applied.detail as Detail)?.invoice_version, `${where}: fenced write`).toBe((l.fence ?? 0) + 1);
  }

  // No lease in flight under a signed-out session, but one submitted for approval.
  const sessionIds = [...new Set(leases.filter((l) => isInFlight(l.status) && l.sessionId && !l.submitted).map((l) => l.sessionId!))];
  if (sessionIds.length) {
    const revoked = await db.db
      .select({ id: appSession.id, revokedAt: appSession.revokedAt })
      .from(appSession)
      .where(inArray(appSession.id, sessionIds));
    for (const s of revoked) expect(s.revokedAt, `session ${s.id.slice(0, 8)} has leases in flight`).toBeNull();
  }

  // The invoice changes only as the model says: version, summary, and where the model tracks
  // them the review notes and each line's category (each written only by an applied lease of its
  // purpose whose actor owned the invoice at its fenced version).
  const invoices = await db.db
    .select({ id: invoice.id, version: invoice.version, summary: invoice.summary, reviewNotes: invoice.reviewNotes })
    .from(invoice)
    .where(inArray(invoice.id, invoiceIds));
  const tracksLines = model.invoices.some((i) => i.categories);
  const lines = tracksLines
    ? await db.db
        .select({ id: invoiceLine.id, invoiceId: invoiceLine.invoiceId, category: invoiceLine.category })
        .from(invoiceLine)
        .where(inArray(invoiceLine.invoiceId, invoiceIds))
    : [];
  for (const expected of model.invoices) {
    const actual = invoices.find((i) => i.id === expected.id)!;
    expect({ version: actual.version, summary: actual.summary }, `invoice ${expected.id.slice(0, 8)}`).toEqual({
      version: expected.version,
      summary: expected.summary,
    });
    if ("reviewNotes" in expected)
      expect(actual.reviewNotes, `invoice ${expected.id.slice(0, 8)}: review notes`).toEqual(expected.reviewNotes);
    if (expected.categories) {
      const mine = Object.fromEntries(lines.filter((l) => l.invoiceId === expected.id).map((l) => [l.id, l.category]));
      expect(mine, `invoice ${expected.id.slice(0, 8)}: its lines' categories`).toEqual(expected.categories);
    }
  }
}

type TenancyView = {
  /** `removed`: removed from `org` by an admin (they are a member of nothing). */
  actors: { id: string; org: number; removed?: boolean }[];
  invoices: { id: string; owner: number; org: number }[];
};

/** What earlier tenancy checks saw: an apply or an edit is judged once, when first seen (under the owner and roles of then). */
export type TenancyLedger = { applied: Set<string>; changes: Set<number> };

/** The tenancy invariants, after checkInvariants, for a model with organizations (tests/model/lease-model.test.ts). */
export async function checkTenancy(db: TestDb, model: TenancyView, ledger: TenancyLedger): Promise<void> {
  const invoiceIds = model.invoices.map((i) => i.id);
  const leases = await db.db
    .select({ id: inferenceLease.id, actorId: inferenceLease.actorId, invoiceId: inferenceLease.invoiceId, status: inferenceLease.status })
    .from(inferenceLease)
    .where(inArray(inferenceLease.invoiceId, invoiceIds));
  // Nothing crosses an organization. Each invoice stays in its organization; every lease on it is
  // by a member of that organization; a lease first seen applied is its invoice's owner's (only
  // the owner's lease writes an invoice); every change recorded on it, first seen, was made by
  // its owner or an admin of its organization.
  const orgIds = new Map<number, string>();
  const rowsOf = await db.db
    .select({ id: invoice.id, orgId: invoice.orgId, ownerId: invoice.ownerId })
    .from(invoice)
    .where(inArray(invoice.id, invoiceIds));
  for (const expected of model.invoices) {
    const row = rowsOf.find((i) => i.id === expected.id)!;
    const known = orgIds.get(expected.org);
    if (known) expect(row.orgId, `invoice ${expected.id.slice(0, 8)}: its organization`).toBe(known);
    else orgIds.set(expected.org, row.orgId);
    expect(row.ownerId, `invoice ${expected.id.slice(0, 8)}: its owner`).toBe(model.actors[expected.owner]!.id);
  }
  expect(new Set(orgIds.values()).size, "two organizations").toBe(orgIds.size);
  const members = await db.db
    .select({ orgId: membership.orgId, userId: membership.userId, role: membership.role })
    .from(membership)
    .where(
      inArray(
        membership.userId,
        model.actors.map((a) => a.id),
      ),
    );
  const memberOf = (orgId: string, userId: string | null) => members.find((x) => x.orgId === orgId && x.userId === userId);
  for (const l of leases) {
    const inv = rowsOf.find((i) => i.id === l.invoiceId)!;
    const person = model.actors.find((a) => a.id === l.actorId);
    if (person?.removed) {
      // A lease of someone removed since: of their organization, and closed (checkRemoved).
      expect(orgIds.get(person.org), `lease ${l.id.slice(0, 8)}: by a former member of its invoice's organization`).toBe(inv.orgId);
      expect(isInFlight(l.status), `lease ${l.id.slice(0, 8)}: a former member's, in flight`).toBe(false);
    } else {
      expect(memberOf(inv.orgId, l.actorId), `lease ${l.id.slice(0, 8)}: by a member of its invoice's organization`).toBeDefined();
    }
    if (l.status === "applied" && !ledger.applied.has(l.id)) {
      ledger.applied.add(l.id);
      expect(l.actorId, `lease ${l.id.slice(0, 8)}: applied by its invoice's owner`).toBe(inv.ownerId);
    }
  }
  const changes = await db.db
    .select({ id: invoiceChange.id, invoiceId: invoiceChange.invoiceId, actorId: invoiceChange.actorId, kind: invoiceChange.kind })
    .from(invoiceChange)
    .where(inArray(invoiceChange.invoiceId, invoiceIds));
  for (const c of changes) {
    if (ledger.changes.has(c.id)) continue;
    ledger.changes.add(c.id);
    const inv = rowsOf.find((i) => i.id === c.invoiceId)!;
    const member = memberOf(inv.orgId, c.actorId);
    expect(member, `change ${c.id} on invoice ${inv.id.slice(0, 8)}: by a member of its organization`).toBeDefined();
    if (c.kind === "edited") {
      expect(c.actorId === inv.ownerId || member?.role === "admin", `edit ${c.id}: by the owner or an admin`).toBe(true);
    }
  }
}

/**
 * Someone an admin removed (lib/members.ts removeMember) has no live session (not revoked, not
 * run out by the database clock), no lease in flight and no membership anywhere.
 */
export async function checkRemoved(db: TestDb, model: { actors: { id: string; removed?: boolean }[] }): Promise<void> {
  const gone = model.actors.filter((a) => a.removed).map((a) => a.id);
  if (gone.length === 0) return;
  const live = await db.db
    .select({ id: appSession.id, userId: appSession.userId })
    .from(appSession)
    .where(and(inArray(appSession.userId, gone), isNull(appSession.revokedAt), sql`${appSession.expiresAt} > now()`));
  expect(live, "live sessions of removed members").toEqual([]);
  const leases = await db.db
    .select({ id: inferenceLease.id, status: inferenceLease.status })
    .from(inferenceLease)
    .where(inArray(inferenceLease.actorId, gone));
  expect(
    leases.filter((l) => isInFlight(l.status)),
    "leases in flight of removed members",
  ).toEqual([]);
  const members = await db.db
    .select({ orgId: membership.orgId, userId: membership.userId })
    .from(membership)
    .where(inArray(membership.userId, gone));
  expect(members, "memberships of removed members").toEqual([]);
}

type HistoryView = { invoices: { id: string; version: number; behind: number[]; imported?: string }[] };

/**
 * The history misses nothing: every version of an invoice above its first (1, as the test makes
 * it, with no `created` row) was made by exactly one thing that says so. The app records each
 * change (edit, owner change, status change) as an invoice_change row with the version it made;
 * an apply, of whatever purpose, is recorded by design not there but as its lease's `applied`
 * event, whose detail carries the version the apply wrote (org-codes.ts CHANGE_KINDS; the contract's history
 * interleaves both); and a write behind the app (`behind`, from the model) records nothing. So
 * each version 2..current is claimed by exactly one change row, applied event or write behind
 * the app, and nothing claims a version the invoice does not have.
 */
export async function checkHistory(db: TestDb, model: HistoryView): Promise<void> {
  const invoiceIds = model.invoices.map((i) => i.id);
  const changes = await db.db
    .select({ invoiceId: invoiceChange.invoiceId, version: invoiceChange.version, kind: invoiceChange.kind })
    .from(invoiceChange)
    .where(inArray(invoiceChange.invoiceId, invoiceIds));
  const applied = await db.db
    .select({ invoiceId: inferenceLease.invoiceId, purpose: inferenceLease.purpose, detail: leaseEvent.detail })
    .from(leaseEvent)
    .innerJoin(inferenceLease, eq(inferenceLease.id, leaseEvent.leaseId))
    .where(and(inArray(inferenceLease.invoiceId, invoiceIds), eq(leaseEvent.kind, "applied")));
  for (const inv of model.invoices) {
    const claims = new Map<number, string[]>();
    const claim = (version: number, by: string) => claims.set(version, [...(claims.get(version) ?? []), by]);
    for (const c of changes) if (c.invoiceId === inv.id) claim(c.version, `change ${c.kind}`);
    for (const a of applied) if (a.invoiceId === inv.id) claim(Number((a.detail as Detail)?.invoice_version), `applied ${a.purpose}`);
    for (const v of inv.behind) claim(v, "write behind the app");
    const where = `invoice ${inv.id.slice(0, 8)} (version ${inv.version})`;
    // An invoice that came in through the app (the CSV import) has its first version recorded too.
    const first = inv.imported ? 1 : 2;
    if (inv.imported) expect(claims.get(1), `${where}: what made version 1`).toEqual(["change imported"]);
    for (let v = first; v <= inv.version; v++) expect(claims.get(v) ?? [], `${where}: what made version ${v}`).toHaveLength(1);
    const outside = [...claims.keys()].filter((v) => !(v >= first && v <= inv.version));
    expect(outside, `${where}: versions recorded that it never had`).toEqual([]);
  }
}

type SpendView = {
  invoices: { id: string; org: number }[];
  actors: { id: string }[];
  /** `reservation`: what it reserved at open (micro-cents); `reserved`: what it holds now (its retries drawn). */
  leases: { id: string; actor: number; inv: number; reservation: number | null; reserved: number | null; checked: string[] }[];
  calls: { key: string; lease: string; cost: number; excess: Record<string, number> }[];
  /** Each organization's caps now, and the largest value of each ever set in the schedule. */
  budgets: Record<string, number | null>[];
  highest: Record<string, number | null>[];
};

const MICRO = (cents: unknown) => Math.round(Number(cents) * 1e6);

/**
 * Spend, counted and capped (docs/decisions/0075-spend-reserved-at-open.md), held to the model's
 * own account after every command:
 *
 * 1. Every model call has exactly one model_usage row: the rows of the schedule's leases are, by
 *    call key, exactly the calls the model recorded (proposed, late, aborted by a close, failed,
 *    a retried attempt), each at the cost the model priced it at, with the lease's organization
 *    and actor; a call the model did not make (a forged completion, a retried step) has none.
 * 2. Each lease's reservation (reserved_cents) is the model's: one call's estimate of its purpose
 *    from open (capped or not), less what its retried attempts cost, released (null) once its
 *    call's final outcome was recorded, whatever the lease's status in between.
 * 3. The bound. For each cap set now (per organization, per member of it; per UTC day, month) and
 *    its period P on the database clock, with K the largest value that cap had in the schedule:
 *
 *      spent in P  ≤  K + R + Σ excess of P's calls
 *
 *    R is the largest reservation of a lease that cap admitted (open checked it: it was set), and
 *    a call's excess is what it added beyond the reservation it drew on (recordCall): 0 for a call
 *    within what its lease still held, counted (until its final outcome, or deadline + grace, even
 *    after the lease closed: a call aborted by a cancel, a late completion, a retried attempt).
 *    Derived from 0075: let A = spent in P + the reservations counted of leases that cap admitted.
 *    Only an admission raises A other than by a call's excess, and it admits only when the
 *    database's sum (≥ A: it counts every lease's reservation) is below the cap (≤ K), then adds
 *    its reservation (≤ R); a call within its reservation, or a reservation aging out, lowers A.
 *    So A < K + R + the excess since, and spent ≤ A. With no excess it is the issue's bound: spend
 *    exceeds a cap by at most the one call in flight that the cap admitted. Returns whether some
 *    cap is over its value now, and whether over by more than that one call (for the outcome counts).
 */
export async function checkSpend(db: TestDb, model: SpendView): Promise<{ over: boolean; overByMore: boolean }> {
  const leaseIds = model.leases.map((l) => l.id);
  const flags = { over: false, overByMore: false };
  if (leaseIds.length === 0) {
    expect(model.calls, "calls without leases").toEqual([]);
    return flags;
  }
  const rows = rowsOfResult<{
    call_key: string;
    lease_id: string;
    org_id: string;
    actor_id: string;
    cost_cents: string;
    in_day: boolean;
    in_month: boolean;
  }>(
    await db.db.execute(sql`
      select u.call_key, u.lease_id, u.org_id, u.actor_id, u.cost_cents::text as cost_cents,
        u.at >= date_trunc('day', now(), 'UTC') as in_day, u.at >= date_trunc('month', now(), 'UTC') as in_month
      from model_usage u where u.lease_id in (${sql.join(
        leaseIds.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})`),
  );
  const orgRows = await db.db
    .select({ id: invoice.id, orgId: invoice.orgId })
    .from(invoice)
    .where(
      inArray(
        invoice.id,
        model.invoices.map((i) => i.id),
      ),
    );
  const orgIdOf = (org: number) => orgRows.find((r) => r.id === model.invoices.find((i) => i.org === org)!.id)!.orgId;

  // 1. One row per call, at the model's cost, of the lease's organization and actor.
  expect(rows.map((r) => r.call_key).sort(), "model_usage rows vs the model's calls").toEqual(model.calls.map((c) => c.key).sort());
  for (const c of model.calls) {
    const row = rows.find((r) => r.call_key === c.key)!;
    const l = model.leases.find((x) => x.id === c.lease)!;
    const where = `usage of call ${c.key.slice(0, 8)}${c.key.slice(36)}`;
    expect(row.lease_id, `${where}: its lease`).toBe(c.lease);
    expect(Math.abs(MICRO(row.cost_cents) - c.cost), `${where}: cost ${row.cost_cents} vs the model's ${c.cost / 1e6}`).toBeLessThanOrEqual(
      1,
    );
    expect(row.actor_id, `${where}: its actor`).toBe(model.actors[l.actor]!.id);
    expect(row.org_id, `${where}: its organization`).toBe(orgIdOf(model.invoices[l.inv]!.org));
  }

  // 2. Reservations.
  const reserved = await db.db
    .select({ id: inferenceLease.id, reserved: sql<string | null>`${inferenceLease.reservedCents}::text` })
    .from(inferenceLease)
    .where(inArray(inferenceLease.id, leaseIds));
  for (const l of model.leases) {
    const actual = reserved.find((r) => r.id === l.id)!.reserved;
    const where = `lease ${l.id.slice(0, 8)}: reserved_cents ${actual} vs the model's ${l.reserved === null ? null : l.reserved / 1e6}`;
    if (l.reserved === null) expect(actual, where).toBeNull();
    else expect(actual !== null && Math.abs(MICRO(actual) - l.reserved) <= 1, where).toBe(true);
  }

  // 3. The bound, for every cap set now, over every scope it caps.
  for (const [org, caps] of model.budgets.entries()) {
    const orgId = orgIdOf(org);
    for (const [field, cap] of Object.entries(caps)) {
      if (cap === null) continue;
      const K = model.highest[org]![field]! * 1e6;
      const perMember = field.startsWith("member_");
      const inPeriod = (r: (typeof rows)[number]) => (field.includes("daily") ? r.in_day : r.in_month);
      const scopes = perMember ? [...new Set(rows.filter((r) => r.org_id === orgId).map((r) => r.actor_id))] : [null];
      for (const actorId of scopes) {
        const mine = rows.filter((r) => r.org_id === orgId && (actorId === null || r.actor_id === actorId) && inPeriod(r));
        const spent = mine.reduce((s, r) => s + MICRO(r.cost_cents), 0);
        const excess = mine.reduce((s, r) => s + model.calls.find((c) => c.key === r.call_key)!.excess[field]!, 0);
        const admitted = model.leases.filter(
          (l) =>
            model.invoices[l.inv]!.org === org && (actorId === null || model.actors[l.actor]!.id === actorId) && l.checked.includes(field),
        );
        const R = Math.max(0, ...admitted.map((l) => l.reservation ?? 0));
        const where = `org ${org}${actorId ? `, member ${actorId.slice(0, 8)}` : ""}, ${field} (now ${cap}, at most ${K / 1e6} in the schedule)`;
        expect(
          spent,
          `${where}: spent ${spent / 1e6} ≤ cap ${K / 1e6} + reservation ${R / 1e6} + excess ${excess / 1e6}`,
        ).toBeLessThanOrEqual(K + R + excess);
        if (spent > cap * 1e6) flags.over = true;
        if (spent > K + R) flags.overByMore = true;
      }
    }
  }
  return flags;
}

const rowsOfResult = <T>(r: unknown): T[] => (Array.isArray(r) ? (r as T[]) : ((r as { rows: T[] }).rows ?? []));

/** What an open could have written, counted: leases, their events (but lazy expiries), usage rows, the budget, dispatches. */
export type Writes = { leases: number; events: number; usage: number; budget: string; dispatched: number };

export async function writesOf(db: TestDb, invoiceIds: string[], dispatched: number): Promise<Writes> {
  const ids = sql.join(
    invoiceIds.map((id) => sql`${id}::uuid`),
    sql`, `,
  );
  const [row] = rowsOfResult<{ leases: string; events: string; usage: string; budget: string | null }>(
    await db.db.execute(sql`select
      (select count(*) from inference_lease where invoice_id in (${ids})) as leases,
      (select count(*) from lease_event e join inference_lease l on l.id = e.lease_id
        where l.invoice_id in (${ids}) and e.kind <> 'expired') as events,
      (select count(*) from model_usage where invoice_id in (${ids})) as usage,
      (select coalesce(json_agg(b order by b.org_id)::text, '') from org_budget b
        where b.org_id in (select org_id from invoice where id in (${ids}))) as budget`),
  );
  return { leases: Number(row!.leases), events: Number(row!.events), usage: Number(row!.usage), budget: row!.budget ?? "", dispatched };
}

/** A 429 budget_exhausted writes nothing: no lease, no event (a lazy expiry of an overdue lease aside), no usage, no budget change, no dispatch. */
export function expectNothingWritten(where: string, before: Writes, after: Writes) {
  expect(after, `${where}: a refusal over budget writes nothing`).toEqual(before);
}
