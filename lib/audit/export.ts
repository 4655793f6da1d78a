import "server-only";
// GET /api/audit/export (docs/decisions/0080): an admin's export of the organization's audit trail
// for a period of UTC days [from, to). The export is first recorded (audit_export, committed on
// its own, and so itself a chain entry, even if the stream is cut off), with the head as it was;
// then the period's entries up to that head stream out by seq, 500 a page, each page one short
// statement that states the admin's role again. Contiguous by seq (the first entry at or after
// `from` to the last before `to`), so the slice checks offline from its first entry's prev_sha256
// (lib/audit/chain.ts, checkExport).
import { stringify } from "csv-stringify/sync";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { rowsOf, type Db } from "@/db/client";
import { AUDIT_EXPORT_FORMATS } from "@/db/schema";
import { memberMay, type Member } from "@/lib/access";
import { genesisSha256, type ChainEntry } from "./chain";
import { ENTRY_COLUMNS, entryOf } from "./verify";

export const MAX_EXPORT_DAYS = 366;
const PAGE = 500;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine((d) => {
    const t = Date.parse(`${d}T00:00:00Z`);
    return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === d;
  });
const dayNumber = (d: string) => Date.parse(`${d}T00:00:00Z`) / 86_400_000;

/** The query: two UTC days, from before to and at most MAX_EXPORT_DAYS apart, and a format. */
export const ExportQuery = z
  .object({ from: day, to: day, format: z.enum(AUDIT_EXPORT_FORMATS) })
  .refine((q) => dayNumber(q.to) > dayNumber(q.from) && dayNumber(q.to) - dayNumber(q.from) <= MAX_EXPORT_DAYS);
export type ExportQuery = z.output<typeof ExportQuery>;

export function exportQueryOf(params: URLSearchParams) {
  return ExportQuery.safeParse({
    from: params.get("from") ?? undefined,
    to: params.get("to") ?? undefined,
    format: params.get("format") ?? undefined,
  });
}

export const EXPORT_COLUMNS = [
  "seq",
  "at",
  "source",
  "source_key",
  "op",
  "actor_id",
  "canonical",
  "content_sha256",
  "prev_sha256",
  "entry_sha256",
] as const satisfies readonly (keyof ChainEntry)[];

export type StartedExport = { id: string; head: { seq: number; entry_sha256: string }; first: number | null; last: number | null };

/**
 * Records the export (by an admin of the actor's organization: the statement says so, 403
 * otherwise) with the head it is cut at, and finds the period's seq range up to that head.
 */
export async function startExport(
  db: Db,
  actor: Member,
  q: ExportQuery,
): Promise<{ ok: true; started: StartedExport } | { ok: false; code: "forbidden" }> {
  const [row] = rowsOf<{ id: string; head_seq: string; head_sha256: string }>(
    await db.execute(sql`
      insert into audit_export (org_id, actor_id, from_day, to_day, format, head_seq, head_sha256)
      select ${actor.orgId}::uuid, ${actor.id}::uuid, ${q.from}::date, ${q.to}::date, ${q.format},
        coalesce(h.seq, 0), coalesce(h.entry_sha256, audit_genesis(${actor.orgId}::uuid))
      from (select 1) as one left join audit_head h on h.org_id = ${actor.orgId}::uuid
      where ${memberMay(actor.orgId, actor.id, "read_audit")}
      returning id, head_seq::text as head_seq, head_sha256`),
  );
  if (!row) return { ok: false, code: "forbidden" };
  const headSeq = Number(row.head_seq);
  // The days are UTC midnights; entries are dated by the database clock.
  const [range] = rowsOf<{ first: string | null; last: string | null }>(
    await db.execute(sql`select
      (select min(seq) from audit_entry where org_id = ${actor.orgId} and seq <= ${headSeq} and at >= (${q.from}::date::timestamp at time zone 'UTC'))::text as first,
      (select max(seq) from audit_entry where org_id = ${actor.orgId} and seq <= ${headSeq} and at < (${q.to}::date::timestamp at time zone 'UTC'))::text as last`),
  );
  const first = range?.first == null ? null : Number(range.first);
  const last = range?.last == null ? null : Number(range.last);
  return { ok: true, started: { id: row.id, head: { seq: headSeq, entry_sha256: row.head_sha256 }, first, last } };
}

/** The export's entries, page by page, while the actor is still an admin of the organization. */
async function* exportPages(db: Db, actor: Member, started: StartedExport): AsyncGenerator<ChainEntry[]> {
  if (started.first === null || started.last === null || started.first > started.last) return;
  let after = started.first - 1;
  while (after < started.last) {
    const page = rowsOf<ChainEntry>(
      await db.execute(sql`select ${ENTRY_COLUMNS} from audit_entry
        where org_id = ${actor.orgId} and seq > ${after} and seq <= ${started.last} and ${memberMay(actor.orgId, actor.id, "read_audit")}
        order by audit_entry.seq limit ${PAGE}`),
    ).map(entryOf);
    // No longer an admin (or the entries went): the stream ends short, as an error, not as a whole export.
    if (page.length === 0) throw new Error("the audit export stopped: no longer permitted, or entries missing");
    yield page;
    after = page[page.length - 1]!.seq;
  }
}

const encoder = new TextEncoder();

/** The export's body, streamed: JSON `{org_id, genesis_sha256, from, to, entries, head}`, or CSV with EXPORT_COLUMNS. */
export function exportStream(db: Db, actor: Member, q: ExportQuery, started: StartedExport): ReadableStream<Uint8Array> {
  const pages = exportPages(db, actor, started);
  let begun = false;
  let any = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!begun) {
        begun = true;
        controller.enqueue(
          encoder.encode(
            q.format === "json"
              ? `{"org_id":${JSON.stringify(actor.orgId)},"genesis_sha256":"${genesisSha256(actor.orgId)}","from":"${q.from}","to":"${q.to}","entries":[`
              : // Every cell is a number, a key, a hash or JSON: none is altered (no formula escaping), so each line checks offline.
                stringify([[...EXPORT_COLUMNS]], { bom: true, record_delimiter: "windows" }),
          ),
        );
        return;
      }
      const next = await pages.next();
      if (next.done) {
        if (q.format === "json") controller.enqueue(encoder.encode(`],"head":${JSON.stringify(started.head)}}`));
        controller.close();
        return;
      }
      const rows = next.value;
      if (q.format === "json") {
        controller.enqueue(encoder.encode((any ? "," : "") + rows.map((e) => JSON.stringify(e)).join(",")));
      } else {
        const cells = rows.map((e) => EXPORT_COLUMNS.map((c) => (e[c] === null ? "" : String(e[c]))));
        controller.enqueue(encoder.encode(stringify(cells, { record_delimiter: "windows", quote_record_delimiter: true })));
      }
      any = true;
    },
    async cancel() {
      await pages.return(undefined);
    },
  });
}
