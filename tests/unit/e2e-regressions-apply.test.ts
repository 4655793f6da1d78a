import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Each patch in tests/e2e/regressions/ brings back one bad behaviour the walkthrough saw, and
// `npm run test:e2e-regressions` (tools/e2e-regressions.ts) proves its scenarios fail with it.
// That command costs a production build a patch, so it is run by hand; this keeps the patches
// applying in between: a refactor that moves the code a patch touches fails here, in `npm test`,
// rather than at the next manual run. It checks the working tree, as `git apply --check` does.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const PATCH_DIR = path.join(ROOT, "tests", "e2e", "regressions");
const patches = fs
  .readdirSync(PATCH_DIR)
  .filter((name) => name.endsWith(".patch"))
  .sort();

function git(args: string[]) {
  const result = spawnSync("git", args, { cwd: ROOT, encoding: "utf8" });
  // No git on the machine is a failure with its reason, never a skipped check.
  if (result.error)
    throw new Error(`git ${args[0]} could not run (${result.error.message}): the regression patches need git to be checked`);
  return result;
}

describe("the e2e regression patches", () => {
  it("are the ones tools/e2e-regressions.ts maps to scenarios, one NN-name.patch each", () => {
    const mapped = [...fs.readFileSync(path.join(ROOT, "tools", "e2e-regressions.ts"), "utf8").matchAll(/^\s+id: "(\d{2})",$/gm)].map(
      (m) => m[1],
    );
    expect(mapped.length, "ids read from the tool's REGRESSIONS table").toBeGreaterThanOrEqual(11);
    for (const name of patches) expect(name).toMatch(/^\d{2}-[a-z0-9-]+\.patch$/);
    expect(patches.map((name) => name.slice(0, 2))).toEqual(mapped);
  });

  it.each(patches)("%s applies to the working tree (git apply --check)", (name) => {
    const check = git(["apply", "--check", path.join(PATCH_DIR, name)]);
    expect(check.status, `${name} no longer applies; remake it (tests/e2e/README.md):\n${check.stderr}`).toBe(0);
  });
});
