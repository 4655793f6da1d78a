// The audit chain's rule, with no database (docs/decisions/0080): an organization's entries, in
// seq order from the genesis hash, each holding the hash of its canonical content and of the one
// before. What `npm run audit:verify` runs over the database's rows, and what an auditor runs over
// an export's (checkExport), with sha256 and `canonicalize` alone.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

export type ChainEntry = {
  seq: number;
  /** UTC, to the microsecond: `2026-12-04T16:55:26.303445Z`, as the content says it. */
  at: string;
  source: string;
  source_key: string;
  op: string;
  actor_id: string | null;
  canonical: string;
  content_sha256: string;
  prev_sha256: string;
  entry_sha256: string;
};

/** What is wrong, at the first entry where something is. */
export type ChainFailureKind =
  /** An entry is missing (seq names it): deleted, or the rest renumbered. */
  | "deleted"
  /** An entry's content or hashes do not add up, or its columns do not say what its content says. */
  | "changed"
  /** The content is not RFC 8785 text: a writer's bug, or a careful forgery. */
  | "not_canonical"
  /** The entry does not follow the one before: moved, inserted, or an earlier entry rewritten with its hashes. */
  | "out_of_order"
  /** Entries past the head: appended by hand. */
  | "inserted"
  /** An audited row no longer says what its latest entry says (or is gone). */
  | "source_changed"
  /** An audited row with no entry. */
  | "unrecorded";

export type ChainFailure = { kind: ChainFailureKind; seq: number | null; source: string | null; key: string | null; detail: string };

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** Where an organization's chain starts, so that no chain can be spliced into another's. */
export const genesisSha256 = (orgId: string) => sha256(`claimcheck-audit:${orgId}`);

/** An entry's hash: sha256 of `prev:seq:content`. */
export const entrySha256 = (prev: string, seq: number, content: string) => sha256(`${prev}:${seq}:${content}`);

/**
 * Walks entries in order from `from` (the seq and hash the first entry must follow) and stops at
 * the first failure. Feed it page by page: `state` carries on from one call to the next.
 */
export class ChainWalker {
  next: number;
  prev: string;
  count = 0;
  failure: ChainFailure | null = null;
  constructor(from: { seq: number; prev: string }) {
    this.next = from.seq + 1;
    this.prev = from.prev;
  }

  /** False once a failure is found. */
  push(e: ChainEntry): boolean {
    if (this.failure) return false;
    const fail = (kind: ChainFailureKind, detail: string, seq = e.seq) => {
      this.failure = { kind, seq, source: seq === e.seq ? e.source : null, key: seq === e.seq ? e.source_key : null, detail };
      return false;
    };
    if (e.seq > this.next) return fail("deleted", `entry ${this.next} is missing (the next is ${e.seq})`, this.next);
    if (e.seq < this.next) return fail("out_of_order", `entry ${e.seq} comes after entry ${this.next - 1}`);
    if (sha256(e.canonical) !== e.content_sha256) return fail("changed", "its content does not hash to content_sha256");
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(e.canonical);
    } catch {
      return fail("not_canonical", "its content is not JSON");
    }
    if (canonicalize(parsed) !== e.canonical) return fail("not_canonical", "its content is not RFC 8785 text");
    const said = { source: parsed.source, source_key: parsed.key, op: parsed.op, actor_id: parsed.actor_id ?? null };
    for (const [k, v] of Object.entries(said)) {
      if (e[k as keyof typeof said] !== v) return fail("changed", `its ${k} is not what its content says`);
    }
    if (parsed.at !== e.at) return fail("changed", "its at is not what its content says");
    if (e.prev_sha256 !== this.prev) return fail("out_of_order", "its prev_sha256 is not the hash of the entry before");
    if (e.entry_sha256 !== entrySha256(e.prev_sha256, e.seq, e.content_sha256)) return fail("changed", "its entry_sha256 does not add up");
    this.prev = e.entry_sha256;
    this.next = e.seq + 1;
    this.count++;
    return true;
  }

  /** After the last entry: the head must be where the walk ended. */
  end(head: { seq: number; entry_sha256: string } | null): ChainFailure | null {
    if (this.failure) return this.failure;
    const last = this.next - 1;
    if (!head) {
      if (this.count > 0) this.failure = { kind: "changed", seq: null, source: null, key: null, detail: "the chain's head is missing" };
    } else if (head.seq > last) {
      this.failure = { kind: "deleted", seq: last + 1, source: null, key: null, detail: `entries ${last + 1} to ${head.seq} are missing` };
    } else if (head.seq < last) {
      this.failure = { kind: "inserted", seq: head.seq + 1, source: null, key: null, detail: `entries past the head (${head.seq})` };
    } else if (head.entry_sha256 !== this.prev) {
      this.failure = { kind: "changed", seq: last, source: null, key: null, detail: "the head's hash is not the last entry's" };
    }
    return this.failure;
  }
}

/** An export as GET /api/audit/export?format=json writes it. */
export type AuditExportDocument = {
  org_id: string;
  genesis_sha256: string;
  from: string;
  to: string;
  entries: ChainEntry[];
  head: { seq: number; entry_sha256: string };
};

/**
 * The offline check of an export: its genesis is its organization's, its entries follow one
 * another from the first one's prev_sha256 (or the genesis, for a slice from the start), and a
 * slice that reaches the head ends on its hash. Says nothing of entries outside the slice.
 */
export function checkExport(doc: AuditExportDocument): { ok: true; entries: number } | { ok: false; failure: ChainFailure } {
  const fail = (detail: string) => ({
    ok: false as const,
    failure: { kind: "changed" as const, seq: null, source: null, key: null, detail },
  });
  if (doc.genesis_sha256 !== genesisSha256(doc.org_id)) return fail("the genesis hash is not the organization's");
  const [first] = doc.entries;
  if (!first) return { ok: true, entries: 0 };
  if (first.seq === 1 && first.prev_sha256 !== doc.genesis_sha256) {
    return {
      ok: false,
      failure: { kind: "out_of_order", seq: 1, source: first.source, key: first.source_key, detail: "entry 1 does not follow the genesis" },
    };
  }
  const walk = new ChainWalker({ seq: first.seq - 1, prev: first.prev_sha256 });
  for (const e of doc.entries) if (!walk.push(e)) return { ok: false, failure: walk.failure! };
  const last = doc.entries[doc.entries.length - 1]!;
  if (last.seq === doc.head.seq && last.entry_sha256 !== doc.head.entry_sha256) return fail("the last entry's hash is not the head's");
  if (last.seq > doc.head.seq) return fail("entries past the export's head");
  return { ok: true, entries: walk.count };
}
