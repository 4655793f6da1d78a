import "server-only";
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";

// What GET /api/ready asks before a balancer sends an instance traffic: does the database
// answer a query, and does the Inngest server answer its health route? Each within a short
// limit, both at once; nothing written, and no detail of a failure in the answer (the log has it).

export const READY_TIMEOUT_MS = 2_000;

export type Dependency = "database" | "inngest";
export type Readiness = { ok: true } | { ok: false; failed: Dependency[] };

/**
 * The Inngest server the SDK talks to, as the SDK reads the environment: INNGEST_BASE_URL, else
 * in development the dev server of INNGEST_DEV (a URL, or `1` for the default port); null for
 * Inngest Cloud, which is not this deployment's to watch.
 */
export function inngestServerUrl(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.INNGEST_BASE_URL) return env.INNGEST_BASE_URL;
  const dev = env.INNGEST_DEV;
  if (env.NODE_ENV !== "production" && dev && dev !== "0" && dev !== "false") {
    return URL.canParse(dev) ? dev : "http://127.0.0.1:8288";
  }
  return null;
}

function within<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  return new Promise<T>((resolve, reject) => {
    signal.addEventListener("abort", () => reject(new Error(`no answer within ${ms} ms`)), { once: true });
    work(signal).then(resolve, reject);
  });
}

export type ReadinessProbe = {
  db: () => Promise<Db>;
  inngestUrl: string | null;
  timeoutMs?: number;
  fetch?: typeof fetch;
};

/** Both checks, at once; the failed ones named, each with why (for the log only). */
export async function checkReadiness(probe: ReadinessProbe): Promise<{ readiness: Readiness; why: Partial<Record<Dependency, string>> }> {
  const ms = probe.timeoutMs ?? READY_TIMEOUT_MS;
  const doFetch = probe.fetch ?? fetch;
  const checks: Record<Dependency, () => Promise<unknown>> = {
    database: () => within(ms, async () => (await probe.db()).execute(sql`select 1`)),
    inngest: () =>
      probe.inngestUrl === null
        ? Promise.resolve()
        : within(ms, async (signal) => {
            const res = await doFetch(new URL("/health", probe.inngestUrl!), { signal, redirect: "manual" });
            await res.body?.cancel();
            if (!res.ok) throw new Error(`answered ${res.status}`);
          }),
  };
  const names = Object.keys(checks) as Dependency[];
  const results = await Promise.allSettled(names.map((name) => checks[name]()));
  const why: Partial<Record<Dependency, string>> = {};
  results.forEach((r, i) => {
    if (r.status === "rejected") why[names[i]!] = r.reason instanceof Error ? r.reason.message : String(r.reason);
  });
  const failed = names.filter((name) => name in why);
  return { readiness: failed.length ? { ok: false, failed } : { ok: true }, why };
}
