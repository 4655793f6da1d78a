// The stand-in's HTTP API as one route table: what the SDK calls (events, register,
// checkpoints), the Dev Server API its test helpers read (GET /dev, /v0/gql), the JSON
// inspection and control routes, and the dashboard. Each route names the guard it needs;
// anything not in the table is a 404 and an ERROR line, never a silent answer.
import type http from "node:http";
import { nextCronTime } from "./cron";
import { appIdOf, executeGql, type LocalState } from "./gql";
import { LIVE_JS, dashboardAction, errorPage, renderDashboard, type DashboardActions } from "./dashboard";
import { messageOf } from "./util";
import type { Context } from "./context";
import type { Registry } from "./registry";
import type { Executor } from "./executor";
import type { MetadataUpdate, Op } from "./types";

type Call = {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  url: URL;
  path: string;
  /** The route pattern's captures, %-decoded. */
  params: string[];
  json: (status: number, body: unknown) => void;
};
/** A guard answers (and returns true) when the request may not go on. */
type Guard = (c: Call) => boolean;
type Route = { method: "GET" | "POST"; path: string | RegExp; guards?: Guard[]; handle: (c: Call) => unknown };

/** Dashboard responses: no script but the dashboard's own (/ui/live.js), no framing. */
const HTML_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

async function readText(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 8 * 1024 * 1024) throw new Error("body over 8 MiB");
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const text = await readText(req);
  return text ? JSON.parse(text) : undefined;
}

