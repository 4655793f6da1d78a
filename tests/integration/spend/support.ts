// What the spend tests share: the budget and usage routes called as curl would (the shared
// route table of tests/support/api.ts does not list them), a lease opened as the app does with
// the dispatch's data kept, and the usage rows read back.
import { asc, eq } from "drizzle-orm";
import * as budgetRoute from "@/app/api/org/budget/route";
import * as usageRoute from "@/app/api/usage/route";
import { modelUsage } from "@/db/schema";
import type { Db } from "@/db/client";
import { openLease, type LeaseDispatch } from "@/lib/leases";
import type { ApiResponse } from "../../support/api";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const ROUTES: Record<string, Record<string, Handler | undefined>> = {
  "/api/org/budget": budgetRoute as never,
  "/api/usage": usageRoute as never,
};

export async function spendApi(
  method: string,
  path: string,
  opts: { cookie?: string; json?: unknown; raw?: string } = {},
): Promise<ApiResponse> {
  const handler = ROUTES[path]?.[method];
  if (!handler) return { status: 405, body: null, headers: new Headers() };
  const headers = new Headers();
  if (opts.cookie) headers.set("cookie", opts.cookie);
  const body = opts.raw ?? (opts.json === undefined ? undefined : JSON.stringify(opts.json));
  if (body !== undefined) headers.set("content-type", "application/json");
  const res = await handler(new Request(`http://127.0.0.1:3000${path}`, { method, headers, body }), { params: Promise.resolve({}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

export const NO_CAPS = {
  organization_daily_cents: null,
  organization_monthly_cents: null,
  member_daily_cents: null,
  member_monthly_cents: null,
};

export type Opened = { leaseId: string; actorId: string; invoiceId: string; purpose: string; runNonce: string };

/** Opens a lease through lib/leases as the app does, keeping the lease/opened data the dispatch would send. */
export async function openedLease(db: Db, actorId: string, invoiceId: string, purpose = "summarize_invoice", ttlSeconds = 60) {
  let sent: Opened | undefined;
  const dispatch: LeaseDispatch = {
    async leaseOpened(lease) {
      sent = { leaseId: lease.id, actorId: lease.actorId, invoiceId: lease.invoiceId, purpose: lease.purpose, runNonce: lease.runNonce };
    },
    async leaseClosed() {},
  };
  const opened = await openLease(db, { actorId, sessionId: null, invoiceId, purpose, ttlSeconds }, dispatch);
  if (!opened.ok || !sent) throw new Error(`open failed: ${JSON.stringify(opened)}`);
  return { lease: opened.lease, data: sent };
}

export async function usageRows(db: Db, leaseId: string) {
  return db.select().from(modelUsage).where(eq(modelUsage.leaseId, leaseId)).orderBy(asc(modelUsage.id));
}

/** Sets process.env for the duration of a test; returns the function that restores it. */
export function withEnv(values: Record<string, string | undefined>): () => void {
  const saved = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
