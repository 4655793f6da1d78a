// Every line a function run logs names its lease and its run: the middleware puts them in
// the log context around the handler and each step (inngest/log-context.ts).
import { InngestTestEngine } from "@inngest/test";
import { Inngest } from "inngest";
import { describe, expect, it } from "vitest";
import { LeaseLogContext } from "@/inngest/log-context";
import { logContext, withLogContext } from "@/lib/log-context";

const client = new Inngest({ id: "log-context-test", middleware: [LeaseLogContext], isDev: true });
const seen: Record<string, unknown>[] = [];
const fn = client.createFunction({ id: "f", triggers: [{ event: "lease/opened" }] }, async ({ step }) => {
  seen.push({ where: "handler", ...logContext() });
  await step.run("inside", async () => {
    seen.push({ where: "step", ...logContext() });
  });
  return "done";
});

describe("LeaseLogContext", () => {
  it("puts the lease id and the run id on every line of a run, keeping the request's id", async () => {
    const leaseId = "00000000-0000-4000-8000-000000000001";
    const engine = new InngestTestEngine({ function: fn, events: [{ name: "lease/opened", data: { leaseId, runNonce: "n" } }] });
    const { result } = await withLogContext({ request_id: "req-9" }, () => engine.execute());
    expect(result).toBe("done");
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (const line of seen) {
      expect(line).toMatchObject({ request_id: "req-9", lease_id: leaseId, inngest_run_id: expect.any(String) });
    }
    expect(seen.map((s) => s.where)).toContain("step");
  });
});
