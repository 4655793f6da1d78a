import "server-only";
// `npm run audit:verify` (tools/audit-verify.ts): each organization's chain walked from its
// genesis, 1,000 entries a page, then its audited rows held to their latest entries
// (docs/decisions/0080). Names the first failure of each organization and stops there.
// `from` walks on from a mark an earlier walk left instead (what the model test does after
// every step): only the entries since, and only the rows they name.
import canonicalize from "canonicalize";
import { sql } from "drizzle-orm";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { ChainWalker, genesisSha256, type ChainEntry, type ChainFailure } from "./chain";

/** Where a clean walk ended (the head's seq and hash; seq 0 with the genesis hash before any entry). */
export type ChainMark = { seq: number; entry_sha256: string };

/** `entries`: how many this walk hashed; `mark`: set when it found nothing wrong, a `from` for the next. */
export type ChainReport = { orgId: string; entries: number; head: string | null; failure: ChainFailure | null; mark?: ChainMark };

const PAGE = 1000;

/**
 * The columns of an entry as chain.ts reads them (`at` as the content writes it). `seq` comes out
 * as text, so a query ordering by it must name `audit_entry.seq` (a bare `seq` would sort the text).
 */
export const ENTRY_COLUMNS = sql.raw(`seq::text as seq, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, source,
  source_key, op, actor_id::text as actor_id, canonical, content_sha256, prev_sha256, entry_sha256`);

export const entryOf = (r: ChainEntry): ChainEntry => ({ ...r, seq: Number(r.seq) });

/** Every organization that has a chain (a head or an entry), or the one asked for. */
async function organizations(db: Db, orgId?: string): Promise<string[]> {
  if (orgId) return [orgId];
  const rows = rowsOf<{ org_id: string }>(
    await db.execute(
      sql`select org_id::text as org_id from audit_head union select distinct org_id::text from audit_entry union select id::text from organization order by 1`,
    ),
  );
  return rows.map((r) => r.org_id);
}

/**
 * Verifies each organization's chain (all of them, or `orgId`'s); `sources: false` skips the
 * audited rows. `from` (with `orgId`): a mark of an earlier clean walk; the entry it names must
 * still be there with its hash, and the walk goes on from it, holding only the rows its new entries
 * name to them. What it cannot see is what lies behind the mark (an earlier entry rewritten with
 * the mark's own hash kept is no longer reachable that way) or rows no new entry names (edited
 * behind the triggers): a full walk, without `from`, sees both.
 */
export async function verifyChain(db: Db, opts: { orgId?: string; sources?: boolean; from?: ChainMark } = {}): Promise<ChainReport[]> {
  if (opts.from && !opts.orgId) throw new Error("verifyChain: `from` is one organization's mark and needs `orgId`");
  const reports: ChainReport[] = [];
  for (const orgId of await organizations(db, opts.orgId)) {
    // One snapshot per organization: on a live database a commit between the walk and the rows
    // (an entry appended with its row) would otherwise read as a row its entries do not explain.
    reports.push(
      await db.transaction((tx) => verifyOrganization(tx, orgId, opts.sources ?? true, opts.from), {
        isolationLevel: "repeatable read",
        accessMode: "read only",
      }),
    );
  }
  return reports;
}

async function verifyOrganization(db: Db | Tx, orgId: string, sources: boolean, from?: ChainMark): Promise<ChainReport> {
  let walk = new ChainWalker({ seq: 0, prev: genesisSha256(orgId) });
  if (from && from.seq > 0) {
    // The mark's entry, still there with the hash it was walked to, and still adding up (walked
    // again from its own prev_sha256); the walk goes on from it.
    const [marked] = rowsOf<ChainEntry>(
      await db.execute(sql`select ${ENTRY_COLUMNS} from audit_entry where org_id = ${orgId} and seq = ${from.seq}`),
    ).map(entryOf);
    const lost = (kind: "deleted" | "changed", detail: string): ChainReport => ({
      orgId,
      entries: 0,
      head: null,
      failure: { kind, seq: from.seq, source: marked?.source ?? null, key: marked?.source_key ?? null, detail },
    });
    if (!marked) return lost("deleted", "the entry last verified is gone");
    if (marked.entry_sha256 !== from.entry_sha256) return lost("changed", "the entry last verified no longer has the hash it had");
    walk = new ChainWalker({ seq: from.seq - 1, prev: marked.prev_sha256 });
    walk.push(marked);
  }
  let after = walk.next - 1;
  for (;;) {
    if (walk.failure) break;
    const page = rowsOf<ChainEntry>(
      await db.execute(
        sql`select ${ENTRY_COLUMNS} from audit_entry where org_id = ${orgId} and seq > ${after} order by audit_entry.seq limit ${PAGE}`,
      ),
    ).map(entryOf);
    for (const e of page) if (!walk.push(e)) break;
    if (walk.failure || page.length < PAGE) break;
    after = page[page.length - 1]!.seq;
  }
  const [head] = rowsOf<{ seq: string; entry_sha256: string }>(
    await db.execute(sql`select seq::text as seq, entry_sha256 from audit_head where org_id = ${orgId}`),
  );
  const ended = head ? { seq: Number(head.seq), entry_sha256: head.entry_sha256 } : null;
  // A head that fell back behind the mark is entries deleted from the end: ChainWalker.end says so.
  const failure = walk.end(ended) ?? (sources ? await checkSources(db, orgId, from?.seq) : null);
  const mark = failure ? undefined : (ended ?? { seq: 0, entry_sha256: genesisSha256(orgId) });
  return { orgId, entries: walk.count, head: head?.entry_sha256 ?? null, failure, ...(mark ? { mark } : {}) };
}

