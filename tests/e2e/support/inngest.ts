// What the run's Inngest stand-in did: its /runs list, filtered to one lease.
import { expect } from "@playwright/test";
type Run = { id: string; functionId: string; status: string; event: { name: string; data: Record<string, unknown> } };

export async function generationRuns(server: "main" | "short", leaseId: string): Promise<Run[]> {
  const base = server === "short" ? process.env.E2E_SHORT_INNGEST_URL : process.env.E2E_MAIN_INNGEST_URL;
  const key = server === "short" ? process.env.E2E_SHORT_INNGEST_SIGNING_KEY : process.env.E2E_MAIN_INNGEST_SIGNING_KEY;
  const res = await fetch(`${base}/runs?function=generate-lease-proposal`, { headers: { authorization: `Bearer ${key}` } });
  if (!res.ok) throw new Error(`GET /runs answered ${res.status}`);
  const runs = (await res.json()) as Run[];
  return runs.filter((run) => run.event?.data?.leaseId === leaseId);
}

/** Waits until the lease's one generation run has ended, by returning or by being cancelled. */
export async function expectRunEnded(server: "main" | "short", leaseId: string): Promise<void> {
  await expect
    .poll(async () => (await generationRuns(server, leaseId)).map((run) => run.status), { timeout: 20_000 })
    .toEqual([expect.stringMatching(/^(completed|cancelled)$/)]);
}
