import "server-only";
// The sweep: records `expired` (with its event) for open and proposed leases whose deadline
// has passed and that nothing has touched since. Reads and writes expire a lease too; the
// sweep is for the abandoned ones. Bounded work per run: a few batches, each its own step
// (its own short transaction, memoized on retry); what is left waits for the next minute.
import { getDb } from "@/db/client";
import { expireOverdue } from "@/lib/leases";
import { log } from "@/lib/log";
import { inngest } from "./client";

export const SWEEP_CRON = "* * * * *";
export const SWEEP_BATCH_SIZE = 200;
export const SWEEP_MAX_BATCHES = 5;

export const expireOverdueLeases = inngest.createFunction(
  {
    id: "expire-overdue-leases",
    name: "Expire overdue leases",
    triggers: [{ cron: SWEEP_CRON }],
    // Overlapping sweeps would be safe (SKIP LOCKED) but pointless.
    concurrency: { limit: 1 },
  },
  async ({ step }) => {
    let expired = 0;
    let batches = 0;
    for (let i = 0; i < SWEEP_MAX_BATCHES; i++) {
      const batch = await step.run(`expire-batch-${i + 1}`, async () => {
        const result = await expireOverdue(await getDb(), SWEEP_BATCH_SIZE);
        return { count: result.expired.length };
      });
      batches++;
      expired += batch.count;
      if (batch.count < SWEEP_BATCH_SIZE) break;
    }
    if (expired > 0) log.info("sweep expired leases", { expired, batches });
    return { expired, batches, more: batches === SWEEP_MAX_BATCHES && expired === SWEEP_MAX_BATCHES * SWEEP_BATCH_SIZE };
  },
);