export function createRoutes(ctx: Context, registry: Registry, executor: Executor, state: LocalState, actions: DashboardActions, address: () => { host: string; port: number }) {
  const { log } = ctx;
  const { fns } = registry;
  const { runs } = executor;

  // The dashboard's writes are form POSTs: a cross-site page could submit them, so they must
  // come from one of this server's own origins (browsers send Origin on every POST). Host is
  // checked on every route (route() below), so a rebound DNS name reaches nothing.
  const ownHosts = () => {
    const { host, port } = address();
    return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${host.includes(":") ? `[${host}]` : host}:${port}`]);
  };
  const sameOrigin = (req: http.IncomingMessage, requireOrigin: boolean) => {
    const origin = req.headers.origin;
    if (origin === undefined) return !requireOrigin;
    try {
      const o = new URL(origin);
      return o.protocol === "http:" && ownHosts().has(o.host);
    } catch {
      return false;
    }
  };

  /** The dashboard's cookie: one name per port, as cookies are shared by every port of a host. */
  const cookieName = () => `inngest_local_${address().port}`;
  const cookieOf = (req: http.IncomingMessage) => {
    for (const part of String(req.headers.cookie ?? "").split(";")) {
      const at = part.indexOf("=");
      if (at > 0 && part.slice(0, at).trim() === cookieName()) return part.slice(at + 1).trim();
    }
    return undefined;
  };
  // In self-hosted mode the control plane shows run nonces and invoice data, and can cancel
  // runs: it needs a credential (ctx.operatorAuthorized). Dev mode stays open, as the dev server.
  const operator: Guard = ({ req, res, url, path, json }) => {
    if (ctx.operatorAuthorized(req, cookieOf(req))) return false;
    log(`ERROR refused ${req.method} ${url.pathname} without a credential (401)`);
    const isPage = path === "/" || path.startsWith("/ui/");
    if (!isPage) {
      res.setHeader("www-authenticate", 'Bearer realm="inngest-local"');
      json(401, { error: "this server runs self-hosted: send the signing key as a bearer, or the dashboard token printed at start" });
      return true;
    }
    res.writeHead(401, HTML_HEADERS);
    res.end(errorPage(state, 401, "Open the dashboard through the login URL this server printed at start (…/ui/login?token=…)."));
    return true;
  };
  const dashboardForm: Guard = ({ req, res, url }) => {
    if (!sameOrigin(req, true) || (req.headers["sec-fetch-site"] && req.headers["sec-fetch-site"] !== "same-origin")) {
      log(`ERROR refused a dashboard ${req.method} ${url.pathname} from another origin (${String(req.headers.origin ?? "no Origin")}) (403)`);
      res.writeHead(403, HTML_HEADERS);
      res.end(errorPage(state, 403, "This button works from the dashboard's own page only."));
      return true;
    }
    if (!/^application\/x-www-form-urlencoded\b/i.test(String(req.headers["content-type"] ?? ""))) {
      res.writeHead(415, HTML_HEADERS);
      res.end(errorPage(state, 415, "Expected a form submission."));
      return true;
    }
    return false;
  };
  // The JSON control routes: curl and tests send no Origin; a browser page from elsewhere does.
  const noOtherSite: Guard = ({ req, url, json }) => {
    if (sameOrigin(req, false)) return false;
    log(`ERROR refused ${req.method} ${url.pathname} from another origin (${String(req.headers.origin)}) (403)`);
    json(403, { error: "cross-origin request refused" });
    return true;
  };
  const sdkBearer =
    (what: string, body: Record<string, unknown>): Guard =>
    ({ req, url, json }) => {
      if (ctx.sdkAuthorized(req)) return false;
      log(`ERROR refused ${what === "register" ? "a register call" : `${req.method} ${url.pathname}`} without the signing key's bearer (401)`);
      json(401, body);
      return true;
    };

  const dashboardPage = ({ res, path, url, json }: Call) => {
    const page = renderDashboard(state, path, url.searchParams);
    if (!page) return notFound({ json, path, url } as Call);
    res.writeHead(page.status, HTML_HEADERS);
    res.end(page.html);
  };
  /** Server APIs of features the stand-in does not have, named so the failure says which. */
  const UNSUPPORTED: [RegExp, string][] = [
    [/^\/v1\/http\//, "durable endpoints in async mode (client.endpoint: the run's output after it went async)"],
    [/^\/v1\/realtime\//, "realtime (publish, subscribe, streamed endpoint output)"],
    [/^\/v0\/connect\//, "connect (worker WebSocket connections)"],
    [/^\/v1\/traces\/userland$/, "userland OpenTelemetry spans (extended traces)"],
    [/^\/v1\/signals$/, "signals (step.waitForSignal)"],
  ];
  const notFound = ({ req, url, json }: Pick<Call, "req" | "url" | "json">) => {
    const feature = UNSUPPORTED.find(([re]) => re.test(url.pathname))?.[1];
    const what = feature ? `inngest-local does not support ${feature}: ${req.method} ${url.pathname}` : `inngest-local does not implement ${req.method} ${url.pathname}`;
    log(`ERROR unsupported route ${req.method} ${url.pathname}: ${feature ? `${feature} not supported` : "not implemented"} by inngest-local`);
    json(404, { error: what, status: 404 });
  };

  const table: Route[] = [
    { method: "GET", path: "/health", handle: ({ json }) => json(200, { ok: true }) },

    // What the SDK calls.
    {
      method: "POST",
      path: /^\/e\/([^/]+)$/,
      handle: async ({ req, params: [key], json }) => {
        // As the real server answers an unknown key; the SDK reports it as "Event key not found".
        if (!ctx.eventKeyOk(key!)) {
          log(`ERROR refused events sent without a valid event key (401)`);
          return json(401, { ids: [], status: 401, error: "Event key not found" });
        }
        try {
          const body = await readBody(req);
          const ids = executor.ingest(Array.isArray(body) ? body : [body], req.headers["x-inngest-event-id-seed"] as string | undefined);
          return json(200, { ids, status: 200 });
        } catch (e) {
          log(`ERROR rejected events: ${messageOf(e)}`);
          return json(400, { ids: [], status: 400, error: messageOf(e) });
        }
      },
    },
    {
      method: "POST",
      path: "/fn/register",
      guards: [sdkBearer("register", { status: 401, error: "Unauthorized", modified: false })],
      handle: async ({ req, json }) => {
        const body = (await readBody(req)) as { url?: string; appName?: string; functions?: unknown[]; sdk?: string; framework?: string };
        if (!body?.url || !Array.isArray(body.functions)) return json(400, { status: 400, error: "expected {url, appName, functions}" });
        const modified = registry.register(body.url, body.appName ?? "app", body.functions, { sdk: body.sdk, framework: body.framework });
        return json(200, { ok: true, status: 200, modified });
      },
    },
    {
      method: "POST",
      path: /^\/v1\/checkpoint\/([^/]+)\/async$/,
      guards: [sdkBearer("checkpoint", { status: 401, error: "Unauthorized" })],
      handle: async ({ req, params: [runId], json }) => {
        const run = runs.get(runId!);
        const body = (await readBody(req)) as { steps?: Op[] };
        if (!run) return json(404, { error: "no such run" });
        const out = executor.checkpoint(run, body?.steps ?? []);
        return out.ok ? json(200, {}) : json(409, { error: out.error });
      },
    },

    {
      // Durable endpoints, sync mode: the endpoint creates its run, then reports its steps.
      method: "POST",
      path: "/v1/checkpoint",
      guards: [sdkBearer("checkpoint", { status: 401, error: "Unauthorized" })],
      handle: async ({ req, json }) => {
        const out = executor.newEndpointRun((await readBody(req)) as Parameters<typeof executor.newEndpointRun>[0]);
        if ("error" in out) return json(501, { error: out.error });
        const { run } = out;
        // No `token`: the SDK needs one only to go async, which the stand-in does not do.
        return json(200, { data: { fn_id: run.functionId, app_id: appIdOf(run.fn.appUrl), run_id: run.id, realtime_token: "inngest-local-has-no-realtime" } });
      },
    },
    {
      method: "POST",
      path: /^\/v1\/checkpoint\/([^/]+)\/steps$/,
      guards: [sdkBearer("checkpoint", { status: 401, error: "Unauthorized" })],
      handle: async ({ req, params: [runId], json }) => {
        const run = runs.get(runId!);
        const body = (await readBody(req)) as { steps?: Op[] };
        if (!run) return json(404, { error: "no such run" });
        const out = executor.endpointSteps(run, body?.steps ?? []);
        return "error" in out ? json(run.status === "failed" ? 501 : 409, { error: out.error }) : json(200, {});
      },
    },
    {
      // client.score(), metadata updates from outside the step they target.
      method: "POST",
      path: /^\/v1\/runs\/([^/]+)\/metadata$/,
      guards: [sdkBearer("metadata", { status: 401, error: "Unauthorized" })],
      handle: async ({ req, params: [runId], json }) => {
        const run = runs.get(runId!);
        const body = (await readBody(req)) as { target?: { step_id?: string; span_id?: string }; metadata?: MetadataUpdate[] };
        if (!run) return json(404, { error: "no such run" });
        if (!Array.isArray(body?.metadata)) return json(400, { error: "expected {target, metadata: [...]}" });
        executor.updateMetadata(run, body.target ?? {}, body.metadata);
        return json(200, {});
      },
    },

    // The Dev Server API (the SDK's test helpers read it).
    {
      method: "GET",
      path: "/dev",
      // As `inngest start` (self-hosted), which answers 404 here; the dev server answers its info.
      handle: ({ json }) => (ctx.signingKey ? json(404, { error: "GET /dev is the dev server's; this server runs self-hosted" }) : json(200, registry.devInfo())),
    },
    {
      method: "POST",
      path: "/v0/gql",
      guards: [operator],
      handle: async ({ req, json }) => {
        if (!/^application\/json\b/i.test(String(req.headers["content-type"] ?? ""))) return json(415, { errors: [{ message: "expected content-type application/json" }] });
        let body: unknown;
        try {
          body = await readBody(req);
        } catch (e) {
          return json(400, { errors: [{ message: `body is not JSON: ${messageOf(e)}` }] });
        }
        const result = await executeGql(state, body as Record<string, unknown>);
        return json(result.data === undefined && result.errors ? 400 : 200, result);
      },
    },

    // JSON inspection.
    {
      method: "GET",
      path: "/runs",
      guards: [operator],
      handle: ({ url, json }) => {
        const q = url.searchParams;
        const fn = q.get("function");
        return json(200, executor.listRuns().filter((r) => (!fn || r.functionId === fn || r.functionId.endsWith(`-${fn}`)) && (!q.get("status") || r.status === q.get("status")) && (!q.get("event") || r.eventName === q.get("event"))));
      },
    },
    {
      method: "GET",
      path: /^\/runs\/([^/]+)$/,
      guards: [operator],
      handle: ({ params: [id], json }) => {
        const run = runs.get(id!);
        return run ? json(200, executor.summary(run)) : json(404, { error: "no such run" });
      },
    },
    { method: "GET", path: "/events", guards: [operator], handle: ({ json }) => json(200, executor.events.map((e) => ({ ...e.event, internal_id: e.internalId, received_at: e.receivedAt, runs: e.runs }))) },
    {
      method: "GET",
      path: "/functions",
      guards: [operator],
      handle: ({ json }) =>
        json(200, [...fns.values()].map((f) => ({ id: f.id, name: f.name, app: f.appUrl, maxAttempts: f.maxAttempts, triggers: f.triggers.map((t) => ("cron" in t ? { cron: t.cron.source, next: nextCronTime(t.cron, new Date())?.toISOString() } : { event: t.event, if: t.expr?.source })), problems: f.problems }))),
    },

    // JSON control.
    {
      method: "POST",
      path: "/sync",
      guards: [operator, noOtherSite],
      handle: async ({ json }) => {
        try {
          await registry.syncAll();
          return json(200, { ok: true, functions: [...fns.keys()] });
        } catch (e) {
          return json(502, { ok: false, error: messageOf(e) });
        }
      },
    },
    {
      method: "POST",
      path: /^\/runs\/([^/]+)\/cancel$/,
      guards: [operator, noOtherSite],
      handle: ({ params: [id], json }) => {
        const run = runs.get(id!);
        if (!run) return json(404, { error: "no such run" });
        executor.cancelRun(run, "POST /runs/:id/cancel");
        return json(200, executor.summary(run));
      },
    },
    {
      method: "POST",
      path: /^\/fn\/([^/]+)\/invoke$/,
      guards: [operator, noOtherSite],
      handle: async ({ req, params: [id], json }) => {
        const fn = registry.findFn(id!);
        if (!fn) return json(404, { error: `no function ${id}; known: ${[...fns.keys()].join(", ")}` });
        const body = ((await readBody(req).catch(() => undefined)) ?? {}) as Record<string, unknown>;
        const run = executor.invoke(fn, body);
        return json(200, { ok: true, runId: run?.id ?? null });
      },
    },

    // The dashboard: pages, and its buttons' form posts.
    {
      // The login URL printed at start: its token goes into the dashboard's cookie.
      method: "GET",
      path: "/ui/login",
      handle: ({ res, url }) => {
        const token = url.searchParams.get("token") ?? "";
        if (ctx.dashboardToken && !ctx.dashboardTokenOk(token)) {
          log(`ERROR refused a dashboard login with a wrong token (401)`);
          res.writeHead(401, HTML_HEADERS);
          return res.end(errorPage(state, 401, "That login link is not this server's: use the one it printed at start."));
        }
        const cookie = ctx.dashboardToken ? { "set-cookie": `${cookieName()}=${token}; HttpOnly; SameSite=Strict; Path=/` } : {};
        res.writeHead(303, { location: "/", "cache-control": "no-store", "referrer-policy": "no-referrer", ...cookie });
        res.end();
      },
    },
    {
      // The dashboard's live updates: a static script, no data in it (the pages it fetches are guarded).
      method: "GET",
      path: "/ui/live.js",
      handle: ({ res }) => {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "x-content-type-options": "nosniff", "cache-control": "no-cache" });
        res.end(LIVE_JS);
      },
    },
    { method: "GET", path: /^\/(?:ui\/.*)?$/, guards: [operator], handle: dashboardPage },
    {
      method: "POST",
      path: /^\/ui\/.+$/,
      guards: [operator, dashboardForm],
      handle: async (c) => {
        const out = await dashboardAction(actions, c.path, new URLSearchParams(await readText(c.req)));
        if (!out) return notFound(c);
        if ("location" in out) {
          c.res.writeHead(303, { location: out.location, "cache-control": "no-store" });
          return c.res.end();
        }
        c.res.writeHead(out.status, HTML_HEADERS);
        c.res.end(errorPage(state, out.status, out.message));
      },
    },
  ];

  return async function route(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? "/", "http://local");
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    // Every route, in both modes: a DNS name rebound to 127.0.0.1 must not reach this server.
    if (!ownHosts().has(String(req.headers.host ?? ""))) {
      log(`ERROR refused ${req.method} ${url.pathname} for Host ${JSON.stringify(req.headers.host ?? "")} (421)`);
      return json(421, { error: "this server answers on its own host names only (127.0.0.1, localhost or its bind address)" });
    }
    for (const r of table) {
      if (r.method !== req.method) continue;
      const m = typeof r.path === "string" ? (r.path === path ? [path] : null) : path.match(r.path);
      if (!m) continue;
      const call: Call = { req, res, url, path, params: m.slice(1).map((p) => decodeURIComponent(p)), json };
      if (r.guards?.some((g) => g(call))) return;
      return void (await r.handle(call));
    }
    notFound({ req, url, json });
  };
}