/**
 * The audited rows (every table a trigger feeds into the chain, audit_sources()) against their
 * latest entries: a row that says something else, or is gone, is `source_changed`, named by that
 * entry; a row with no entry (or whose latest entry is its deletion) is `unrecorded`. With `after`,
 * only the rows the entries past that seq name (a row no entry names cannot be found that way).
 */
async function checkSources(db: Db | Tx, orgId: string, after?: number): Promise<ChainFailure | null> {
  const found: ChainFailure[] = [];
  const sourceList = rowsOf<{ source: string }>(
    await db.execute(
      after === undefined
        ? sql`select source from audit_sources() order by source`
        : sql`select source from audit_sources()
            where source in (select e.source from audit_entry e where e.org_id = ${orgId} and e.seq > ${after}) order by source`,
    ),
  );
  for (const { source } of sourceList) {
    const named =
      after === undefined
        ? null
        : sql`select e.source_key from audit_entry e where e.org_id = ${orgId} and e.source = ${source} and e.seq > ${after}`;
    const latest = new Map(
      rowsOf<{ source_key: string; seq: string; op: string; canonical: string }>(
        await db.execute(sql`select distinct on (source_key) source_key, seq::text as seq, op, canonical from audit_entry
          where org_id = ${orgId} and source = ${source} and ${named ? sql`source_key in (${named})` : sql`true`}
          order by source_key, audit_entry.seq desc`),
      ).map((r) => [r.source_key, r]),
    );
    // Only the rows the new entries name, after a mark: audit_jcs is what a walk spends its time on.
    const rows = rowsOf<{ source_key: string; row_json: string }>(
      await db.execute(
        sql`select source_key, row_json from audit_source_rows(${source}, ${orgId}::uuid, ${named ? sql`array(${named})` : sql`null`})`,
      ),
    );
    for (const row of rows) {
      const entry = latest.get(row.source_key);
      latest.delete(row.source_key);
      if (!entry || entry.op === "delete") {
        found.push({ kind: "unrecorded", seq: null, source, key: row.source_key, detail: "a row with no entry" });
        continue;
      }
      const said = canonicalize((JSON.parse(entry.canonical) as { row: unknown }).row);
      if (said !== row.row_json) {
        found.push({
          kind: "source_changed",
          seq: Number(entry.seq),
          source,
          key: row.source_key,
          detail: "the row is not what its latest entry says",
        });
      }
    }
    for (const [key, entry] of latest) {
      if (entry.op !== "delete") {
        found.push({
          kind: "source_changed",
          seq: Number(entry.seq),
          source,
          key,
          detail: "the row is gone, and no entry says it was deleted",
        });
      }
    }
  }
  // The earliest entry first; rows with none after them.
  found.sort((a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity));
  return found[0] ?? null;
}

/** One line per organization: `ok, N entries, head <hash>` or the failure. */
export function reportLine(r: ChainReport): string {
  if (!r.failure) return `${r.orgId}: ok, ${r.entries} entries, head ${r.head ?? "none"}`;
  const f = r.failure;
  const at = [f.seq !== null ? `entry ${f.seq}` : null, f.source && `${f.source} ${f.key}`].filter(Boolean).join(", ");
  return `${r.orgId}: ${f.kind}${at ? ` at ${at}` : ""}: ${f.detail}`;
}

/**
 * An export held against the database (`--against`): the export checks out offline, and the
 * database still holds each of its entries, and its head, with the same hashes. What catches a
 * tail rewritten whole, hashes and head included, since the export was taken.
 */
export async function verifyAgainst(
  db: Db,
  doc: { org_id: string; entries: ChainEntry[]; head?: { seq: number; entry_sha256: string } },
): Promise<ChainFailure | null> {
  const head = doc.head && doc.head.seq > 0 ? doc.head : undefined;
  const seqs = [...doc.entries.map((e) => e.seq), ...(head ? [head.seq] : [])];
  if (seqs.length === 0) return null;
  const held = new Map(
    rowsOf<{ seq: string; entry_sha256: string }>(
      await db.execute(sql`select seq::text as seq, entry_sha256 from audit_entry
        where org_id = ${doc.org_id} and seq between ${Math.min(...seqs)} and ${Math.max(...seqs)}`),
    ).map((r) => [Number(r.seq), r.entry_sha256]),
  );
  const expected: [number, string, ChainEntry | null][] = [
    ...doc.entries.map((e) => [e.seq, e.entry_sha256, e] as [number, string, ChainEntry]),
    ...(head ? [[head.seq, head.entry_sha256, null] as [number, string, null]] : []),
  ];
  for (const [seq, hash, e] of expected.sort((a, b) => a[0] - b[0])) {
    const now = held.get(seq);
    if (now === hash) continue;
    return {
      kind: now === undefined ? "deleted" : "changed",
      seq,
      source: e?.source ?? null,
      key: e?.source_key ?? null,
      detail: now === undefined ? "an exported entry is no longer in the database" : "the database's entry is not the exported one",
    };
  }
  return null;
}
