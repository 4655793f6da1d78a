// `npm start`: the production server. Next.js through its programmatic API (the request
// handler `next start` itself uses) behind a thin gate that answers, before Next.js sees them,
// the requests Next.js 16.4.6 answered with a 500 before proxy.ts or any route of ours ran
// (docs/decisions/0048-a-method-gate-in-front-of-next.md):
//   - a method the path does not serve is 405 with the path's `Allow`: TRACE (undici's Request,
//     which Next builds for proxy.ts, refuses it), WebDAV's and the other methods Node parses,
//     and a write to a built static file (Next answers it by rendering a /405 page the App
//     Router does not have);
//   - CONNECT is 405 too (Node would drop the connection unanswered);
//   - OPTIONS on a page or a static file is 204 with its `Allow` (route handlers answer it
//     themselves, from the methods they export);
//   - a request target that is no path is 400 (`GET *` was a 500), but `OPTIONS *`, 204.
// Everything else reaches Next.js untouched. Plain JavaScript, so `npm start` needs nothing
// but Node and the production dependencies.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/**
 * The app's route handlers (app/**\/route.ts) and the methods each exports. Next.js adds HEAD
 * where there is GET, and OPTIONS. tests/integration/hostile/hostile-http.built-app.test.ts holds this list to
 * the build's routes and to Next.js's own OPTIONS answer for each.
 */
const ROUTE_HANDLERS = {
  "/api/approvals": ["GET"],
  "/api/approvals/[id]": ["GET"],
  "/api/approvals/[id]/approve": ["POST"],
  "/api/approvals/[id]/decline": ["POST"],
  "/api/audit/export": ["GET"],
  "/api/health": ["GET"],
  "/api/inngest": ["GET", "POST", "PUT"],
  "/api/invitations/[token]": ["GET", "POST"],
  "/api/invoices": ["GET", "POST"],
  "/api/invoices/[id]": ["GET", "PATCH"],
  "/api/invoices/[id]/events": ["GET"],
  "/api/invoices/[id]/owner": ["PUT"],
  "/api/invoices/[id]/status": ["POST"],
  "/api/invoices/export": ["GET"],
  "/api/invoices/import": ["POST"],
  "/api/leases": ["POST"],
  "/api/leases/[id]": ["GET"],
  "/api/leases/[id]/apply": ["POST"],
  "/api/leases/[id]/cancel": ["POST"],
  "/api/leases/[id]/changes": ["GET"],
  "/api/leases/[id]/events": ["GET"],
  "/api/leases/[id]/receipt": ["GET"],
  "/api/leases/[id]/submit": ["POST"],
  "/api/org/budget": ["GET", "PUT"],
  "/api/org/invitations": ["GET", "POST"],
  "/api/org/invitations/[id]": ["DELETE"],
  "/api/org/members": ["GET"],
  "/api/org/members/[id]": ["DELETE", "PATCH"],
  "/api/org/policies": ["GET"],
  "/api/org/policies/[purpose]": ["PUT"],
  "/api/purposes": ["GET"],
  "/api/ready": ["GET"],
  "/api/session": ["DELETE", "GET", "POST"],
  "/api/usage": ["GET"],
  "/sign-in/reset": ["GET"],
};
// Routes rendered at build time (app/favicon.ico's force-static route, the app/icon.svg
// metadata file): Next.js serves them as files, like the build's own.
const PRERENDERED = new Set(["/favicon.ico", "/icon.svg"]);
// Pages, and paths no route matches (Next renders the not-found page): POST carries server
// actions and plain form posts, which proxy.ts and the actions judge.
const PAGE_ALLOW = ["GET", "HEAD", "OPTIONS", "POST"];
// The build's files, the prerendered routes above, and the image optimizer (off in next.config.ts: a 404).
const STATIC_ALLOW = ["GET", "HEAD", "OPTIONS"];

// Every method served somewhere: what a request with no path (CONNECT, `OPTIONS *`) is told.
const SERVER_ALLOW = [...new Set([...PAGE_ALLOW, ...Object.values(ROUTE_HANDLERS).flat()])].sort();

/** Next.js's own `Allow` for a route handler: its methods, HEAD with GET, OPTIONS, sorted. */
function handlerAllow(methods) {
  const allow = new Set([...methods, "OPTIONS"]);
  if (allow.has("GET")) allow.add("HEAD");
  return [...allow].sort();
}

// Static segments first, as Next.js matches them: /api/invoices/export before /api/invoices/[id].
const HANDLERS = Object.entries(ROUTE_HANDLERS)
  .sort(([a], [b]) => Number(a.includes("[")) - Number(b.includes("[")))
  .map(([pattern, methods]) => ({
    // A dynamic segment is one path segment; a trailing slash is Next's to redirect.
    match: new RegExp(`^${pattern.replace(/[.]/g, "\\.").replace(/\[[^\]]+\]/g, "[^/]+")}/?$`),
    allow: handlerAllow(methods),
  }));

