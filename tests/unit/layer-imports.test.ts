// The lint rules on which folder may import which (eslint.config.mjs, docs/decisions/0058),
// run on snippets as if they were files of the app, as tests/unit/lease-boundary.test.ts does
// for the lease boundary.
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });
// ESLint's first lint loads the config and the TypeScript parser: seconds on a busy machine, so
// it happens here, under its own timeout, and no case pays it within the 5 s each has.
beforeAll(() => eslint.lintText("export {};\n", { filePath: "lib/warm-up.ts" }).then(() => undefined), 60_000);
async function importHits(line: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${line}\nexport const used = x;\n`, { filePath });
  return result!.messages.filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}
const from = (source: string) => `import { x } from "${source}";`;

describe("imports by layer", () => {
  it.each([
    ["lib/invoices.ts", "@/app/_lib/http"],
    ["lib/invoices.ts", "../app/_lib/http"],
    ["lib/leases/read.ts", "../../app/_lib/serialize"],
    ["inngest/lease-close-signal.ts", "@/app/_lib/sse"],
    ["inngest/lease-close-signal.ts", "../app/_lib/sse"],
  ])("%s may not import %s (app/)", async (file, source) => {
    expect(await importHits(from(source), file)).toEqual([expect.stringContaining("Only app/ imports app/")]);
    expect(await importHits(`export { x } from "${source}";`, file)).toEqual([expect.stringContaining("Only app/ imports app/")]);
    expect(await importHits(`import type { x } from "${source}";`, file)).toEqual([expect.stringContaining("Only app/ imports app/")]);
  });

  it.each([
    ["db/schema.ts", "@/app/_lib/http"],
    ["db/seed.ts", "../app/_lib/http"],
    ["db/client.ts", "@/lib/leases"],
    ["db/client.ts", "@/lib/sessions"],
    ["db/schema.ts", "../lib/invoices"],
    ["db/client.ts", "@/inngest/client"],
  ])("%s may not import %s: db/ takes only the five leaves of lib/", async (file, source) => {
    expect(await importHits(from(source), file)).toEqual([expect.stringContaining("db/ is the bottom layer")]);
  });

  it.each([
    ["db/client.ts", "@/lib/log"],
    ["db/client.ts", "@/lib/pid"],
    ["db/seed.ts", "@/lib/password"],
    ["db/schema.ts", "../lib/lease-codes"],
    ["db/seed.ts", "./schema"],
    ["db/seed.ts", "@/db/client"],
    ["db/client.ts", "drizzle-orm"],
    ["lib/leases/read.ts", "@/db/schema"],
    ["inngest/lease-close-signal.ts", "@/lib/lease-feed"],
    ["app/api/leases/[id]/events/route.ts", "@/app/_lib/sse"],
    ["lib/log.ts", "./log-context"],
  ])("%s may import %s", async (file, source) => {
    expect(await importHits(from(source), file)).toEqual([]);
  });

  it("the leaves db/ imports import nothing of ours, so no cycle runs through db/", async () => {
    for (const leaf of ["lib/log.ts", "lib/log-context.ts", "lib/pid.ts", "lib/password.ts", "lib/lease-codes.ts"]) {
      for (const source of ["@/db/schema", "./ids", "../db/schema"]) {
        expect(await importHits(from(source), leaf), `${leaf} <- ${source}`).toEqual([expect.stringContaining("imports nothing of ours")]);
      }
      expect(await importHits(from("node:crypto"), leaf)).toEqual([]);
    }
  });

  it("no Next.js below app/; no tests or tools in the app", async () => {
    for (const file of ["lib/invoices.ts", "db/client.ts"]) {
      expect(await importHits(from("next/headers"), file), file).toEqual([expect.stringContaining("no Next.js imports below app/")]);
    }
    expect(await importHits(from("@/tests/support/db"), "app/page.tsx")).toEqual([expect.stringContaining("never imported by the app")]);
    expect(await importHits(from("../tools/dev"), "lib/invoices.ts")).toEqual([expect.stringContaining("never imported by the app")]);
    expect(await importHits(from("../tests/support/db"), "db/seed.ts")).toEqual([expect.stringContaining("never imported by the app")]);
  });
});
