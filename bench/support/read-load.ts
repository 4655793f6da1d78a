// `GET /api/leases/:id` in a loop for a while: one client per lease, each with its own cookie.
import { performance } from "node:perf_hooks";
import { http } from "@/tests/harness/app-client";

/** Reads each lease as fast as its client can for `seconds`: the 200s, the other answers, and every request's ms. */
export async function readLeasesFor(url: string, clients: { leaseId: string; cookie: string }[], seconds: number) {
  let reads = 0;
  let failures = 0;
  const ms: number[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    clients.map(async ({ leaseId, cookie }) => {
      while (performance.now() < until) {
        const t = performance.now();
        const res = await http(url, "GET", `/api/leases/${leaseId}`, { cookie });
        ms.push(performance.now() - t);
        if (res.status === 200) reads++;
        else failures++;
      }
    }),
  );
  return { reads, failures, seconds: (performance.now() - started) / 1000, ms };
}
