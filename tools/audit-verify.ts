// `npm run audit:verify [-- --org ID] [--against EXPORT]`: walks each organization's audit chain
// (or ID's) from its genesis and names the first entry that was changed, deleted or inserted out
// of order, then holds the audited rows to their latest entries (lib/audit/verify.ts, decision
// 0080). One line per organization; exit 1 on any failure. `--against FILE` also checks an export
// (GET /api/audit/export, JSON or CSV) offline and against the database: a tail rewritten whole,
// hashes and head included, is caught only against a hash held outside, and an export is one.
// The database is the app's (DATABASE_URL, else the dev PGlite folder .data/pglite).
import fs from "node:fs";
import { parse } from "csv-parse/sync";
import { dbOptionsFromEnv, openDb } from "@/db/client";
import { checkExport, genesisSha256, type AuditExportDocument, type ChainEntry } from "@/lib/audit/chain";
import { reportLine, verifyAgainst, verifyChain } from "@/lib/audit/verify";

const USAGE = "usage: npm run audit:verify [-- --org ID] [--against EXPORT]";
function fail(message: string): never {
  console.error(`audit:verify: ${message}\n${USAGE}`);
  process.exit(2);
}

const args = process.argv.slice(2);
const given: Record<string, string | undefined> = {};
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
  if (flag !== "--org" && flag !== "--against") fail(`unknown argument ${flag}`);
  given[flag] = inline ?? args[++i];
  if (!given[flag]) fail(`${flag} needs a value`);
}
const orgId = given["--org"];
if (orgId !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(orgId))
  fail("--org takes an organization's id");

/** An export file: the JSON document, or the CSV's rows (whose organization is --org's). */
function readExport(file: string): AuditExportDocument | { org_id: string; entries: ChainEntry[] } {
  const text = fs.readFileSync(file, "utf8").replace(/^\ufeff/, "");
  if (text.trimStart().startsWith("{")) return JSON.parse(text) as AuditExportDocument;
  if (!orgId) fail("a CSV export needs --org");
  const rows = parse(text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
  return {
    org_id: orgId.toLowerCase(),
    entries: rows.map((r) => ({ ...r, seq: Number(r.seq), actor_id: r.actor_id || null }) as ChainEntry),
  };
}

let failed = false;
const handle = await openDb(dbOptionsFromEnv());
try {
  if (given["--against"]) {
    const doc = readExport(given["--against"]);
    const offline =
      "head" in doc
        ? checkExport(doc)
        : checkExport({ ...doc, genesis_sha256: genesisSha256(doc.org_id), from: "", to: "", head: { seq: Infinity, entry_sha256: "" } });
    const against = offline.ok ? await verifyAgainst(handle.db, doc) : offline.failure;
    const line = reportLine({ orgId: doc.org_id, entries: doc.entries.length, head: null, failure: against });
    console.info(
      `export ${given["--against"]}: ${against ? line.slice(doc.org_id.length + 2) : `ok, ${doc.entries.length} entries as the database holds them`}`,
    );
    failed ||= Boolean(against);
  }
  for (const report of await verifyChain(handle.db, { orgId: orgId?.toLowerCase() })) {
    console.info(reportLine(report));
    failed ||= Boolean(report.failure);
  }
} finally {
  await handle.close();
}
process.exit(failed ? 1 : 0);
