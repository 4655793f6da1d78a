// The sweep's logic with @inngest/test: bounded batches, each its own step. The domain's
// expireOverdue (tested on a real database in tests/integration/leases/leases.test.ts) is mocked.
import { InngestTestEngine } from "@inngest/test";
import { beforeEach, describe, expect, it, vi } from "vitest";
// The function's output and step outputs leave the client encrypted (inngest/encryption.ts):
// the tests open them with the key the app runs with.
import { opened } from "../harness/step-data";

vi.mock("@/db/client", () => ({ getDb: vi.fn(async () => ({ fake: "db" })) }));
vi.mock("@/lib/leases", () => ({ expireOverdue: vi.fn() }));
vi.mock("@/lib/log", () => ({ log: { info: vi.fn(), warn: vi.fn() } }));

const leases = await import("@/lib/leases");
const { expireOverdueLeases, SWEEP_BATCH_SIZE, SWEEP_MAX_BATCHES, SWEEP_CRON } = await import(
  "@/inngest/expire-overdue-leases"
);
const expireOverdue = vi.mocked(leases.expireOverdue);

const ids = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);

function engine() {
  return new InngestTestEngine({
    function: expireOverdueLeases,
    events: [{ name: "inngest/scheduled.timer", data: { cron: SWEEP_CRON } }],
  });
}

beforeEach(() => {
  vi.clearAllMocks();
});

describe("expire-overdue-leases", () => {
  it("runs on a cron schedule, one sweep at a time", () => {
    const [config] = (
      expireOverdueLeases as unknown as { getConfig(o: { baseUrl: URL; appPrefix: string }): Record<string, any>[] }
    ).getConfig({ baseUrl: new URL("http://127.0.0.1:3000/api/inngest"), appPrefix: "claimcheck" });
    expect(config!.id).toBe("claimcheck-expire-overdue-leases");
    expect(config!.triggers).toEqual([{ cron: "* * * * *" }]);
    expect(config!.concurrency).toEqual({ limit: 1 });
  });

  it("does one batch when nothing is overdue", async () => {
    expireOverdue.mockResolvedValue({ expired: [] });

    const { result, ctx } = await engine().execute();

    // What the Inngest server keeps is ciphertext (docs/decisions/0049).
    expect(result).toMatchObject({ __ENCRYPTED__: true });
    expect(await opened(result)).toEqual({ expired: 0, batches: 1, more: false });
    expect(expireOverdue).toHaveBeenCalledTimes(1);
    expect(expireOverdue).toHaveBeenCalledWith(expect.anything(), SWEEP_BATCH_SIZE);
    expect(ctx.step.run).toHaveBeenCalledWith("expire-batch-1", expect.any(Function));
  });

  it("keeps sweeping while batches come back full, each batch in its own step", async () => {
    expireOverdue
      .mockResolvedValueOnce({ expired: ids(SWEEP_BATCH_SIZE) })
      .mockResolvedValueOnce({ expired: ids(SWEEP_BATCH_SIZE) })
      .mockResolvedValueOnce({ expired: ids(3) });

    const { result, ctx } = await engine().execute();

    expect(await opened(result)).toEqual({ expired: 2 * SWEEP_BATCH_SIZE + 3, batches: 3, more: false });
    expect(expireOverdue).toHaveBeenCalledTimes(3);
    for (const id of ["expire-batch-1", "expire-batch-2", "expire-batch-3"]) {
      expect(ctx.step.run).toHaveBeenCalledWith(id, expect.any(Function));
    }
  });

  it("stops after a bounded number of batches and leaves the rest for the next run", async () => {
    expireOverdue.mockResolvedValue({ expired: ids(SWEEP_BATCH_SIZE) });

    const { result } = await engine().execute();

    expect(expireOverdue).toHaveBeenCalledTimes(SWEEP_MAX_BATCHES);
    expect(await opened(result)).toEqual({ expired: SWEEP_MAX_BATCHES * SWEEP_BATCH_SIZE, batches: SWEEP_MAX_BATCHES, more: true });
  });

  it("keeps step state small: a count, not the lease ids", async () => {
    expireOverdue.mockResolvedValue({ expired: ids(2) });

    const { result } = await engine().executeStep("expire-batch-1");

    expect(await opened(result)).toEqual({ count: 2 });
  });
});
