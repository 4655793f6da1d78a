// What the fuzz suites (tests/integration/hostile/fuzz-*.test.ts) share: hostile values as fast-check
// arbitraries, symbolic references to the world's rows (resolved just before each request, so
// a counterexample prints readably and replays against whatever the world holds then), the
// database snapshot, the record of every row a request wrote, and the contract's list of the
// writes each call may make.
//
// Writes are recorded by row triggers into fuzz_audit, a table of the test's own database
// (never a migration): after each request the suite reads what it wrote, row by row, and
// holds it to the contract; the snapshot (row counts and a hash of invoices, leases, events,
// sessions) must be unchanged whenever nothing was written, so the record is checked too.
import { createHash, randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import canonicalize from "canonicalize";
import fc from "fast-check";
import { eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { inferenceLease } from "@/db/schema";
import { isInFlight } from "@/lib/lease-codes";
import { cancelLease, declineRequest, openLease, proposeLease, submitLease, type LeaseDispatch } from "@/lib/leases";
import { purposeOf } from "@/lib/purposes";
import { USAGE_OUTCOMES } from "@/lib/spend/record";
import { isPurpose, type Purpose } from "@/lib/purposes";

// postgres.js returns an array; PGlite returns { rows }.
export const rowsOf = <T>(r: unknown): T[] => (Array.isArray(r) ? (r as T[]) : ((r as { rows: T[] }).rows ?? []));

async function query<T>(db: Db, statement: ReturnType<typeof sql>): Promise<T[]> {
  return rowsOf<T>(await db.execute(statement));
}

// ---------------------------------------------------------------------------------------
// The record of writes, and the snapshot

const AUDITED = [
  "app_user",
  "app_session",
  "invoice",
  "invoice_line",
  "inference_lease",
  "lease_event",
  "rate_limit",
  "membership",
  "invitation",
  "model_usage",
  "org_budget",
  // The four-eyes lane (docs/decisions/0078): a policy by its route; a request inserted by a submit,
  // decided once by an approve or a decline (apiViolations holds who, where and on what).
  "approval_policy",
  "approval_request",
  // A receipt for every write (decision 0079): inserted by apply's statement that records `applied`.
  "lease_receipt",
  // The chart of accounts is the migration's: no request writes it.
  "account",
  // The audit chain (decision 0080), appended by deferred triggers at the commit of what it records:
  // each entry is held to the write it records (withoutChainEntries).
  "audit_entry",
];

/** Records every row written to the app's tables in fuzz_audit, with the writing transaction's now(). */
export async function installAudit(db: Db): Promise<void> {
  await db.execute(
    sql.raw(`create table if not exists fuzz_audit (
    id bigserial primary key, at timestamptz not null default now(), tbl text not null, op text not null, old jsonb, new jsonb)`),
  );
  await db.execute(
    sql.raw(`create or replace function fuzz_audit_row() returns trigger language plpgsql as $$
    begin
      insert into fuzz_audit (tbl, op, old, new) values (TG_TABLE_NAME, TG_OP,
        case when TG_OP <> 'INSERT' then to_jsonb(OLD) end, case when TG_OP <> 'DELETE' then to_jsonb(NEW) end);
      return null;
    end $$`),
  );
  for (const table of AUDITED) {
    await db.execute(sql.raw(`drop trigger if exists fuzz_audit_${table} on ${table}`));
    await db.execute(
      sql.raw(
        `create trigger fuzz_audit_${table} after insert or update or delete on ${table} for each row execute function fuzz_audit_row()`,
      ),
    );
  }
}

export type Write = { id: number; at: string; tbl: string; op: "INSERT" | "UPDATE" | "DELETE"; old: any; new: any };

export async function auditMark(db: Db): Promise<number> {
  const [row] = await query<{ id: unknown }>(db, sql`select coalesce(max(id), 0) as id from fuzz_audit`);
  return Number(row!.id);
}

export async function writesSince(db: Db, mark: number): Promise<Write[]> {
  const rows = await query<Write & { old: unknown; new: unknown }>(
    db,
    sql`select id, at::text as at, tbl, op, old, new from fuzz_audit where id > ${mark} order by id`,
  );
  // PGlite hands jsonb back parsed, postgres.js too; be sure either way.
  const parse = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v);
  return rows.map((r) => ({ ...r, id: Number(r.id), old: parse(r.old), new: parse(r.new) }));
}

export type Snapshot = Record<string, string>;

/** Row counts of every app table and a hash of the rows of invoices and their lines, leases, events, sessions, memberships, invitations, usage, budgets, the chart of accounts and the audit chain's heads. */
export async function snapshot(db: Db): Promise<Snapshot> {
  const hash = (table: string) => `(select count(*) || ':' || md5(coalesce(string_agg(t::text, '|' order by t.id), '')) from ${table} t)`;
  const [row] = await query<Snapshot>(
    db,
    sql.raw(`select ${hash("invoice")} as invoice, ${hash("inference_lease")} as inference_lease, ${hash("lease_event")} as lease_event,
      ${hash("app_session")} as app_session, (select count(*)::text from app_user) as app_user,
      ${hash("invoice_line")} as invoice_line, (select count(*)::text from rate_limit) as rate_limit,
      ${hash("invitation")} as invitation, ${hash("model_usage")} as model_usage,
      (select count(*) || ':' || md5(coalesce(string_agg(t::text, '|' order by t.org_id), '')) from org_budget t) as org_budget,
      (select count(*) || ':' || md5(coalesce(string_agg(t::text, '|' order by t.code), '')) from account t) as account,
      (select count(*) || ':' || md5(coalesce(string_agg(t::text, '|' order by t.org_id, t.purpose), '')) from approval_policy t) as approval_policy,
      ${hash("approval_request")} as approval_request, ${hash("lease_receipt")} as lease_receipt,
      (select count(*) || ':' || md5(coalesce(string_agg(t::text, '|' order by t.org_id, t.user_id), '')) from membership t) as membership,
      (select count(*) || ':' || md5(coalesce(string_agg(t::text, '|' order by t.org_id), '')) from audit_head t) as audit_head,
      (select count(*)::text from audit_entry) as audit_entry`),
  );
  return { ...row! };
}

// ---------------------------------------------------------------------------------------
// What a write is, in the contract's words

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** One label per written row, e.g. `cancel:<lease>:<actor>`; `bad:...` for a write no call may make. */
export function label(w: Write): string {
  const o = w.old;
  const n = w.new;
  switch (w.tbl) {
    case "inference_lease": {
      if (w.op === "INSERT") {
        const ok = n.status === "open" && isPurpose(n.purpose) && n.proposal === null && n.closed_reason === null;
        return ok ? `open:${n.id}:${n.invoice_id}:${n.actor_id}:${n.session_id}:${n.purpose}` : `bad:lease-insert:${n.status}:${n.purpose}`;
      }
      if (w.op === "DELETE") return "bad:lease-delete";
      // A call's end (generation, in the background) releases its budget reservation, or a retried
      // attempt draws its cost from it (never up, never below 0), and nothing else.
      const settled =
        o.reserved_cents !== null &&
        (n.reserved_cents === null || (Number(n.reserved_cents) >= 0 && Number(n.reserved_cents) < Number(o.reserved_cents)));
      if (settled && same({ ...o, reserved_cents: null }, { ...n, reserved_cents: null })) return `release:${o.id}`;
      // An apply of another purpose's lease on the same invoice carries this one, in flight and
      // opened against the version that apply replaced, to the new version: that column alone.
      if (!same(o.invoice_version, n.invoice_version)) {
        const carried =
          isInFlight(o.status) &&
          n.invoice_version === o.invoice_version + 1 &&
          same({ ...o, invoice_version: null }, { ...n, invoice_version: null });
        return carried ? `carry:${o.id}:${o.invoice_id}:${o.invoice_version}` : "bad:lease-update-invoice_version";
      }
      // A submit (0078): a proposed lease's deadline moved to the review window's end, and nothing else.
      const window = { deadline_at: null, updated_at: null };
      if (
        o.status === "proposed" &&
        n.status === "proposed" &&
        !same(o.deadline_at, n.deadline_at) &&
        Date.parse(n.deadline_at) > Date.parse(w.at) &&
        same({ ...o, ...window }, { ...n, ...window })
      )
        return `window:${o.id}:${o.actor_id}`;
      for (const k of ["id", "actor_id", "invoice_id", "purpose", "deadline_at", "created_at", "session_id", "run_nonce"]) {
        if (!same(o[k], n[k])) return `bad:lease-update-${k}`;
      }
      const from = o.status as string;
      const to = n.status as string;
      const why = n.closed_reason as string | null;
      if (!same(o.proposal, n.proposal) && !(from === "open" && to === "proposed")) return "bad:lease-update-proposal";
      // What the receipt keeps of the proposal (0079) is set by propose, with the proposal, and never after.
      for (const k of ["prompt_version", "proposed_at", "proposed_invoice_version", "proposed_invoice_sha256"]) {
        if (!same(o[k], n[k]) && !(from === "open" && to === "proposed")) return `bad:lease-update-${k}`;
      }
      if (isInFlight(from) && to === "expired" && why === "deadline_passed" && Date.parse(o.deadline_at) <= Date.parse(w.at))
        return `expire:${o.id}`;
      if (isInFlight(from) && to === "rejected" && why === "cancelled") return `cancel:${o.id}:${o.actor_id}`;
      if (isInFlight(from) && to === "rejected" && why === "signed_out") return `revoke:${o.id}:${o.actor_id}:${o.session_id}`;
      if (from === "proposed" && to === "applied") return `apply:${o.id}:${o.actor_id}:${o.invoice_id}:${o.purpose}`;
      // Refused at apply (the fencing token), or withdrawn by an edit of its invoice (0013).
      if (isInFlight(from) && to === "rejected" && why === "invoice_changed") return `fence:${o.id}:${o.actor_id}:${o.invoice_id}`;
      if (from === "proposed" && to === "rejected" && why === "proposal_unusable") return `unusable:${o.id}:${o.actor_id}`;
      // A decline of the request the lease was submitted under (0078).
      if (from === "proposed" && to === "rejected" && why === "declined") return `decline:${o.id}:${o.actor_id}`;
      if (from === "open" && to === "proposed" && n.proposal) return `propose:${o.id}`;
      if (from === "open" && to === "rejected" && why === "generation_failed") return `generation_failed:${o.id}`;
      return `bad:lease-update:${from}->${to}:${why}`;
    }
    case "lease_event":
      return w.op === "INSERT" ? `event:${n.kind}:${n.lease_id}` : `bad:event-${w.op}`;
    case "invoice": {
      // POST /api/invoices: a new invoice at version 1, with no summary, review notes or their versions.
      if (w.op === "INSERT") {
        const fresh = n.version === 1 && [n.summary, n.summary_version, n.review_notes, n.review_notes_version].every((v) => v === null);
        return fresh ? `create:${n.id}:${n.owner_id}` : "bad:invoice-insert";
      }
      if (w.op !== "UPDATE") return `bad:invoice-${w.op}`;
      if (n.version !== o.version + 1) return "bad:invoice-version";
      // Every change bumps the version and dates itself; what else it changed says whose it is.
      const changed = Object.keys({ ...o, ...n }).filter((k) => !same(o[k], n[k]) && k !== "version" && k !== "updated_at");
      const within = (allowed: string[]) => changed.every((k) => allowed.includes(k));
      const owner = `${o.id}:${o.owner_id}`;
      // Nothing else: an apply of categorize_lines (its writes are the lines'), or an edit that sent no field.
      if (changed.length === 0) return `bump:${owner}`;
      // An apply of summarize_invoice: the summary, written for the new version.
      if (within(["summary", "summary_version"]))
        return typeof n.summary === "string" && n.summary.trim() !== "" && n.summary_version === n.version
          ? `summary:${owner}`
          : "bad:invoice-summary";
      // An apply of review_invoice: the findings, written for the new version.
      if (within(["review_notes", "review_notes_version"]))
        return Array.isArray(n.review_notes) && n.review_notes_version === n.version ? `review:${owner}` : "bad:invoice-review";
      // An edit or a status change: its own fields, and nothing a purpose writes.
      if (within(["number", "counterparty", "issued_on", "due_on", "status", "paid_on"])) return `edit:${owner}`;
      return `bad:invoice-update-${changed.join("+")}`;
    }
    case "app_session":
      if (w.op === "INSERT") return n.revoked_at === null ? `session:${n.user_id}` : "bad:session-insert";
      if (
        w.op === "UPDATE" &&
        o.revoked_at === null &&
        n.revoked_at !== null &&
        same({ ...o, revoked_at: null }, { ...n, revoked_at: null })
      ) {
        return `signout:${o.id}:${o.user_id}`;
      }
      return `bad:session-${w.op}`;
    case "invoice_line": {
      if (w.op === "INSERT") return n.category === null ? `line:${n.invoice_id}` : "bad:invoice_line-insert";
      // An apply of categorize_lines: that line's category, to an account, and nothing else of it.
      if (w.op === "UPDATE" && n.category !== null && same({ ...o, category: null }, { ...n, category: null }))
        return `category:${o.invoice_id}:${o.id}`;
      return `bad:invoice_line-${w.op}`;
    }
    case "model_usage": {
      // One row per model call, by the generation (in the background): the lease's, never rewritten.
      if (w.op !== "INSERT") return `bad:model_usage-${w.op}`;
      const counted = [n.input_tokens, n.output_tokens, Number(n.cost_cents)].every((v) => Number.isFinite(v) && v >= 0);
      return counted && (USAGE_OUTCOMES as readonly string[]).includes(n.outcome) && isPurpose(n.purpose)
        ? `usage:${n.lease_id}:${n.actor_id}:${n.outcome}`
        : "bad:model_usage-insert";
    }
    case "org_budget": {
      // PUT /api/org/budget: the organization's four caps, by whom (an upsert: one row per organization).
      if (w.op === "DELETE") return "bad:org_budget-delete";
      if (w.op === "UPDATE" && o.org_id !== n.org_id) return "bad:org_budget-org";
      const caps = ["organization_daily_cents", "organization_monthly_cents", "member_daily_cents", "member_monthly_cents"].map((k) =>
        String(n[k]),
      );
      return `budget:${n.org_id}:${n.updated_by}:${caps.join(":")}`;
    }
    case "audit_entry":
      // An entry of the chain: what it records (its source, op and key) pairs it with that write.
      return w.op === "INSERT" ? `chain:${n.source}:${n.op}:${n.source_key}` : `bad:audit_entry-${w.op}`;
    case "approval_policy":
      // PUT /api/org/policies/:purpose: an upsert of one purpose's policy, by whom.
      if (w.op === "DELETE") return "bad:approval_policy-delete";
      if (w.op === "UPDATE" && (o.org_id !== n.org_id || o.purpose !== n.purpose)) return "bad:approval_policy-key";
      return `policy:${n.org_id}:${n.purpose}:${n.updated_by}:${n.apply}:${n.review_hours}`;
    case "lease_receipt":
      // Apply's receipt (0079), or an approval's: inserted once, never rewritten; who approved, if anyone.
      return w.op === "INSERT"
        ? `receipt:${n.lease_id}:${n.requester_id}:${n.invoice_id}:${n.lane}:${n.approver_id ?? "none"}`
        : `bad:lease_receipt-${w.op}`;
    case "approval_request": {
      // A submit inserts an undecided request, by whom, from which session, in which organization;
      // a decision sets its five columns once, by someone other than the requester, and nothing else.
      const decision = { decision: null, approver_id: null, approver_session_id: null, decided_at: null, comment: null };
      if (w.op === "INSERT")
        return same({ ...n, ...decision }, n)
          ? `submit:${n.id}:${n.lease_id}:${n.requester_id}:${n.requester_session_id}:${n.org_id}:${n.purpose}`
          : "bad:approval_request-insert";
      if (
        w.op === "UPDATE" &&
        o.decision === null &&
        ["approved", "declined"].includes(n.decision) &&
        n.approver_id !== null &&
        n.approver_id !== o.requester_id &&
        n.approver_session_id !== null &&
        n.decided_at !== null &&
        same({ ...o, ...decision }, { ...n, ...decision })
      )
        return `decide:${o.id}:${n.decision}:${n.approver_id}:${n.approver_session_id}:${o.org_id}`;
      return `bad:approval_request-${w.op}`;
    }
    case "rate_limit":
      return "ratelimit";
    case "app_user":
      // Only accepting an invitation makes a user (the fuzzer signs no one up otherwise).
      if (w.op === "INSERT") return `user-new:${n.id}:${n.email}`;
      // A removal marks the user removed (0077: their next sign-in makes no organization), and nothing else.
      if (w.op === "UPDATE" && n.removed_at !== null && same({ ...o, removed_at: null }, { ...n, removed_at: null }))
        return `user-removed:${o.id}`;
      // A removed member back by an invitation (lib/members.ts rejoin): removed_at cleared, and nothing else.
      if (w.op === "UPDATE" && n.removed_at === null && same({ ...o, removed_at: null }, n)) return `user-back:${o.id}`;
      return `bad:app_user-${w.op}`;
    case "membership": {
      if (w.op === "INSERT") return `member-join:${n.org_id}:${n.user_id}:${n.role}`;
      if (w.op === "DELETE") return `member-remove:${o.org_id}:${o.user_id}`;
      return same({ ...o, role: null }, { ...n, role: null })
        ? `member-role:${o.org_id}:${o.user_id}:${o.role}->${n.role}`
        : "bad:membership-update";
    }
    case "invitation": {
      if (w.op === "INSERT") {
        const fresh =
          n.accepted_at === null && n.accepted_by === null && n.revoked_at === null && Date.parse(n.expires_at) > Date.parse(n.created_at);
        return fresh ? `invite:${n.id}:${n.org_id}:${n.email}:${n.role}:${n.invited_by}` : "bad:invitation-insert";
      }
      if (w.op === "DELETE") return "bad:invitation-delete";
      const only = (k: string) => same({ ...o, [k]: null }, { ...n, [k]: null }) && o[k] === null && n[k] !== null;
      if (only("revoked_at") && o.accepted_at === null) return `invite-revoke:${o.id}:${o.org_id}:${o.email}`;
      if (only("accepted_at") && o.revoked_at === null) return `invite-accept:${o.id}:${o.org_id}:${o.email}:${o.role}:${o.token_sha256}`;
      if (only("accepted_by") && o.accepted_at !== null) return `invite-accepted-by:${o.id}:${n.accepted_by}`;
      // An existing account's acceptance (rejoin) sets both at once.
      const both = same({ ...o, accepted_at: null, accepted_by: null }, { ...n, accepted_at: null, accepted_by: null });
      if (both && o.accepted_at === null && o.revoked_at === null && n.accepted_at !== null && n.accepted_by !== null)
        return `invite-accept:${o.id}:${o.org_id}:${o.email}:${o.role}:${o.token_sha256}|${n.accepted_by}`;
      return "bad:invitation-update";
    }
    default:
      return `bad:${w.tbl}-${w.op}`;
  }
}

/** Removes each `transition` label whose prefix matches with one event of `kind` for the same lease; returns the rest. */
function dropPairs(labels: string[], transition: RegExp, kind: string): string[] {
  const rest = [...labels];
  for (const l of labels) {
    const m = transition.exec(l);
    if (!m) continue;
    const leaseId = m[1]!;
    const e = rest.indexOf(`event:${kind}:${leaseId}`);
    if (e < 0) continue; // a transition without its event stays, and fails
    rest.splice(rest.indexOf(l), 1);
    rest.splice(rest.indexOf(`event:${kind}:${leaseId}`), 1);
  }
  return rest;
}

/**
 * Without the leases an edit of invoice `inv` withdrew, each with its event (decision 0013): every
 * lease in flight on it, of any purpose. A withdrawal without its event, or of another invoice's
 * lease, stays in the list (and fails).
 */
export function withoutWithdrawals(labels: string[], inv: string): string[] {
  const rest = [...labels];
  // Only a change of the invoice withdraws anything.
  if (!labels.some((l) => /^(edit|bump):/.test(l) && l.split(":")[1] === inv)) return rest;
  for (const l of labels) {
    const [kind, lease, , on] = l.split(":");
    const event = `event:invoice_changed:${lease}`;
    if (kind !== "fence" || on !== inv || !rest.includes(event)) continue;
    rest.splice(rest.indexOf(l), 1);
    rest.splice(rest.indexOf(event), 1);
  }
  return rest;
}

/**
 * Without the audit chain's entries (decision 0080), each paired with the write it records: one
 * per lease event, per membership written (by its organization and user), per budget and per
 * approval policy or request written;
 * an invoice change's (not a table the record watches) comes with a write of an invoice. A write
 * the chain should record and did not stays as `bad:unchained:<label>`, and an entry with no
 * write, as itself: both fail.
 */
export function withoutChainEntries(labels: string[]): string[] {
  const rest = labels.filter((l) => !l.startsWith("chain:"));
  const chain = labels.filter((l) => l.startsWith("chain:"));
  const take = (entry: string) => {
    const i = chain.indexOf(entry);
    if (i >= 0) chain.splice(i, 1);
    return i >= 0;
  };
  const takeLike = (pattern: RegExp) => {
    const i = chain.findIndex((c) => pattern.test(c));
    if (i >= 0) chain.splice(i, 1);
    return i >= 0;
  };
  const missing: string[] = [];
  for (const l of rest) {
    const [kind, a, b] = l.split(":");
    const recorded =
      kind === "event"
        ? takeLike(/^chain:lease_event:insert:\d+$/)
        : kind === "member-join"
          ? take(`chain:membership:insert:${a}:${b}`)
          : kind === "member-remove"
            ? take(`chain:membership:delete:${a}:${b}`)
            : kind === "member-role"
              ? take(`chain:membership:update:${a}:${b}`)
              : kind === "budget"
                ? takeLike(new RegExp(`^chain:org_budget:(insert|update):${a}$`)) // the upsert's, of that organization
                : kind === "policy"
                  ? takeLike(new RegExp(`^chain:approval_policy:(insert|update):${a}:${b}$`)) // keyed by organization and purpose
                  : kind === "submit"
                    ? take(`chain:approval_request:insert:${a}`) // keyed by the request's id
                    : kind === "decide"
                      ? take(`chain:approval_request:update:${a}`)
                      : kind === "receipt"
                        ? takeLike(/^chain:lease_receipt:insert:[0-9a-f-]+$/)
                        : null;
    if (recorded === false) missing.push(`bad:unchained:${l}`);
  }
  const wroteInvoice = rest.some((l) => /^(create|edit|bump):/.test(l));
  const left = chain.filter((c) => !(wroteInvoice && c.startsWith("chain:invoice_change:insert:")));
  return [...rest, ...missing, ...left];
}

/**
 * The writes any call may make on the side: a lease found past its deadline is recorded
 * `expired` (with its event) by whichever operation touches it first. With `background`, also
 * what a generation running in the app writes on its own (the built app only).
 */
export function withoutAllowedSideWrites(labels: string[], opts: { background?: boolean; rateLimit?: boolean } = {}): string[] {
  let rest = dropPairs(withoutChainEntries(labels), /^expire:([^:]+)$/, "expired");
  if (opts.background) {
    rest = dropPairs(rest, /^propose:([^:]+)$/, "proposed");
    rest = dropPairs(rest, /^generation_failed:([^:]+)$/, "generation_failed");
    // A call's usage, recorded when it ends (proposed, late, aborted, failed), and its reservation released.
    rest = rest.filter((l) => !/^event:(late_completion|run_mismatch):/.test(l) && !/^release:[^:]+$/.test(l) && !/^usage:/.test(l));
  }
  if (opts.rateLimit) rest = rest.filter((l) => l !== "ratelimit");
  return rest;
}

/** Does `labels` equal one of the alternatives, as multisets? A `*` in a pattern's segment matches anything but `:`. */
export function matchesOneOf(labels: string[], alternatives: string[][]): boolean {
  const glob = (seg: string) =>
    new RegExp(
      `^${seg
        .split("*")
        .map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
      "s",
    );
  const fits = (pattern: string, l: string) => {
    const p = pattern.split(":");
    const s = l.split(":");
    return p.length === s.length && p.every((seg, i) => seg === "*" || seg === s[i] || (seg.includes("*") && glob(seg).test(s[i]!)));
  };
  return alternatives.some((alt) => {
    if (alt.length !== labels.length) return false;
    const left = [...labels];
    return alt.every((pattern) => {
      const i = left.findIndex((l) => fits(pattern, l));
      if (i < 0) return false;
      left.splice(i, 1);
      return true;
    });
  });
}

// ---------------------------------------------------------------------------------------
// Hostile values

const NUL = "\u0000";
export const hugeString = fc.integer({ min: 1, max: 6 }).map((k) => "x".repeat(k * 4000));

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\t\n",
    NUL,
    `a${NUL}b`,
    "\ud800",
    "\udfff",
    "x\ud800y",
    "\udc00\ud800",
    "\ud83d\ude00",
    "\ufeff",
    "\u202e",
    "null",
    "undefined",
    "__proto__",
    "' OR 1=1 --",
    "%00",
    "%ZZ",
    "../../etc/passwd",
    "\\u0000",
    "<script>alert(1)</script>",
    "a".repeat(65),
    "a".repeat(201),
    "a".repeat(321),
    "a".repeat(1025),
  ),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: fc.constantFrom(NUL, "\ud800", "\udc00", "a", "é", "😀", " ", "\n", "-"), maxLength: 16 }),
  hugeString,
);

export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    2,
    2147483647,
    2147483648,
    -2147483648,
    -2147483649,
    4294967296,
    9007199254740991,
    9007199254740993,
    1e308,
    -1e308,
    5e-324,
    0.5,
    1.5,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

export const nastyDate: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "1899-12-31",
    "1900-01-01",
    "2199-12-31",
    "2200-01-01",
    "0000-01-01",
    "9999-12-31",
    "+275760-09-13",
    "-000001-01-01",
    "2026-13-01",
    "2026-00-10",
    "2026-02-29",
    "2024-02-29",
    "2026-11-01T00:00:00Z",
    "20261101",
    "2026-1-1",
    `2026-11-01${NUL}`,
    "infinity",
    "-infinity",
    "epoch",
    "today",
    "2026-11-01 BC",
  ),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.integer({ min: -300000, max: 300000 }).map((y) => `${y}-06-15`),
);

export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  nastyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);

/** Keys a client might add hoping the server takes them. */
export const EXTRA_KEYS = [
  "owner_id",
  "actor_id",
  "user_id",
  "version",
  "summary",
  "status",
  "id",
  "lease_id",
  "session_id",
  "deadline_at",
  "__proto__",
  "constructor",
];

/** Raw JSON-ish texts that a value cannot express: deep nesting, duplicate keys, escapes, broken syntax. */
export function rawJson(fields: string[]): fc.Arbitrary<string> {
  const key = fc.constantFrom(...fields, ...EXTRA_KEYS);
  return fc.oneof(
    fc.integer({ min: 100, max: 10_000 }).map((n) => "[".repeat(n) + "]".repeat(n)),
    fc.integer({ min: 100, max: 10_000 }).map((n) => '{"a":'.repeat(n) + "1" + "}".repeat(n)),
    fc.tuple(key, fc.integer({ min: 50, max: 5_000 })).map(([k, n]) => `{"${k}":${"[".repeat(n)}${"]".repeat(n)}}`),
    fc
      .tuple(key, fc.jsonValue({ maxDepth: 1 }), fc.jsonValue({ maxDepth: 1 }))
      .map(([k, a, b]) => `{"${k}":${JSON.stringify(a)},"${k}":${JSON.stringify(b)}}`),
    key.map((k) => `{"${k}":"\\ud800"}`),
    key.map((k) => `{"${k}":"a\\u0000b"}`),
    key.map((k) => `{"${k}":1e999}`),
    key.map((k) => `{"${k}":-1e999}`),
    key.map((k) => `{"${k}":123456789012345678901234567890}`),
    key.map((k) => `{"__proto__":{"${k}":"x"}}`),
    fc.constantFrom(
      "",
      " ",
      "null",
      "true",
      "0",
      '""',
      "[]",
      "{}",
      "{",
      "}",
      "{,}",
      '{"a":1,}',
      "{'a':1}",
      '{"a":1}garbage',
      "\ufeff{}",
      "NaN",
      "undefined",
      "[1,2",
      '"\\x41"',
    ),
    fc.integer({ min: 16_000, max: 40_000 }).map((n) => `{"a":"${"b".repeat(n)}"}`),
    fc.integer({ min: 16_000, max: 20_000 }).map((n) => " ".repeat(n) + "{}"),
    fc.string({ unit: "binary", maxLength: 60 }),
  );
}

/** Bodies that are not text: invalid UTF-8, an overlong NUL, random bytes. */
export const rawBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.constantFrom(
    Uint8Array.from([0xff, 0xfe, 0x7b, 0x7d]),
    Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), // {"a":"\xc3("}
    Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d]), // overlong NUL
    Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]), // CESU surrogate
    Uint8Array.from([0x00, 0x00, 0x00, 0x00]),
  ),
);

// ---------------------------------------------------------------------------------------
// References to the world, resolved just before a request

/** A row of the world named symbolically, optionally disguised (`upper`, `braced`...). */
export class Ref {
  constructor(
    readonly name: RefName,
    readonly disguise: Disguise = "none",
  ) {}
  toString() {
    return `ref(${this.name}${this.disguise === "none" ? "" : `,${this.disguise}`})`;
  }
  [fc.toStringMethod]() {
    return this.toString();
  }
}
export type RefName =
  | "inv:own0"
  | "inv:own1"
  | "inv:own2"
  | "inv:free"
  | "inv:other"
  | "version:own0"
  | "version:own2"
  | "lease:open"
  | "lease:proposed"
  | "lease:overdue"
  | "lease:terminal"
  | "lease:other"
  | "lease:review"
  | "lease:categorize"
  | "lease:categorize-open"
  | "lease:member"
  | "line:cat0"
  | "line:cat1"
  | "line:foreign"
  | "line:other"
  | "email:owner"
  | "email:other"
  | "password"
  | "user:owner"
  | "user:other"
  | "uuid:missing"
  /** The token of the link in the last invitation a request made (a 201's url), or one that names none. */
  | "token:last"
  /** The id of the last invitation a request made, or a missing one. */
  | "invite:last"
  /** The member who joined last through a link (not one of the two actors), or a missing id. */
  | "user:joined"
  /** The owner's proposed lease of the lane's purpose, not yet submitted, under four_eyes (the slot of `lease:review`). */
  | "lease:submit"
  /**
   * Pending approval requests (0078): the owner's (`lease:review` submitted; the approver decides
   * it), their teammates' (the member's and the approver's: the owner decides them; the approver,
   * the member's), another organization's.
   */
  | "approval:own"
  | "approval:member"
  | "approval:approver"
  /** The approver's proposed lease of the lane's purpose, not yet submitted. */
  | "lease:submit-approver"
  | "approval:other"
  /** A request of the owner's organization already decided. */
  | "approval:decided"
  /** The proposal_sha256 of the request an `approval:*` reference named last: the hash its approver is shown. */
  | "hash:last";
export type Disguise = "none" | "upper" | "braced" | "nodash" | "nul" | "space" | "newline" | "urn";

export const disguise = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Disguise>("none") },
  { weight: 1, arbitrary: fc.constantFrom<Disguise>("upper", "braced", "nodash", "nul", "space", "newline", "urn") },
);

export function disguised(value: string, how: Disguise): string {
  switch (how) {
    case "none":
      return value;
    case "upper":
      return value.toUpperCase();
    case "braced":
      return `{${value}}`;
    case "nodash":
      return value.replaceAll("-", "");
    case "nul":
      return `${value}${NUL}`;
    case "space":
      return ` ${value} `;
    case "newline":
      return `${value}\n`;
    case "urn":
      return `urn:uuid:${value}`;
  }
}

export const ref = (...names: RefName[]) => fc.tuple(fc.constantFrom(...names), disguise).map(([n, d]) => new Ref(n, d));

/** Replaces every Ref inside `value` with what it names now. */
export async function resolveRefs(value: unknown, lookup: (name: RefName) => Promise<string | number>): Promise<unknown> {
  if (value instanceof Ref) {
    const found = await lookup(value.name);
    return typeof found === "number" ? (value.disguise === "none" ? found : String(found)) : disguised(found, value.disguise);
  }
  if (Array.isArray(value)) {
    // One at a time: two references to one fixture (apply's `lines` may name a lease twice) must not make it twice at once.
    const out: unknown[] = [];
    for (const v of value) out.push(await resolveRefs(v, lookup));
    return out;
  }
  // fast-check 4's records and dictionaries are null-prototype objects about half the time
  // (noNullPrototype: false): those hold references too (left unresolved, a valid body was sent
  // with `{"name":"hash:last",...}` in it and refused 422, half of the time).
  const proto = value && typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (value && typeof value === "object" && (proto === Object.prototype || proto === null)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // Keeps a literal "__proto__" key an own property, as JSON.parse makes it.
      Object.defineProperty(out, k, { value: await resolveRefs(v, lookup), enumerable: true, configurable: true, writable: true });
    }
    return out;
  }
  return value;
}

// ---------------------------------------------------------------------------------------
// The world: two actors, their invoices and leases in each state, created by the domain

export const noDispatch: LeaseDispatch = { async leaseOpened() {}, async leaseClosed() {} };

export type Actor = { id: string; email: string; cookie: string; sessionId: string };

/** The purpose the four-eyes lane's fixtures use: `four_eyes` in both organizations whenever a lane fixture is made. */
export const LANE_PURPOSE: Purpose = "review_invoice";

/**
 * Keeps, for each reference, a row in the state it names, making one through the domain
 * when a request has used it up (applied, cancelled, signed out...). Lease fixtures belong
 * to the owner's current session, so a sign-out closes them as the contract says.
 */
export class World {
  constructor(
    readonly db: Db,
    readonly owner: Actor,
    readonly other: Actor,
    /** The owner's invoices: 0-2 for leases and edits, 3 kept free for opening. */
    readonly ownInvoices: string[],
    readonly otherInvoice: string,
    /** Signs in through the app and returns the cookie header and session id. */
    private readonly signIn: (email: string) => Promise<{ cookie: string; sessionId: string }>,
    readonly password: string,
    /** A member (not an admin) of the owner's organization, with an invoice of their own (for `lease:member`). */
    readonly member: Actor & { invoice: string },
    /**
     * An approver (not an admin) of the owner's organization, with an invoice of their own: they
     * decide the owner's and the member's requests, and the owner decides theirs (`approval:approver`).
     */
    readonly approver: Actor & { invoice: string },
  ) {}

  readonly missing = "7e6b1a52-0f0e-4c3b-9a55-3d8f3c1c2b11";

  private lastToken: string | null = null;
  private lastInvitation: string | null = null;
  private homes: Map<string, string> | null = null;
  /** Fixture proposals made so far: each differs from the one before. */
  private proposals = 0;
  /** The hash of the request an `approval:*` reference named last (`hash:last`). */
  private lastHash = "0".repeat(64);

  /** What an answer tells the world: the link and id of the last invitation made (for `token:last`, `invite:last`). */
  observe(route: ApiRoute, method: string, status: number, answer: any) {
    if (route === "invitations" && method === "POST" && status === 201 && typeof answer?.url === "string") {
      this.lastToken = String(answer.url).split("/").pop() ?? null;
      this.lastInvitation = typeof answer.id === "string" ? answer.id : null;
    }
  }

  /** Each actor's role: the two admins of their own organizations, and the owner's two teammates. */
  role(actorId: string): "admin" | "approver" | "member" {
    return actorId === this.member.id ? "member" : actorId === this.approver.id ? "approver" : "admin";
  }

  /** The actors' names, for the figures: who decided whose request. */
  nameOf(userId: string | null | undefined): string {
    const names: [Actor, string][] = [
      [this.owner, "owner"],
      [this.approver, "approver"],
      [this.member, "member"],
      [this.other, "other"],
    ];
    return names.find(([a]) => a.id === userId)?.[1] ?? "someone";
  }

  /** Each actor's organization, as the world was made: user id → org id. */
  async orgs(): Promise<Map<string, string>> {
    if (!this.homes) {
      const homes = new Map<string, string>();
      for (const a of [this.owner, this.other, this.member, this.approver]) {
        const [row] = await query<{ org_id: string }>(
          this.db,
          sql`select org_id from membership where user_id = ${a.id} order by created_at, org_id limit 1`,
        );
        homes.set(a.id, row!.org_id);
      }
      this.homes = homes;
    }
    return this.homes;
  }

  /**
   * Puts each actor back as the admin of their own organization if a request removed or demoted
   * them (which a member who joined as admin makes possible): before the request's mark, so a
   * fixture, and before the sign-in that would otherwise make them a new organization.
   */
  async repairTeam() {
    for (const [userId, orgId] of await this.orgs()) {
      const role = this.role(userId);
      await this.db.execute(
        sql`insert into membership (org_id, user_id, role) values (${orgId}, ${userId}, ${role})
            on conflict (org_id, user_id) do update set role = ${role} where membership.role <> ${role}`,
      );
    }
  }

  private async live(actor: Actor) {
    const [row] = await query<{ live: boolean }>(
      this.db,
      sql`select (revoked_at is null and expires_at > now()) as live from app_session where id = ${actor.sessionId}`,
    );
    if (row?.live) return;
    const fresh = await this.signIn(actor.email);
    actor.cookie = fresh.cookie;
    actor.sessionId = fresh.sessionId;
  }

  /** Makes sure every actor's cookie names a live session. */
  async liveSessions() {
    await this.live(this.owner);
    await this.live(this.other);
    await this.live(this.member);
    await this.live(this.approver);
  }

  private async inFlight(invoiceId: string, purpose?: Purpose) {
    return query<{ id: string; status: string; actor_id: string; session_id: string | null; left_s: number; submitted: boolean }>(
      this.db,
      sql`select id, status, actor_id, session_id, extract(epoch from deadline_at - now())::float8 as left_s,
          exists (select 1 from approval_request r where r.lease_id = inference_lease.id) as submitted
          from inference_lease where invoice_id = ${invoiceId} and status in ('open','proposed')
          and (${purpose ?? null}::text is null or purpose = ${purpose ?? null})`,
    );
  }

  private async clear(invoiceId: string, purpose?: Purpose) {
    for (const lease of await this.inFlight(invoiceId, purpose)) await cancelLease(this.db, lease.actor_id, lease.id, noDispatch);
  }

  private async open(actor: Actor, invoiceId: string, ttlSeconds = 600, purpose: Purpose = "summarize_invoice") {
    const input = { actorId: actor.id, sessionId: actor.sessionId, invoiceId, purpose, ttlSeconds };
    let result = await openLease(this.db, input, noDispatch);
    if (!result.ok && result.code === "budget_exhausted") {
      // A cap a request set stops the requests, not the fixtures: lifted for this open alone.
      const caps = sql.raw(CAPS.join(", "));
      const org = sql`(select org_id from invoice where id = ${invoiceId})`;
      const [kept] = await query<Record<string, number | null>>(this.db, sql`select ${caps} from org_budget where org_id = ${org}`);
      await this.db.execute(sql`update org_budget set ${sql.raw(CAPS.map((k) => `${k} = null`).join(", "))} where org_id = ${org}`);
      result = await openLease(this.db, input, noDispatch);
      await this.db.execute(
        sql`update org_budget set ${sql.join(
          CAPS.map((k) => sql`${sql.raw(k)} = ${kept![k]}::integer`),
          sql`, `,
        )} where org_id = ${org}`,
      );
    }
    if (!result.ok) throw new Error(`fixture lease not opened: ${result.code}`);
    return result.lease.id;
  }

  /** A proposal of `purpose` for the invoice, each its own words or choices, so applying it changes the invoice. */
  private async proposalFor(purpose: Purpose, invoiceId: string): Promise<Record<string, unknown>> {
    if (purpose === "summarize_invoice") return { summary: `A fixture summary, ${randomUUID()}.`, model: "fuzz" };
    if (purpose === "review_invoice") {
      return {
        findings: [{ code: "due_soon", severity: "medium", message: `A fixture finding, ${randomUUID()}.`, fields: ["due_on"] }],
        model: "fuzz",
      };
    }
    // A category from the chart for each line, or for the first alone (so naming the second is invalid_lines).
    const lines = await this.lines(invoiceId);
    const codes = (await query<{ code: string }>(this.db, sql`select code from account order by code`)).map((r) => r.code);
    const n = this.proposals++;
    const some = n % 4 === 3 ? lines.slice(0, 1) : lines;
    return { lines: some.map((id, i) => ({ line_id: id, category: codes[(n + i) % codes.length]! })), model: "fuzz" };
  }

  private async lines(invoiceId: string): Promise<string[]> {
    const rows = await query<{ id: string }>(
      this.db,
      sql`select id from invoice_line where invoice_id = ${invoiceId} order by position, id`,
    );
    return rows.map((r) => r.id);
  }

  /** A lease of `purpose` in `status` on `invoiceId`, of `actor`'s current session, with time left (or overdue). */
  private async leaseIn(
    actor: Actor,
    invoiceId: string,
    status: "open" | "proposed",
    overdue = false,
    purpose: Purpose = "summarize_invoice",
    unsubmitted = false,
  ): Promise<string> {
    const [current] = await this.inFlight(invoiceId, purpose);
    if (
      current &&
      current.status === status &&
      current.session_id === actor.sessionId &&
      !(unsubmitted && current.submitted) &&
      (overdue ? Number(current.left_s) <= 0 : Number(current.left_s) > 30)
    ) {
      return current.id;
    }
    await this.clear(invoiceId, purpose);
    const id = await this.open(actor, invoiceId, overdue ? -1 : 600, purpose);
    if (status === "proposed") {
      const [lease] = await this.db.select({ runNonce: inferenceLease.runNonce }).from(inferenceLease).where(eq(inferenceLease.id, id));
      const proposed = await proposeLease(this.db, {
        leaseId: id,
        actorId: actor.id,
        runNonce: lease!.runNonce,
        proposal: await this.proposalFor(purpose, invoiceId),
      });
      if (!proposed.ok) throw new Error(`fixture lease not proposed: ${proposed.code}`);
    }
    return id;
  }

  /** The purposes under `four_eyes` in an organization now. */
  async fourEyes(orgId: string | null): Promise<string[]> {
    if (!orgId) return [];
    const rows = await query<{ purpose: string }>(
      this.db,
      sql`select purpose from approval_policy where org_id = ${orgId} and apply = 'four_eyes' order by purpose`,
    );
    return rows.map((r) => r.purpose);
  }

  /** The approval request an id names, if it names one (any letter case). */
  async approvalOf(id: string): Promise<{ lease_id: string; requester_id: string; org_id: string } | null> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
    const [row] = await query<{ lease_id: string; requester_id: string; org_id: string }>(
      this.db,
      sql`select lease_id, requester_id, org_id from approval_request where id = ${id.toLowerCase()}::uuid`,
    );
    return row ?? null;
  }

  /**
   * The lane's purpose under four_eyes in the actor's organization, as its admin set it (in the
   * suite's setup, through the route): put back when a request set it to self, so the lane's
   * fixtures can be made and a submit can answer 200.
   */
  private async fourEyesFor(actor: Actor) {
    const orgId = (await this.orgs()).get(actor.id)!;
    await this.db.execute(
      sql`insert into approval_policy (org_id, purpose, apply, review_hours, updated_by)
          values (${orgId}, ${LANE_PURPOSE}, 'four_eyes', 720, ${actor.id})
          on conflict (org_id, purpose) do update set apply = 'four_eyes', updated_by = excluded.updated_by
          where approval_policy.apply <> 'four_eyes'`,
    );
  }

  /** A pending request of `actor` on `invoiceId`: their proposed lease of the lane's purpose, submitted if it was not. */
  private async pending(actor: Actor, invoiceId: string): Promise<string> {
    await this.fourEyesFor(actor);
    const leaseId = await this.leaseIn(actor, invoiceId, "proposed", false, LANE_PURPOSE);
    const [found] = await query<{ id: string; proposal_sha256: string }>(
      this.db,
      sql`select id, proposal_sha256 from approval_request where lease_id = ${leaseId}`,
    );
    if (found) {
      this.lastHash = found.proposal_sha256;
      return found.id;
    }
    const submitted = await submitLease(this.db, { id: actor.id, sessionId: actor.sessionId }, leaseId);
    if (!submitted.ok) throw new Error(`fixture request not submitted: ${submitted.code}`);
    this.lastHash = submitted.request.proposal_sha256;
    return submitted.request.id;
  }

  async lookup(name: RefName): Promise<string | number> {
    switch (name) {
      case "inv:own0":
        return this.ownInvoices[0]!;
      case "inv:own1":
        return this.ownInvoices[1]!;
      case "inv:own2":
        return this.ownInvoices[2]!;
      case "inv:free":
        await this.clear(this.ownInvoices[3]!);
        return this.ownInvoices[3]!;
      case "inv:other":
        return this.otherInvoice;
      case "version:own0":
      case "version:own2": {
        const id = this.ownInvoices[name === "version:own0" ? 0 : 2]!;
        const [row] = await query<{ version: number }>(this.db, sql`select version from invoice where id = ${id}`);
        return Number(row!.version);
      }
      case "lease:open":
        return this.leaseIn(this.owner, this.ownInvoices[0]!, "open");
      case "lease:proposed":
        return this.leaseIn(this.owner, this.ownInvoices[1]!, "proposed");
      case "lease:overdue":
        return this.leaseIn(this.owner, this.ownInvoices[2]!, "open", true);
      case "lease:terminal": {
        const [row] = await query<{ id: string }>(
          this.db,
          sql`select id from inference_lease where actor_id = ${this.owner.id} and status not in ('open','proposed') order by created_at desc limit 1`,
        );
        if (row) return row.id;
        const id = await this.open(this.owner, this.ownInvoices[3]!);
        await cancelLease(this.db, this.owner.id, id, noDispatch);
        return id;
      }
      case "lease:other":
        return this.leaseIn(this.other, this.otherInvoice, "open");
      // Proposed leases of the other purposes on the invoice of `lease:proposed`: an apply of any
      // of the three carries the others to the invoice's new version.
      case "lease:review":
        return this.leaseIn(this.owner, this.ownInvoices[1]!, "proposed", false, "review_invoice");
      case "lease:categorize":
        return this.leaseIn(this.owner, this.ownInvoices[1]!, "proposed", false, "categorize_lines");
      case "lease:categorize-open":
        return this.leaseIn(this.owner, this.ownInvoices[0]!, "open", false, "categorize_lines");
      // A teammate's lease, on their own invoice in the owner's organization: 404 to the owner.
      case "lease:member":
        return this.leaseIn(this.member, this.member.invoice, "open");
      case "line:cat0":
      case "line:cat1":
        return (await this.lines(this.ownInvoices[1]!))[name === "line:cat0" ? 0 : 1]!;
      // A line of another of the owner's invoices, and one of another organization's invoice.
      case "line:foreign":
        return (await this.lines(this.ownInvoices[0]!))[0]!;
      case "line:other":
        return (await this.lines(this.otherInvoice))[0]!;
      case "email:owner":
        return this.owner.email;
      case "email:other":
        return this.other.email;
      case "password":
        return this.password;
      case "user:owner":
        return this.owner.id;
      case "user:other":
        return this.other.id;
      case "uuid:missing":
        return this.missing;
      case "token:last":
        return this.lastToken ?? "A".repeat(43);
      case "invite:last":
        return this.lastInvitation ?? this.missing;
      case "lease:submit":
        await this.fourEyesFor(this.owner);
        return this.leaseIn(this.owner, this.ownInvoices[1]!, "proposed", false, LANE_PURPOSE, true);
      case "approval:own":
        return this.pending(this.owner, this.ownInvoices[1]!);
      // The teammate's request, on their own invoice: the owner, an admin, approves or declines it.
      case "approval:member":
        return this.pending(this.member, this.member.invoice);
      // The approver's request, on their own invoice: the owner (an admin) decides it, never the approver.
      case "approval:approver":
        return this.pending(this.approver, this.approver.invoice);
      // The approver's proposed lease of the lane's purpose, not yet submitted (their `lease:submit`).
      case "lease:submit-approver":
        await this.fourEyesFor(this.approver);
        return this.leaseIn(this.approver, this.approver.invoice, "proposed", false, LANE_PURPOSE, true);
      case "approval:other":
        return this.pending(this.other, this.otherInvoice);
      case "approval:decided": {
        const orgId = (await this.orgs()).get(this.owner.id)!;
        const [row] = await query<{ id: string; proposal_sha256: string }>(
          this.db,
          sql`select id, proposal_sha256 from approval_request where org_id = ${orgId} and decision is not null
              order by decided_at desc, id limit 1`,
        );
        if (row) {
          this.lastHash = row.proposal_sha256;
          return row.id;
        }
        const id = await this.pending(this.member, this.member.invoice);
        const declined = await declineRequest(this.db, { id: this.owner.id, sessionId: this.owner.sessionId }, id, { comment: "fixture" });
        if (!declined.ok) throw new Error(`fixture request not declined: ${declined.code}`);
        return id;
      }
      case "hash:last":
        return this.lastHash;
      case "user:joined": {
        const [row] = await query<{ user_id: string }>(
          this.db,
          sql`select user_id from membership where user_id not in (${this.owner.id}, ${this.other.id}, ${this.member.id}, ${this.approver.id})
              order by created_at desc, user_id limit 1`,
        );
        return row?.user_id ?? this.missing;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Counting

/** Statuses per route, printed at the end of a file. */
export class Histogram {
  private readonly byRoute = new Map<string, Map<string, number>>();
  total = 0;
  add(route: string, status: number | string) {
    this.total++;
    const row = this.byRoute.get(route) ?? new Map<string, number>();
    row.set(String(status), (row.get(String(status)) ?? 0) + 1);
    this.byRoute.set(route, row);
  }
  toString() {
    const lines = [...this.byRoute.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([route, row]) => {
        const n = [...row.values()].reduce((a, b) => a + b, 0);
        const cells = [...row.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([s, c]) => `${s}×${c}`);
        return `  ${route.padEnd(34)} ${String(n).padStart(5)}  ${cells.join(" ")}`;
      });
    return lines.join("\n");
  }
}

// ---------------------------------------------------------------------------------------
// The contract: which writes each API call may make

export type ApiRoute =
  | "session"
  | "invoices"
  | "export"
  | "invoice"
  | "status"
  | "leases"
  | "lease"
  | "apply"
  | "cancel"
  | "events"
  | "members"
  | "member"
  | "invitations"
  | "invitation"
  | "invitationLink"
  | "import"
  | "purposes"
  | "budget"
  | "usage"
  | "changes"
  | "policy"
  | "approvals"
  | "approval"
  | "submit"
  | "approve"
  | "decline";
export const AUTHED: Record<ApiRoute, boolean> = {
  session: true, // GET and DELETE; POST is sign-in
  invoices: true,
  export: true,
  invoice: true,
  status: true,
  leases: true,
  lease: true,
  apply: true,
  cancel: true,
  events: true,
  members: true,
  member: true,
  invitations: true,
  invitation: true,
  import: true,
  purposes: true,
  budget: true,
  usage: true,
  changes: true,
  policy: true,
  approvals: true,
  approval: true,
  submit: true,
  approve: true,
  decline: true,
  // The invitation link's routes are open without a session by nature (a 201 there signs someone up).
  invitationLink: false,
};

export type CallContext = {
  route: ApiRoute;
  method: string;
  status: number;
  /** The answer's JSON, if any. */
  answer: any;
  /** The actor whose live session the request's cookie names, if it names one. */
  actor: { id: string; sessionId: string } | null;
  /** The path's id as the handler saw it. */
  param: string;
  /** The request body as the server parsed it, when it was JSON. */
  input: any;
  /** Sign-in: the user the email names, if it names one of ours. */
  emailUser?: string | null;
  /** The actor's organization, when the suite knows it (otherwise any). */
  actorOrg?: string | null;
  /** The actor's role in their organization, when the suite knows it. */
  actorRole?: string | null;
  /** The answer's Retry-After header, when the suite read it (null: none). */
  retryAfter?: string | null;
  /** The purposes under `four_eyes` in the actor's organization before the call, when the suite read them. */
  fourEyes?: readonly string[] | null;
  /** The approval request the path's id names, read before the call (null: none). */
  approval?: { lease_id: string; requester_id: string; org_id: string } | null;
};

/** The roles that approve (docs/contract.md, who may: admin and approver). */
const APPROVING_ROLES = ["admin", "approver"];

/** The sha256 (hex) of a proposal's RFC 8785 canonical JSON, as the contract defines `proposal_sha256`. */
export const sha256OfProposal = (proposal: unknown) =>
  createHash("sha256")
    .update(canonicalize(proposal ?? null) ?? "null", "utf8")
    .digest("hex");

/** The caps of PUT /api/org/budget, in the order the budget label lists them. */
const CAPS = ["organization_daily_cents", "organization_monthly_cents", "member_daily_cents", "member_monthly_cents"];

/**
 * What an apply of lease `id` by actor `a` may write, from the lease row's own write (its
 * purpose, its proposal) and the body's `lines`: its purpose's target on the lease's invoice and
 * nothing else (the summary; the review notes; the category of exactly the accepted lines, or of
 * every proposed line when none are named, each to the proposal's account), the version once, the
 * `applied` event, and the carry of the invoice's other leases in flight made against the version
 * it replaced. With `approverId`, the write is an approval's (0078): the receipt names the lane and
 * the approver. Returns the labels it accounts for and what is wrong; the caller matches the rest.
 */
export function applyWrites(
  id: string,
  a: string,
  writes: Write[],
  accept: unknown,
  answer: any,
  approverId?: string,
): { expected: string[]; carried: string[]; problems: string[] } {
  const problems: string[] = [];
  const leaseWrite = writes.find((w) => w.tbl === "inference_lease" && label(w).startsWith(`apply:${id}:${a}:`));
  if (!leaseWrite) return { expected: [`apply:${id}:${a}:*:*`], carried: [], problems };
  const { invoice_id: inv, purpose, proposal } = leaseWrite.old as { invoice_id: string; purpose: Purpose; proposal: unknown };
  const output = purposeOf(purpose).output.safeParse(proposal);
  if (!output.success) return { expected: [label(leaseWrite)], carried: [], problems: [`applied a proposal its schema refuses`] };
  const invoiceWrite = writes.find((w) => w.tbl === "invoice" && w.op === "UPDATE" && w.old.id === inv);
  const from = invoiceWrite?.old.version;
  const expected = [label(leaseWrite), `event:applied:${id}`];
  let written: string[] = [];
  if (purpose === "summarize_invoice") {
    const want = (output.data as { summary: string }).summary;
    expected.push(`summary:${inv}:${a}`);
    written = ["summary"];
    if (invoiceWrite && invoiceWrite.new.summary !== want)
      problems.push(`wrote summary ${JSON.stringify(invoiceWrite.new.summary)}, proposed ${JSON.stringify(want)}`);
  } else if (purpose === "review_invoice") {
    const want = (output.data as { findings: unknown[] }).findings;
    expected.push(`review:${inv}:${a}`);
    written = ["review_notes"];
    // jsonb keeps its own key order: compared as values.
    if (invoiceWrite && !isDeepStrictEqual(invoiceWrite.new.review_notes, want))
      problems.push(`wrote review notes that are not the proposal's`);
  } else {
    const proposed = (output.data as { lines: { line_id: string; category: string }[] }).lines;
    // An id is the same line in any letter case (the contract), so `[ID, id]` names one line.
    const sameId = (l: string) => (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(l) ? l.toLowerCase() : l);
    const lines = Array.isArray(accept) ? [...new Set((accept as string[]).map(sameId))] : proposed.map((l) => l.line_id);
    expected.push(`bump:${inv}:${a}`, ...lines.map((l) => `category:${inv}:${l}`));
    written = lines;
    for (const w of writes.filter((w) => w.tbl === "invoice_line" && w.op === "UPDATE")) {
      const want = proposed.find((l) => l.line_id === w.old.id)?.category;
      if (w.new.category !== want) problems.push(`line ${w.old.id} categorized ${w.new.category}, proposed ${want}`);
    }
  }
  // Its receipt (0079), under self or by the approver, naming the keys written.
  expected.push(approverId ? `receipt:${id}:${a}:${inv}:four_eyes:${approverId}` : `receipt:${id}:${a}:${inv}:self:none`);
  const receipt = writes.find((w) => w.tbl === "lease_receipt" && w.op === "INSERT" && w.new.lease_id === id);
  if (receipt && !same([...receipt.new.written_keys].sort(), [...written].sort()))
    problems.push(`receipt names ${JSON.stringify(receipt.new.written_keys)} written, expected ${JSON.stringify(written)}`);
  if (answer?.status === "applied" && !same([...(answer.written ?? [])].sort(), [...written].sort()))
    problems.push(`answered written ${JSON.stringify(answer.written)}, expected ${JSON.stringify(written)}`);
  // The carried leases: the invoice's others, from the version this apply replaced to the next.
  const carried = writes
    .map(label)
    .filter((l) => l.startsWith("carry:"))
    .filter((l) => {
      const [, lease, on, version] = l.split(":");
      return lease !== id && on === inv && Number(version) === from;
    });
  return { expected, carried, problems };
}

/**
 * Checks one API call's writes against the contract. Returns what is wrong (empty when all is
 * well): a 5xx, a success without a session, or any write the call may not make.
 */
export function apiViolations(ctx: CallContext, writes: Write[], opts: { background?: boolean } = {}): string[] {
  const problems: string[] = [];
  const { route, method, status, answer, actor } = ctx;
  if (status >= 500) problems.push(`status ${status} ${JSON.stringify(answer)}`);
  const signIn = route === "session" && method === "POST";
  if (!signIn && AUTHED[route] && !actor && status >= 200 && status < 300) problems.push(`status ${status} without a live session`);

  let labels = withoutAllowedSideWrites(writes.map(label), {
    background: opts.background,
    rateLimit: signIn || route === "invitationLink",
  });
  const a = actor?.id ?? "no-actor";
  const s = actor?.sessionId ?? "no-session";
  const id = ctx.param.toLowerCase();
  const org = ctx.actorOrg ?? "*";
  let allowed: string[][] = [[]];
  if (signIn && status === 200) allowed = [[`session:${answer?.actor?.id}`]];
  else if (route === "session" && method === "DELETE" && status === 200) {
    const revoked: string[] = Array.isArray(answer?.revoked) ? answer.revoked : [];
    allowed = [[`signout:${s}:${a}`, ...revoked.flatMap((l) => [`revoke:${l}:${a}:${s}`, `event:revoked:${l}`])]];
  } else if (route === "invoice" && method === "PATCH" && status === 200) {
    // An edit withdraws the leases in flight on that invoice, with their events (decision 0013);
    // one that sent no field still bumps the version.
    labels = withoutWithdrawals(labels, id);
    allowed = [[`edit:${id}:${a}`], [`bump:${id}:${a}`]];
  } else if (route === "status" && method === "POST" && status === 200) {
    // A status change is an edit of the invoice (version + 1) and withdraws the lease in flight;
    // the same status again writes nothing.
    labels = withoutWithdrawals(labels, id);
    allowed = [[], [`edit:${id}:${a}`]];
  } else if (route === "invoices" && method === "POST" && status === 201) {
    // The invoice, owned by the actor (the fuzzer names no other member), and each of its lines.
    const lines = Array.isArray(answer?.lines) ? answer.lines.length : 0;
    allowed = [[`create:${answer?.id}:${a}`, ...Array.from({ length: lines }, () => `line:${answer?.id}`)]];
  } else if (route === "leases" && method === "POST" && status === 201) {
    const invoiceId = String(ctx.input?.invoice_id ?? "").toLowerCase();
    allowed = [[`open:${answer?.lease_id}:${invoiceId}:${a}:${s}:${ctx.input?.purpose}`, `event:opened:${answer?.lease_id}`]];
  } else if (route === "leases" && method === "POST" && status === 429) {
    // Over a cap: no lease, nothing dispatched, and when to try again.
    if (answer?.detail !== "budget_exhausted") problems.push(`429 ${JSON.stringify(answer)}`);
    if (ctx.retryAfter !== undefined && !/^[1-9][0-9]*$/.test(ctx.retryAfter ?? ""))
      problems.push(`429 with Retry-After ${JSON.stringify(ctx.retryAfter)}`);
  } else if (route === "apply" && method === "POST") {
    if (status === 200) {
      const applied = applyWrites(id, a, writes, ctx.input?.lines, answer);
      problems.push(...applied.problems);
      // Under four_eyes only an approval writes the invoice (0078).
      const purpose = writes
        .map(label)
        .find((l) => l.startsWith(`apply:${id}:`))
        ?.split(":")[4];
      if (purpose && ctx.fourEyes?.includes(purpose)) problems.push(`applied a ${purpose} lease under four_eyes`);
      labels = labels.filter((l) => !applied.carried.includes(l));
      allowed = [applied.expected];
    } else if (status === 422 && answer?.detail === "invalid_lines") allowed = [[`event:apply_refused:${id}`]];
    else if (status === 409 && answer?.detail === "invoice_changed")
      allowed = [
        [`fence:${id}:${a}:*`, `event:invoice_changed:${id}`],
        // A lease an edit already withdrew (0013) answers the same, with only the refusal event.
        [`event:apply_refused:${id}`],
      ];
    else if (status === 409 && answer?.detail === "proposal_unusable") allowed = [[`unusable:${id}:${a}`, `event:proposal_unusable:${id}`]];
    else if (status === 409) allowed = [[`event:apply_refused:${id}`]];
  } else if (route === "lease" && status === 400) {
    // invalid_cursor is decided before the read: not even the expiry a read records.
    allowed = [[]];
  } else if (route === "cancel" && method === "POST") {
    if (status === 200) allowed = [[`cancel:${id}:${a}`, `event:cancelled:${id}`]];
    else if (status === 409) allowed = [[`event:cancel_refused:${id}`]];
  } else if (route === "submit" && method === "POST") {
    if (status === 200) {
      // A new request: the lease's own actor's, from this session, in their organization, of a
      // proposed lease (its deadline moved to the window's end) whose purpose is under four_eyes. Or
      // a retry: the request as it stands, nothing written.
      allowed = [[], [`window:${id}:${a}`, `submit:*:${id}:${a}:${s}:${org}:*`, `event:submitted:${id}`]];
      const made = writes.find((w) => w.tbl === "approval_request" && w.op === "INSERT");
      const moved = writes.find((w) => w.tbl === "inference_lease" && label(w) === `window:${id}:${a}`);
      if (made && moved) {
        const n = made.new;
        if (ctx.fourEyes && !ctx.fourEyes.includes(n.purpose)) problems.push(`submitted a ${n.purpose} lease not under four_eyes`);
        if (n.purpose !== moved.old.purpose || n.invoice_id !== moved.old.invoice_id || n.invoice_version !== moved.old.invoice_version)
          problems.push(`request froze ${JSON.stringify([n.purpose, n.invoice_id, n.invoice_version])}, not its lease's`);
        if (n.proposal_sha256 !== sha256OfProposal(moved.old.proposal)) problems.push(`request's hash is not its proposal's`);
        if (Date.parse(n.expires_at) !== Date.parse(moved.new.deadline_at)) problems.push(`request expires_at is not the lease's deadline`);
        if ((n.accept === null) !== !Array.isArray(ctx.input?.lines)) problems.push(`request accept ${JSON.stringify(n.accept)}`);
        if (answer?.approval_id !== n.id || answer?.proposal_sha256 !== n.proposal_sha256)
          problems.push(`answered ${JSON.stringify(answer)} for request ${n.id}`);
      } else if (answer?.lease_id?.toLowerCase() !== id) problems.push(`answered the request of ${answer?.lease_id} for ${id}`);
    } else if (status === 409 && answer?.detail === "invoice_changed")
      // Closed now by the fence, or withdrawn earlier by an edit.
      allowed = [[`fence:${id}:${a}:*`, `event:invoice_changed:${id}`], []];
    else if (status === 409 && answer?.detail === "proposal_unusable") allowed = [[`unusable:${id}:${a}`, `event:proposal_unusable:${id}`]];
  } else if ((route === "approve" || route === "decline") && method === "POST") {
    // Only the request the id names, decided once by this actor in this session, in their
    // organization (the label: never the requester); nothing else but what the decision writes.
    const decision = route === "approve" ? "approved" : "declined";
    const decided = writes.find((w) => w.tbl === "approval_request" && w.op === "UPDATE");
    const lease = ctx.approval?.lease_id ?? decided?.old.lease_id ?? "no-lease";
    const requester = ctx.approval?.requester_id ?? decided?.old.requester_id ?? "no-requester";
    const decide = `decide:${id}:${decision}:${a}:${s}:${org}`;
    if (status === 200) {
      if (!APPROVING_ROLES.includes(ctx.actorRole ?? "member")) problems.push(`a ${ctx.actorRole} ${route}d`);
      if (answer?.lease_id !== lease || answer?.approval_id !== id) problems.push(`answered ${JSON.stringify(answer)}`);
      if (route === "approve") {
        // The invoice written as the lease's apply would, with the receipt naming the approver,
        // and only for the hash the approver sent, which is the request's and its proposal's.
        const applied = applyWrites(lease, requester, writes, decided?.old.accept ?? undefined, null, a);
        problems.push(...applied.problems);
        labels = labels.filter((l) => !applied.carried.includes(l));
        allowed = [[decide, ...applied.expected]];
        const proposal = writes.find((w) => w.tbl === "inference_lease" && label(w).startsWith(`apply:${lease}:`))?.old.proposal;
        const sent = String(ctx.input?.proposal_sha256 ?? "").toLowerCase();
        if (decided && (sent !== decided.old.proposal_sha256 || sha256OfProposal(proposal) !== decided.old.proposal_sha256))
          problems.push(`approved with hash ${sent} a request of ${decided.old.proposal_sha256}`);
      } else {
        allowed = [[decide, `decline:${lease}:${requester}`, `event:declined:${lease}`]];
      }
      const comment = typeof ctx.input?.comment === "string" ? ctx.input.comment.trim() : null;
      if (decided && decided.new.comment !== comment) problems.push(`wrote comment ${JSON.stringify(decided.new.comment)}`);
    } else if (route === "approve" && status === 409 && answer?.detail === "invoice_changed")
      // Approve's fence closes the lease (the invoice moved on since the submit), or an edit did earlier.
      allowed = [[`fence:${lease}:${requester}:*`, `event:invoice_changed:${lease}`], []];
  } else if (route === "budget" && method === "PUT" && status === 200) {
    // The actor's organization's four caps as sent, by the actor (an admin: a member's is 403 and writes nothing).
    allowed = [[`budget:${org}:${a}:${CAPS.map((k) => String(ctx.input?.[k])).join(":")}`]];
    if (
      !same(
        CAPS.map((k) => answer?.[k]),
        CAPS.map((k) => ctx.input?.[k]),
      )
    )
      problems.push(`answered caps ${JSON.stringify(answer)}`);
  } else if (route === "policy" && method === "PUT" && status === 200) {
    // The actor's organization's policy for that purpose, as sent, by the actor (an admin: anyone else's is 403).
    allowed = [[`policy:${org}:${id}:${a}:${ctx.input?.apply}:${ctx.input?.review_hours}`]];
    if (answer?.purpose !== id || answer?.apply !== ctx.input?.apply || answer?.review_hours !== ctx.input?.review_hours)
      problems.push(`answered policy ${JSON.stringify(answer)}`);
  } else if (route === "member" && method === "PATCH" && status === 200) {
    // That membership's role, to the role sent (the same again is still a write of it), and nothing else.
    allowed = [[`member-role:${org}:${id}:*->${ctx.input?.role}`]];
  } else if (route === "member" && method === "DELETE" && status === 200) {
    // The membership goes, every session of the member in the organization ends (any number),
    // and each of their leases in flight there closes with its event, as the answer lists.
    labels = labels.filter((l) => !matchesOneOf([l], [[`signout:*:${id}`]]));
    const revoked: string[] = Array.isArray(answer?.revoked) ? answer.revoked : [];
    allowed = [
      [`member-remove:${org}:${id}`, `user-removed:${id}`, ...revoked.flatMap((l) => [`revoke:${l}:${id}:*`, `event:revoked:${l}`])],
    ];
  } else if (route === "invitations" && method === "POST" && status === 201) {
    // One invitation of the actor's organization, by the actor, to the email as normalized and
    // the role sent; an earlier pending one of that email there is revoked (one link at a time).
    const email = typeof ctx.input?.email === "string" ? ctx.input.email.trim().toLowerCase() : "?";
    const made = `invite:${answer?.id}:${org}:${email}:${ctx.input?.role}:${a}`;
    allowed = [[made], [made, `invite-revoke:*:${org}:${email}`]];
  } else if (route === "invitation" && method === "DELETE" && status === 200) {
    allowed = [[`invite-revoke:${id}:${org}:*`]];
  } else if (route === "invitationLink" && method === "POST" && status === 201) {
    // The invitation the token names is consumed; its email becomes a user, with a membership
    // of its organization in its role, and a session.
    // Or, for an email with an account in no organization (a removed member), that user back:
    // removed_at cleared, the invitation accepted by them in one write, the membership, a session.
    const user = answer?.actor?.id;
    allowed = [
      [`user-new:${user}:*`, `member-join:*:${user}:*`, `invite-accept:*:*:*:*:*`, `invite-accepted-by:*:${user}`, `session:${user}`],
      [`user-back:${user}`, `member-join:*:${user}:*`, `invite-accept:*:*:*:*:*|${user}`, `session:${user}`],
    ];
    const parts = (prefix: string) =>
      labels
        .find((l) => l.startsWith(prefix))
        ?.split("|")[0]!
        .split(":") ?? [];
    const [, invId, invOrg, invEmail, invRole, invHash] = parts("invite-accept:");
    const [, joinOrg, , joinRole] = parts("member-join:");
    const back = labels.some((l) => l === `user-back:${user}`);
    const [, , userEmail] = back ? [null, null, answer?.actor?.email] : parts("user-new:");
    const [, byId] = back ? [null, invId] : parts("invite-accepted-by:");
    const token = createHash("sha256").update(ctx.param).digest("hex");
    if (invHash !== token) problems.push(`accepted an invitation the token ${JSON.stringify(ctx.param)} does not name`);
    if (!same([joinOrg, joinRole, userEmail, byId], [invOrg, invRole, invEmail, invId]))
      problems.push(
        `joined ${JSON.stringify([joinOrg, joinRole, userEmail])} by invitation ${JSON.stringify([invOrg, invRole, invEmail])}`,
      );
  } else if (route === "import" && method === "POST" && status === 200) {
    // `created` invoices of the actor, each with at least one line, and no line of any other.
    const created = labels.filter((l) => matchesOneOf([l], [[`create:*:${a}`]])).map((l) => l.split(":")[1]!);
    const lines = labels.filter((l) => l.startsWith("line:"));
    const others = labels.filter((l) => !lines.includes(l) && !created.some((c) => l === `create:${c}:${a}`));
    if (created.length !== answer?.created) problems.push(`imported ${created.length} invoices, answered created ${answer?.created}`);
    const lineless = created.filter((c) => !lines.includes(`line:${c}`));
    const stray = lines.filter((l) => !created.includes(l.slice("line:".length)));
    if (lineless.length || stray.length || others.length) problems.push(`import wrote ${JSON.stringify({ lineless, stray, others })}`);
    allowed = [labels];
  }
  if (!matchesOneOf(labels, allowed))
    problems.push(`writes ${JSON.stringify(labels)} where the contract allows ${JSON.stringify(allowed)}`);

  // The organization's budget and policies are an admin's to set (an approver's and a member's PUT is 403).
  if ((route === "budget" || route === "policy") && method === "PUT" && status === 200 && ctx.actorRole && ctx.actorRole !== "admin")
    problems.push(`a ${ctx.actorRole} set the ${route}`);

  // What the reads answer: the registry's purposes without their prompts, a member's usage without the organization's.
  if (route === "purposes" && status === 200) {
    const names = Array.isArray(answer) ? answer.map((p: any) => p?.name) : null;
    if (!names || names.some((n) => !isPurpose(n)) || answer.some((p: any) => "instructions" in p || "prompt" in p))
      problems.push(`purposes answered ${JSON.stringify(answer).slice(0, 200)}`);
  }
  if (
    route === "usage" &&
    status === 200 &&
    ctx.actorRole &&
    ctx.actorRole !== "admin" &&
    ("organization" in answer || "members" in answer)
  )
    problems.push(`a ${ctx.actorRole}'s usage shows the organization's`);
  if (route === "changes" && status === 200 && answer?.lease_id?.toLowerCase() !== id)
    problems.push(`changes of ${answer?.lease_id} for ${id}`);

  // The lane's reads: the queue holds none of the actor's own requests and is an approver's; one
  // request is its requester's or an approver's of its organization.
  if (route === "approvals" && method === "GET" && status === 200) {
    if (!APPROVING_ROLES.includes(ctx.actorRole ?? "admin")) problems.push(`a ${ctx.actorRole} read the queue`);
    if (!Array.isArray(answer) || answer.some((r: any) => r?.requester?.id === a))
      problems.push(`queue answered ${JSON.stringify(answer)}`);
  }
  if (route === "approval" && status === 200) {
    if (answer?.id !== id) problems.push(`request ${answer?.id} for ${id}`);
    if (ctx.actorOrg && ctx.approval && ctx.approval.org_id !== ctx.actorOrg) problems.push(`another organization's request read`);
    if (!APPROVING_ROLES.includes(ctx.actorRole ?? "admin") && answer?.requester?.id !== a)
      problems.push(`a ${ctx.actorRole} read another's request`);
  }
  // An edit writes exactly what was sent, trimmed, and nothing else.
  const edit = writes.find((w) => w.tbl === "invoice" && label(w).startsWith("edit:"));
  if (edit && route === "invoice") {
    for (const k of ["number", "counterparty", "issued_on", "due_on"]) {
      const sent = ctx.input?.[k];
      const want = sent === undefined ? edit.old[k] : typeof sent === "string" ? sent.trim() : sent;
      if (!same(edit.new[k], want)) problems.push(`edit wrote ${k}=${JSON.stringify(edit.new[k])}, sent ${JSON.stringify(sent)}`);
    }
  }
  // A status change writes the status sent and its day (none but for paid), and no edited field.
  if (edit && route === "status") {
    const paidOn = ctx.input?.status === "paid" ? ctx.input?.paid_on : null;
    if (!same([edit.new.status, edit.new.paid_on], [ctx.input?.status, paidOn]))
      problems.push(`status change wrote ${JSON.stringify([edit.new.status, edit.new.paid_on])}, sent ${JSON.stringify(ctx.input)}`);
    for (const k of ["number", "counterparty", "issued_on", "due_on", "summary"])
      if (!same(edit.new[k], edit.old[k])) problems.push(`status change wrote ${k}`);
  }
  return problems;
}
