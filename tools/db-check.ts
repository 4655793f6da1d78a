// `npm run db:check`: the migrations are sound and db/schema.ts has none to add.
//   1. `drizzle-kit check`: no two migrations claim the same parent snapshot.
//   2. `drizzle-kit generate` into a throwaway copy of db/migrations: a schema change without
//      its migration would be written there; none may be.
// Part of `npm run check` (tools/test-all.ts).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const KIT = path.join(ROOT, "node_modules", ".bin", "drizzle-kit");

function kit(args: string[]): { status: number | null; output: string } {
  const r = spawnSync(KIT, args, { cwd: ROOT, encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

const check = kit(["check"]);
if (check.status !== 0) {
  console.error(`drizzle-kit check failed:\n${check.output}`);
  process.exit(1);
}

// drizzle-kit takes the output folder relative to the working directory; a hidden one beside the rest.
const copy = `.db-check-${process.pid}`;
fs.cpSync(path.join(ROOT, "db", "migrations"), path.join(ROOT, copy), { recursive: true });
try {
  const before = new Set(fs.readdirSync(path.join(ROOT, copy), { recursive: true }).map(String));
  const generated = kit(["generate", "--dialect", "postgresql", "--schema", "./db/schema.ts", "--out", copy]);
  const added = fs.readdirSync(path.join(ROOT, copy), { recursive: true }).map(String).filter((f) => !before.has(f));
  if (generated.status !== 0 || added.length) {
    console.error(
      generated.status !== 0
        ? `drizzle-kit generate failed:\n${generated.output}`
        : `db/schema.ts differs from db/migrations: \`npm run db:generate\` would write ${added.join(", ")}`,
    );
    process.exitCode = 1; // not exit(): the copy is removed first
  } else {
    console.info("migrations: consistent, and db/schema.ts has no change without its migration");
  }
} finally {
  fs.rmSync(path.join(ROOT, copy), { recursive: true, force: true });
}
