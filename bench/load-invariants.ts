// The lease guarantee checked on a whole database after a load run (bench/load.ts), from the
// rows alone: the DB-only sibling of tests/model/invariants.ts, which holds the same rules
// against a model of the expected invoices and leases. Returns what is wrong, in words.
import type postgres from "postgres";
import { CLOSING_EVENT, isInFlight, isTransition, type Detail } from "../tests/harness/lease-rules";

type LeaseRow = {
  id: string;
  invoice_id: string;
  purpose: string;
  status: string;
  closed_reason: string | null;
  has_proposal: boolean;
  summary: string | null;
  session_id: string | null;
  fence: number | null;
  deadline_at: Date;
  revoked: boolean;
  overdue: boolean;
};
type EventRow = { id: string; lease_id: string; kind: string; detail: Detail; at: Date };

export type InvariantReport = {
  leases: number;
  events: number;
  byOutcome: Record<string, number>;
  /** In flight, deadline not yet passed (legitimate at the moment of the check). */
  inFlight: number;
  /** In flight past the deadline: stuck unless a sweep is still due. */
  overdueInFlight: string[];
  violations: string[];
};

/**
 * Checks every lease and invoice in the database: one `opened` event, first; `proposed` once
 * exactly when a proposal was written; one terminal event, last, matching status and closed
 * reason, none while in flight; `proposed` and `applied` before the deadline (database clock);
 * an apply over the version it was fenced to; at most one in flight per invoice and purpose;
 * none in flight under a revoked session; each invoice's summary the one of its last applied
 * lease. `expectedVersions` (invoice id → version), when given, is what the clients counted.
 */
export async function checkDatabase(sql: postgres.Sql, opts: { expectedVersions?: Map<string, number> } = {}): Promise<InvariantReport> {
  const violations: string[] = [];
  const leases = await sql<LeaseRow[]>`
    select l.id, l.invoice_id, l.purpose, l.status, l.closed_reason, l.proposal is not null as has_proposal,
           l.proposal->>'summary' as summary, l.session_id, l.invoice_version as fence, l.deadline_at,
           coalesce(s.revoked_at is not null, false) as revoked, l.deadline_at <= now() as overdue
    from inference_lease l left join app_session s on s.id = l.session_id`;
  const events = await sql<EventRow[]>`select id, lease_id, kind, detail, at from lease_event order by id`;
  const byLease = new Map<string, EventRow[]>();
  for (const e of events) {
    let list = byLease.get(e.lease_id);
    if (!list) byLease.set(e.lease_id, (list = []));
    list.push(e);
  }
  for (const leaseId of byLease.keys()) {
    if (!leases.some((l) => l.id === leaseId)) violations.push(`events for a lease that does not exist: ${leaseId}`);
  }

  const byOutcome: Record<string, number> = {};
  const slots = new Map<string, number>();
  const overdueInFlight: string[] = [];
  let inFlight = 0;
  for (const l of leases) {
    const where = `lease ${l.id.slice(0, 8)} (${l.status}${l.closed_reason ? `/${l.closed_reason}` : ""})`;
    const outcome = `${l.status}${l.closed_reason ? `/${l.closed_reason}` : ""}`;
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
    const flying = isInFlight(l.status);
    if (flying) {
      const key = `${l.invoice_id}:${l.purpose}`;
      slots.set(key, (slots.get(key) ?? 0) + 1);
      if (slots.get(key) === 2) violations.push(`two leases in flight on invoice ${l.invoice_id.slice(0, 8)} for ${l.purpose}`);
      if (l.revoked) violations.push(`${where} in flight under a revoked session`);
      if (l.overdue) overdueInFlight.push(l.id);
      else inFlight++;
    }

    const mine = byLease.get(l.id) ?? [];
    const transitions = mine.filter((e) => isTransition(e.kind, e.detail)).map((e) => e.kind);
    if (transitions[0] !== "opened") violations.push(`${where}: first event ${transitions[0] ?? "(none)"}, not opened`);
    const opened = transitions.filter((k) => k === "opened").length;
    if (opened !== 1) violations.push(`${where}: ${opened} opened events`);
    const proposed = transitions.filter((k) => k === "proposed").length;
    if (proposed !== (l.has_proposal ? 1 : 0)) violations.push(`${where}: ${proposed} proposed events, proposal ${l.has_proposal ? "written" : "absent"}`);
    if (l.status === "open" && l.has_proposal) violations.push(`${where}: open with a proposal`);
    if ((l.status === "proposed" || l.status === "applied") && !l.has_proposal) violations.push(`${where}: no proposal`);
    const closing = transitions.filter((k) => k !== "opened" && k !== "proposed");
    if (flying) {
      if (closing.length) violations.push(`${where}: terminal events while in flight: ${closing.join(", ")}`);
    } else {
      const expected = CLOSING_EVENT[`${l.status}:${l.closed_reason ?? ""}`];
      if (!expected) violations.push(`${where}: not a known way to close`);
      else if (closing.length !== 1 || closing[0] !== expected || transitions.at(-1) !== expected) {
        violations.push(`${where}: terminal events [${closing.join(", ")}], expected [${expected}] last`);
      }
    }
    for (const e of mine) {
      if ((e.kind === "proposed" || e.kind === "applied") && e.at.getTime() >= l.deadline_at.getTime()) {
        violations.push(`${where}: ${e.kind} at ${e.at.toISOString()}, deadline ${l.deadline_at.toISOString()}`);
      }
    }
    const applied = mine.find((e) => e.kind === "applied");
    if (applied && applied.detail?.invoice_version !== (l.fence ?? 0) + 1) {
      violations.push(`${where}: applied as version ${String(applied.detail?.invoice_version)}, fenced to ${l.fence}`);
    }
  }

  // An invoice's summary is its last applied lease's; its version what the clients counted.
  const invoices = await sql<{ id: string; summary: string | null; version: number; last_applied: string | null }[]>`
    select i.id, i.summary, i.version,
      (select l.proposal->>'summary' from inference_lease l join lease_event e on e.lease_id = l.id and e.kind = 'applied'
        where l.invoice_id = i.id order by e.id desc limit 1) as last_applied
    from invoice i`;
  for (const i of invoices) {
    if (i.summary !== i.last_applied) violations.push(`invoice ${i.id.slice(0, 8)}: summary is not its last applied lease's`);
    const expected = opts.expectedVersions?.get(i.id);
    if (expected !== undefined && expected !== i.version) violations.push(`invoice ${i.id.slice(0, 8)}: version ${i.version}, the clients counted ${expected}`);
  }

  return { leases: leases.length, events: events.length, byOutcome, inFlight, overdueInFlight, violations };
}
