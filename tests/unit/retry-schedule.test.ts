// The generate function's retry arithmetic (inngest/retry-schedule.ts) counts on the real
// Inngest server's schedule (inngest/inngest pkg/backoff, TableBackoff), which the local
// stand-in follows too (its own test: packages/inngest-local/tests/backoff.test.ts).
import { describe, expect, it } from "vitest";
import { RETRY_TABLE_MS } from "@claimcheck/inngest-local";
import { NEXT_RETRY_MIN_MS } from "@/inngest/retry-schedule";

const REAL_MS = [15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_200_000, 2_400_000, 3_600_000, 7_200_000];

describe("the retry schedule the generate function counts on", () => {
  it("is the real server's table, and the one the local stand-in runs", () => {
    expect([...NEXT_RETRY_MIN_MS]).toEqual(REAL_MS);
    expect([...NEXT_RETRY_MIN_MS]).toEqual([...RETRY_TABLE_MS]);
  });
});
