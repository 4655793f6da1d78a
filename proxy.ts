// Runs before every route (Next.js 16 "proxy", formerly middleware): security headers on
// every page and API answer, a fresh CSP nonce per page request, and the cross-site guard
// for server actions. The API's own guard is in app/_lib/http.ts (refuseCrossSite).
// Why each header and which proxy headers are trusted: docs/decisions/0011-cross-site-writes-and-headers.md.
import { NextResponse, type NextRequest } from "next/server";
import { saneRequestId } from "@/lib/log-context";
import { isForeignOrigin, isStateChanging, ownHost } from "@/lib/origin";
import { hasBrokenActionBody, hasMalformedPath, hasMalformedRouterState } from "@/lib/request-guards";
import { REQUEST_PATH_HEADER } from "@/lib/return-path";

const DEV = process.env.NODE_ENV === "development";

/** Behind TLS: the URL says https (Next derives it from X-Forwarded-Proto) or the proxy says so. */
function servedOverHttps(request: NextRequest): boolean {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return request.nextUrl.protocol === "https:" || forwarded === "https";
}

function pagePolicy(nonce: string, https: boolean): string {
  return [
    "default-src 'self'",
    // 'strict-dynamic': only scripts carrying the nonce, and what they load, run. React's dev
    // tooling evaluates code (server error stacks), so 'unsafe-eval' in development only.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${DEV ? " 'unsafe-eval'" : ""}`,
    // Development injects styles as inline <style> tags without a nonce.
    `style-src 'self' ${DEV ? "'unsafe-inline'" : `'nonce-${nonce}'`}`,
    "img-src 'self' data: blob:",
    "font-src 'self'",
    // 'self' covers the SSE stream and, in development, the HMR websocket (same host and port).
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(https ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

// JSON and event streams render nothing; they may load nothing and be framed by no one.
const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

function secure(response: NextResponse, policy: string, https: boolean): NextResponse {
  const h = response.headers;
  h.set("content-security-policy", policy);
  h.set("x-frame-options", "DENY"); // frame-ancestors for browsers without CSP level 2
  h.set("x-content-type-options", "nosniff");
  // Not "no-referrer": that makes browsers send `Origin: null` on our own form posts, which
  // the cross-site guard refuses. "same-origin" tells other sites nothing (invoice ids live in URLs).
  h.set("referrer-policy", "same-origin");
  h.set("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()");
  h.set("cross-origin-opener-policy", "same-origin");
  // Browsers ignore HSTS received over plain HTTP, so a forged X-Forwarded-Proto gains nothing.
  if (https) h.set("strict-transport-security", "max-age=31536000; includeSubDomains");
  return response;
}

function refusal(status: number, code: string, isApi: boolean, https: boolean): NextResponse {
  const response = isApi
    ? NextResponse.json({ detail: code }, { status, headers: { "cache-control": "no-store" } })
    : new NextResponse(code, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
  return secure(response, API_POLICY, https);
}

function withoutRscParam(search: string): string {
  const params = new URLSearchParams(search);
  if (!params.has("_rsc")) return search;
  params.delete("_rsc");
  return params.size ? `?${params}` : "";
}

export async function proxy(request: NextRequest): Promise<NextResponse> {
  // The request's id: server.mjs has set one already (and logs under it); under `next dev` or
  // a bare `next start` it is made here, so every answer and route sees one (lib/log-context.ts).
  const requestId = saneRequestId(request.headers.get("x-request-id")) ?? crypto.randomUUID();
  const response = await guarded(request, requestId);
  response.headers.set("x-request-id", requestId);
  return response;
}

async function guarded(request: NextRequest, requestId: string): Promise<NextResponse> {
  const https = servedOverHttps(request);
  const isApi = request.nextUrl.pathname.startsWith("/api/");

  // Next.js would answer these with a 500 from inside its router or action handler (lib/request-guards.ts).
  if (hasMalformedPath(request.nextUrl.pathname)) return refusal(400, "invalid_request", isApi, https);
  // Its client router's state header too; the proxy sees it because of skipProxyUrlNormalize.
  if (hasMalformedRouterState(request.headers)) return refusal(400, "invalid_request", isApi, https);

  // Any write with a foreign Origin stops here: server actions and page posts, and API paths
  // too (app/_lib/http.ts refuses them again), because a path under /api/ that no route matches is
  // rendered as the not-found page, where Next would take a Next-Action header and answer its
  // own CSRF refusal with a 500 (found by fuzzing). Next's own action check compares Origin
  // with X-Forwarded-Host, which any client can set, so we also replace that header with our
  // own host below before Next sees it.
  if (isStateChanging(request.method) && isForeignOrigin(request.headers, request.url)) {
    return refusal(403, "cross_origin", isApi, https);
  }
  // After the Origin check: a foreign request is refused before its body is read. API paths
  // too: one that no route matches is rendered as the not-found page, where Next reads a
  // multipart POST as a form's server action and fails on a body it cannot parse with a 500
  // (found by the wire fuzzer: POST /api/invoices/<id>/..%2F..%2Fsession, multipart, JSON body).
  if (await hasBrokenActionBody(request)) return refusal(400, "invalid_request", isApi, https);

  const headers = new Headers(request.headers);
  headers.set("x-request-id", requestId);
  const host = ownHost(request.headers, request.url);
  if (host) headers.set("x-forwarded-host", host);
  else headers.delete("x-forwarded-host");

  if (isApi) return secure(NextResponse.next({ request: { headers } }), API_POLICY, https);

  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const policy = pagePolicy(nonce, https);
  // Next.js reads the nonce from the request's CSP header and puts it on its own scripts.
  headers.set("content-security-policy", policy);
  // The page asked for, so a page that sends its visitor to sign in can name it as `next`
  // (app/_lib/actor.ts). Always ours: a client's own value is overwritten.
  // skipProxyUrlNormalize leaves Next's cache-busting `_rsc` parameter in the URL; it is no part of the page.
  headers.set(REQUEST_PATH_HEADER, `${request.nextUrl.pathname}${withoutRscParam(request.nextUrl.search)}`);
  return secure(NextResponse.next({ request: { headers } }), policy, https);
}

export const config = {
  // Everything but the build's static files, which carry no script context of their own.
  // The slash matters: Next renders its not-found page for `/_next/static` itself and for
  // `/_next/image` (the optimizer is off), where a broken router state header is its 500
  // unless the guard above sees it first (found by the wire fuzzer, decision 0048).
  matcher: ["/((?!_next/static/).*)"],
};