/** What the path allows, and whether a route handler (which answers OPTIONS itself) serves it. */
function routeOf(pathname) {
  if (pathname.startsWith("/_next/static/") || pathname === "/_next/image" || PRERENDERED.has(pathname)) {
    return { allow: STATIC_ALLOW, handler: false };
  }
  for (const h of HANDLERS) if (h.match.test(pathname)) return { allow: h.allow, handler: true };
  return { allow: PAGE_ALLOW, handler: false };
}

/** The path of a request target, origin-form (`/a?b`) or absolute-form (`http://h/a?b`); null for anything else. */
function pathOf(target) {
  if (target.startsWith("/")) {
    const end = target.search(/[?#]/);
    return end < 0 ? target : target.slice(0, end);
  }
  return /^https?:\/\//i.test(target) && URL.canParse(target) ? new URL(target).pathname : null;
}

// As proxy.ts puts on every API answer (docs/decisions/0011): an answer that renders nothing.
const REFUSAL_HEADERS = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

const BODIES = { 400: "invalid_request", 405: "method_not_allowed" };

function answer(res, status, allow) {
  const body = BODIES[status] ?? "";
  res.writeHead(status, {
    ...REFUSAL_HEADERS,
    ...(allow ? { allow: allow.join(", ") } : {}),
    ...(body ? { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body) } : {}),
  });
  res.end(body);
  return true;
}

/** Answers the request itself when Next.js must not see it; says whether it did. */
export function gate(req, res) {
  const pathname = pathOf(req.url ?? "");
  // A target that is no path: `OPTIONS *` asks about the server; anything else is malformed
  // (RFC 9112 §3.2), and Next.js answered `GET *` and the like with a 500 (found by the fuzzer).
  if (pathname === null) {
    return req.method === "OPTIONS" && req.url === "*" ? answer(res, 204, SERVER_ALLOW) : answer(res, 400);
  }
  const { allow, handler } = routeOf(pathname);
  if (!allow.includes(req.method)) return answer(res, 405, allow);
  if (req.method === "OPTIONS" && !handler) return answer(res, 204, allow);
  return false;
}

// Every log line written while a request is handled carries its id (lib/log-context.ts holds
// the same store, by the same registered symbol). A client's X-Request-Id is kept if it is
// short and plain (lib/log-context.ts saneRequestId: the same test), else the server makes one;
// the answer says which, so a client can quote it.
const LOG_CONTEXT = Symbol.for("claimcheck.log-context");
globalThis[LOG_CONTEXT] ??= new AsyncLocalStorage();
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id, set on the request (for proxy.ts and the routes) and on the answer. */
export function requestId(req, res) {
  const given = req.headers["x-request-id"];
  const id = typeof given === "string" && SANE_REQUEST_ID.test(given) ? given : randomUUID();
  req.headers["x-request-id"] = id;
  res.setHeader("x-request-id", id);
  return id;
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: "string", short: "p" },
      hostname: { type: "string", short: "H" },
      keepAliveTimeout: { type: "string" },
    },
  });
  // As `next start`: production unless told otherwise, PORT or -p (default 3000), every
  // interface unless -H.
  process.env.NODE_ENV ??= "production";
  const port = Number(values.port ?? process.env.PORT ?? 3000);
  const hostname = values.hostname ?? process.env.HOSTNAME;
  process.title = "claimcheck-server";

  const server = http.createServer();
  if (values.keepAliveTimeout) server.keepAliveTimeout = Number(values.keepAliveTimeout);
  // Imported once NODE_ENV is set, as `next start` has it set before Next.js loads.
  const { default: next } = await import("next");
  const dir = import.meta.dirname;
  const app = next({ dev: false, dir, hostname: hostname ?? "localhost", port, httpServer: server });
  await app.prepare();
  const handle = app.getRequestHandler();

  server.on("request", (req, res) => {
    if (gate(req, res)) return;
    const id = requestId(req, res);
    globalThis[LOG_CONTEXT].run({ request_id: id }, () => handle(req, res)).catch((error) => {
      // As `next start` does with what escapes Next's own handler.
      console.error(`Failed to handle request for ${req.url}`, error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  });
  // CONNECT names no path (Node hands it over as a raw socket): the server's methods are its Allow.
  server.on("connect", (_req, socket) => {
    const allow = SERVER_ALLOW.join(", ");
    socket.end(`HTTP/1.1 405 Method Not Allowed\r\nallow: ${allow}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, resolve);
  });
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  const shown = `http://${hostname ?? "localhost"}:${bound}`;
  process.env.PORT = String(bound);
  console.info(`▲ Next.js behind server.mjs, ready on ${shown}`);

  // As `next start`: finish the requests under way, then close Next (its `after` work), then exit.
  let closing = false;
  const stop = (signal) => {
    if (closing) return;
    closing = true;
    server.close(() => {
      void app.close().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
    });
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

// Run as the entry point (`node server.mjs`); imported, it only lends `gate` (to measure it).
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
