// The import rules around tests/ and bench/ (eslint.config.mjs), run on snippets as if they
// were files of the repository: bench/ reaches tests/ only through the shared harness, the
// harness needs no vitest, and the app imports neither tests/ nor bench/.
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });
// ESLint's first lint loads the config and the TypeScript parser: seconds on a busy machine, so
// it happens here, under its own timeout, and no case pays it within the 5 s each has.
beforeAll(() => eslint.lintText("export {};\n", { filePath: "lib/warm-up.ts" }).then(() => undefined), 60_000);
async function importHits(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}

describe("bench/ imports tests/ only through tests/harness/", () => {
  it.each([
    ["bench/lifecycle.ts", 'import { openTestDb } from "@/tests/support/db";'],
    ["bench/lifecycle.ts", 'import { api } from "../tests/support/api";'],
    ["bench/support/scale.ts", 'import { checkInvariants } from "../../tests/model/invariants";'],
    ["bench/reads.ts", 'import "@/tests/integration/http/api.test";'],
  ])("refuses %s: %s", async (file, line) => {
    expect(await importHits(line, file)).toEqual([expect.stringContaining("only through tests/harness/")]);
  });

  it("allows the harness, by alias or by path", async () => {
    expect(await importHits('import { startAppServer } from "@/tests/harness/app-server";', "bench/lifecycle.ts")).toEqual([]);
    expect(await importHits('import { CLOSING_EVENT } from "../tests/harness/lease-rules";', "bench/load-invariants.ts")).toEqual([]);
    expect(await importHits('import { http } from "@/tests/harness/app-client";', "bench/support/read-load.ts")).toEqual([]);
  });
});

describe("tests/harness/ runs outside vitest", () => {
  it.each([
    'import { inject } from "vitest";',
    'import { expect } from "vitest";',
    'import { makeUser } from "../support/db";',
    'import { makeUser } from "@/tests/support/db";',
  ])("refuses %s", async (line) => {
    expect(await importHits(line, "tests/harness/app-server.ts")).toHaveLength(1);
  });

  it("allows its own files, the app's modules and node", async () => {
    const code = 'import { PASSWORD } from "./users";\nimport { isAlive } from "@/lib/pid";\nimport net from "node:net";';
    expect(await importHits(code, "tests/harness/app-client.ts")).toEqual([]);
  });
});

describe("the app imports neither tests/ nor bench/", () => {
  it.each([
    'import { startAppServer } from "@/tests/harness/app-server";',
    'import { PASSWORD } from "../../tests/support/db";',
    'import { run } from "@/bench/lifecycle";',
    'import { scale } from "../bench/support/scale";',
  ])("refuses %s", async (line) => {
    for (const file of ["app/invoices/[id]/actions.ts", "lib/invoices.ts", "inngest/x.ts", "db/seed.ts"]) {
      expect(await importHits(line, file), file).toEqual([expect.stringContaining("never imported by the app")]);
    }
  });
});
