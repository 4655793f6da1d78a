// The lint rule that makes lib/leases/ the only writer of inference_lease and lease_event
// (eslint.config.mjs), run on snippets as if they were files of the app.
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });
async function boundaryHits(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === "no-restricted-syntax").map((m) => m.message);
}
const HEADER = `import { sql } from "drizzle-orm";\nimport { inferenceLease, leaseEvent, invoice } from "@/db/schema";\ndeclare const db: any;\n`;

describe("only lib/leases/ writes leases and their events", () => {
  // The first lint of an app/ file loads Next.js's plugins (React, hooks, accessibility,
  // import): seconds on a busy machine, paid once here rather than inside a test's 5 s.
  beforeAll(() => boundaryHits(HEADER, "app/page.tsx"), 60_000);

  it.each([
    ["a drizzle insert of a lease", "await db.insert(inferenceLease).values({});"],
    ["a drizzle update of a lease", "await db.update(inferenceLease).set({ status: 'applied' });"],
    ["a drizzle delete of events", "await db.delete(leaseEvent);"],
    ["an insert of an event", "await db.insert(leaseEvent).values({});"],
    ["raw SQL updating a lease", "await db.execute(sql`update inference_lease set status = 'applied'`);"],
    ["raw SQL inserting an event", "await db.execute(sql`INSERT INTO lease_event (lease_id, kind) values (1, 'x')`);"],
  ])("refuses %s outside lib/leases/", async (_name, line) => {
    for (const file of ["app/invoices/[id]/actions.ts", "lib/invoices.ts", "inngest/x.ts", "db/seed.ts"]) {
      expect(await boundaryHits(HEADER + line, file), file).toEqual([expect.stringContaining("Only lib/leases/")]);
    }
  });

  it("allows them inside lib/leases/, and reads and other tables anywhere", async () => {
    expect(await boundaryHits(HEADER + "await db.update(inferenceLease).set({});", "lib/leases/apply.ts")).toEqual([]);
    expect(await boundaryHits(HEADER + "await db.select().from(inferenceLease);", "lib/invoices.ts")).toEqual([]);
    expect(await boundaryHits(HEADER + "await db.update(invoice).set({});", "lib/invoices.ts")).toEqual([]);
    expect(await boundaryHits(HEADER + "await db.execute(sql`select * from inference_lease`);", "app/page.tsx")).toEqual([]);
  });
});
