import type { Db } from "@/db/client";
import { PASSWORD } from "./db";
import type { startEventSink } from "./event-sink";
import * as sessionRoute from "@/app/api/session/route";
import * as invoicesRoute from "@/app/api/invoices/route";
import * as invoiceRoute from "@/app/api/invoices/[id]/route";
import * as invoiceStatusRoute from "@/app/api/invoices/[id]/status/route";
import * as exportRoute from "@/app/api/invoices/export/route";
import * as importRoute from "@/app/api/invoices/import/route";
import * as invoiceOwnerRoute from "@/app/api/invoices/[id]/owner/route";
import * as leasesRoute from "@/app/api/leases/route";
import * as leaseRoute from "@/app/api/leases/[id]/route";
import * as applyRoute from "@/app/api/leases/[id]/apply/route";
import * as cancelRoute from "@/app/api/leases/[id]/cancel/route";
import * as orgInvitationsRoute from "@/app/api/org/invitations/route";
import * as orgInvitationRoute from "@/app/api/org/invitations/[id]/route";
import * as orgMembersRoute from "@/app/api/org/members/route";
import * as orgMemberRoute from "@/app/api/org/members/[id]/route";
import * as invitationRoute from "@/app/api/invitations/[token]/route";
import * as orgBudgetRoute from "@/app/api/org/budget/route";
import * as usageRoute from "@/app/api/usage/route";
import * as auditExportRoute from "@/app/api/audit/export/route";
import * as submitRoute from "@/app/api/leases/[id]/submit/route";
import * as receiptRoute from "@/app/api/leases/[id]/receipt/route";
import * as policiesRoute from "@/app/api/org/policies/route";
import * as policyRoute from "@/app/api/org/policies/[purpose]/route";
import * as approvalsRoute from "@/app/api/approvals/route";
import * as approvalRoute from "@/app/api/approvals/[id]/route";
import * as approveRoute from "@/app/api/approvals/[id]/approve/route";
import * as declineRoute from "@/app/api/approvals/[id]/decline/route";

export const sink = () => (globalThis as { __eventSink?: Awaited<ReturnType<typeof startEventSink>> }).__eventSink!;

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

// The route table of the app, so tests address the API by method and path as curl would.
const ROUTES: [string, RegExp, Record<string, Handler | undefined>][] = [
  ["session", /^\/api\/session$/, sessionRoute as never],
  ["invoices", /^\/api\/invoices$/, invoicesRoute as never],
  ["export", /^\/api\/invoices\/export$/, exportRoute as never],
  // Before `invoice`: a static segment wins over [id], as in Next.js.
  ["import", /^\/api\/invoices\/import$/, importRoute as never],
  ["invoice", /^\/api\/invoices\/(?<id>[^/]+)$/, invoiceRoute as never],
  ["status", /^\/api\/invoices\/(?<id>[^/]+)\/status$/, invoiceStatusRoute as never],
  ["invoice owner", /^\/api\/invoices\/(?<id>[^/]+)\/owner$/, invoiceOwnerRoute as never],
  ["leases", /^\/api\/leases$/, leasesRoute as never],
  ["lease", /^\/api\/leases\/(?<id>[^/]+)$/, leaseRoute as never],
  ["apply", /^\/api\/leases\/(?<id>[^/]+)\/apply$/, applyRoute as never],
  ["cancel", /^\/api\/leases\/(?<id>[^/]+)\/cancel$/, cancelRoute as never],
  ["org-invitations", /^\/api\/org\/invitations$/, orgInvitationsRoute as never],
  ["org-invitation", /^\/api\/org\/invitations\/(?<id>[^/]+)$/, orgInvitationRoute as never],
  ["org-members", /^\/api\/org\/members$/, orgMembersRoute as never],
  ["org-member", /^\/api\/org\/members\/(?<id>[^/]+)$/, orgMemberRoute as never],
  ["invitation", /^\/api\/invitations\/(?<token>[^/]+)$/, invitationRoute as never],
  ["org-budget", /^\/api\/org\/budget$/, orgBudgetRoute as never],
  ["usage", /^\/api\/usage$/, usageRoute as never],
  ["audit-export", /^\/api\/audit\/export$/, auditExportRoute as never],
  ["submit", /^\/api\/leases\/(?<id>[^/]+)\/submit$/, submitRoute as never],
  ["receipt", /^\/api\/leases\/(?<id>[^/]+)\/receipt$/, receiptRoute as never],
  ["org-policies", /^\/api\/org\/policies$/, policiesRoute as never],
  ["org-policy", /^\/api\/org\/policies\/(?<purpose>[^/]+)$/, policyRoute as never],
  ["approvals", /^\/api\/approvals$/, approvalsRoute as never],
  ["approval", /^\/api\/approvals\/(?<id>[^/]+)$/, approvalRoute as never],
  ["approve", /^\/api\/approvals\/(?<id>[^/]+)\/approve$/, approveRoute as never],
  ["decline", /^\/api\/approvals\/(?<id>[^/]+)\/decline$/, declineRoute as never],
];

export type ApiResponse = { status: number; body: any; headers: Headers };

export async function api(
  method: string,
  path: string,
  opts: { cookie?: string; json?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const pathname = path.split("?")[0]!;
  for (const [, pattern, mod] of ROUTES) {
    const match = pattern.exec(pathname);
    if (!match) continue;
    const handler = mod[method];
    if (!handler) return { status: 405, body: null, headers: new Headers() };
    const headers = new Headers(opts.headers);
    if (opts.cookie) headers.set("cookie", opts.cookie);
    const body = opts.raw ?? (opts.json === undefined ? undefined : JSON.stringify(opts.json));
    if (body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
    const req = new Request(`http://127.0.0.1:3000${path}`, { method, headers, body });
    const res = await handler(req, { params: Promise.resolve({ ...(match.groups ?? {}) }) });
    const text = await res.text();
    // A CSV download (the export) comes back as its text.
    const isJson = res.headers.get("content-type")?.includes("json") ?? true;
    return { status: res.status, body: text ? (isJson ? JSON.parse(text) : text) : null, headers: res.headers };
  }
  throw new Error(`no route for ${method} ${path}`);
}

/** Signs in through the real route and returns the session cookie to send back (not the device cookie). */
export async function signInCookie(email: string, password = PASSWORD): Promise<string> {
  const res = await api("POST", "/api/session", { json: { email, password } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  return sessionCookieFrom(res.headers);
}

export function cookieFrom(headers: Headers): string {
  return headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

/** The session cookie alone, without the device cookie sign-in also sets (lib/device-cookie.ts). */
export function sessionCookieFrom(headers: Headers): string {
  return cookieFrom(headers)
    .split("; ")
    .filter((c) => c.startsWith("claimcheck_session="))
    .join("; ");
}

export type { Db };
