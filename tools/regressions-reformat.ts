// `tsx tools/regressions-reformat.ts [--base REV]`: carries tests/e2e/regressions/*.patch across
// a formatter run. Each patch is a diff against source files; once Prettier has rewritten those
// files its context lines no longer match and `git apply` refuses it. For each patch this:
//   1. makes a throwaway worktree of REV (default HEAD: the last commit before the reformat),
//   2. applies the patch there and runs Prettier (this checkout's config) on the files it touches,
//   3. writes, as the new patch, the diff from this checkout's working tree (the formatted
//      tree) to those formatted, patched files.
// So the patch brings back the same behaviour, in the formatted spelling. A touched file whose
// formatted REV version differs from the working tree's (a change besides formatting) is an
// error: the patch would then carry that change too.
//
// The procedure, once, by whoever reformats:
//   git status                       # clean: everything committed
//   npm run format                   # the tree reformatted, not yet committed
//   npx tsx tools/regressions-reformat.ts
//   for p in tests/e2e/regressions/*.patch; do git apply --check "$p"; done
//   git commit -am "Format the tree with Prettier; the regression patches follow it"
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PATCH_DIR = path.join(ROOT, "tests", "e2e", "regressions");
const PRETTIER = path.join(ROOT, "node_modules", "prettier", "bin", "prettier.cjs");

const baseIndex = process.argv.indexOf("--base");
const base = baseIndex > 0 ? process.argv[baseIndex + 1]! : "HEAD";

function run(cmd: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
function mustRun(cmd: string, args: string[], cwd: string): string {
  const r = run(cmd, args, cwd);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}): ${r.stderr.trim() || `exit ${r.status}`}`);
  return r.stdout;
}
/** Formats the files in place with this checkout's config and ignore file; an ignored file is left as it is. */
function format(cwd: string, files: string[]) {
  const args = ["--config", path.join(ROOT, ".prettierrc.json"), "--ignore-path", path.join(ROOT, ".prettierignore"), "--log-level", "warn"];
  mustRun(process.execPath, [PRETTIER, ...args, "--write", ...files], cwd);
}

/** The repository paths a patch touches (its `diff --git a/X b/Y` lines; both sides, for renames). */
function touched(patch: string): string[] {
  const files = new Set<string>();
  for (const m of patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)) files.add(m[1]!).add(m[2]!);
  return [...files];
}

function regenerate(name: string): string {
  const file = path.join(PATCH_DIR, name);
  const patch = fs.readFileSync(file, "utf8");
  const files = touched(patch);
  const worktree = fs.mkdtempSync(path.join(os.tmpdir(), "claimcheck-reformat-"));
  try {
    mustRun("git", ["worktree", "add", "--detach", "--quiet", worktree, base], ROOT);
    // The formatted REV must be what the working tree holds, or the new patch would carry more.
    format(worktree, files.filter((f) => fs.existsSync(path.join(worktree, f))));
    for (const f of files) {
      const ours = path.join(ROOT, f);
      const theirs = path.join(worktree, f);
      if (fs.existsSync(theirs) && (!fs.existsSync(ours) || fs.readFileSync(ours, "utf8") !== fs.readFileSync(theirs, "utf8"))) {
        throw new Error(`${f}: the working tree differs from ${base} formatted (a change besides formatting?)`);
      }
    }
    mustRun("git", ["checkout", "--quiet", "--", "."], worktree);
    const check = run("git", ["apply", "--check", file], worktree);
    if (check.status !== 0) throw new Error(`does not apply to ${base}: ${check.stderr.trim().split("\n")[0]}`);
    mustRun("git", ["apply", file], worktree);
    const present = files.filter((f) => fs.existsSync(path.join(worktree, f)));
    format(worktree, present);
    // The old side: this checkout's (formatted) files, staged in the throwaway worktree; the new
    // side: the formatted, patched files. Their diff is the new patch.
    const patched = new Map(present.map((f) => [f, fs.readFileSync(path.join(worktree, f))]));
    for (const f of files) {
      const ours = path.join(ROOT, f);
      const theirs = path.join(worktree, f);
      if (fs.existsSync(ours)) fs.writeFileSync(theirs, fs.readFileSync(ours));
      else fs.rmSync(theirs, { force: true });
    }
    mustRun("git", ["add", "--all", "--", ...files], worktree);
    for (const f of files) {
      const theirs = path.join(worktree, f);
      const content = patched.get(f);
      if (content) fs.writeFileSync(theirs, content);
      else fs.rmSync(theirs, { force: true });
    }
    mustRun("git", ["add", "--intent-to-add", "--all", "--", ...files], worktree);
    const diff = mustRun("git", ["diff", "--no-color", "--no-ext-diff", "--", ...files], worktree);
    if (!diff.trim()) throw new Error("the formatted patch is empty");
    fs.writeFileSync(file, diff);
    return `${diff.split("\n").filter((l) => /^[-+](?![-+]{2} )/.test(l)).length} changed lines (was ${patch.split("\n").filter((l) => /^[-+](?![-+]{2} )/.test(l)).length})`;
  } finally {
    fs.rmSync(worktree, { recursive: true, force: true });
    run("git", ["worktree", "prune"], ROOT);
  }
}

let failed = 0;
for (const name of fs.readdirSync(PATCH_DIR).filter((f) => f.endsWith(".patch")).sort()) {
  try {
    console.info(`${name}: ${regenerate(name)}`);
  } catch (error) {
    failed++;
    console.error(`${name}: ERROR ${(error as Error).message}`);
  }
}
process.exit(failed ? 1 : 0);
