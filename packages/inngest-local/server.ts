// A local stand-in for the Inngest server (`inngest-cli dev`, or `inngest start` in its
// self-hosted mode), which cannot be downloaded here. It speaks the executor-to-SDK protocol
// of the pinned SDK (inngest 4.24.0; see packages/inngest-local/README.md) and drives an app's
// real serve route over HTTP. Self-hosted mode (a signing key and event keys) signs every
// call to the app and checks the app's calls and events, as the real server does; dev mode
// does neither. Dev and test tooling only: nothing in the app imports it.
//
// This file puts the parts together: context.ts (settings), registry.ts (sync and function
// configs), executor.ts (events and runs), routes.ts (the HTTP route table), gql.ts and
// dashboard.ts (the Dev Server API and the pages).
import http from "node:http";
import { nextCronTime } from "./cron";
import { appIdOf, type LocalState } from "./gql";
import type { DashboardActions } from "./dashboard";
import { createContext } from "./context";
import { createRegistry } from "./registry";
import { createExecutor } from "./executor";
import { createRoutes } from "./routes";
import { messageOf } from "./util";
import type { InngestLocal, InngestLocalOptions } from "./types";

export async function startInngestLocal(opts: InngestLocalOptions): Promise<InngestLocal> {
  const ctx = createContext(opts);
  const { log } = ctx;
  const registry = createRegistry(ctx);
  const executor = createExecutor(ctx, registry);

  /** What the GraphQL API and the dashboard read. */
  const state: LocalState = {
    mode: ctx.mode,
    functions: () =>
      [...registry.fns.values()].map((f) => ({
        id: f.id,
        name: f.name,
        appUrl: f.appUrl,
        raw: f.raw,
        url: f.url,
        triggers: f.triggers.map((t) => ("cron" in t ? { cron: t.cron.source, next: nextCronTime(t.cron, new Date())?.toISOString() } : { event: t.event, if: t.expr?.source })),
        maxAttempts: f.maxAttempts,
        concurrency: f.concurrency.length ? Math.min(...f.concurrency.map((c) => c.limit)) : 0,
        problems: f.problems,
      })),
    apps: () =>
      opts.appUrls
        .concat([...registry.appFns.keys()].filter((u) => !opts.appUrls.includes(u)))
        .map((u) => {
          const a = registry.appFns.get(u);
          return { id: appIdOf(u), url: u, name: a?.appName ?? "(not synced yet)", syncedAt: a?.syncedAt, sdk: a?.sdk, framework: a?.framework, functionIds: a?.ids ?? [], pending: !a || registry.pendingSync.has(u) };
        }),
    runs: executor.listRuns,
    run: (id) => {
      const r = executor.runs.get(id);
      return r ? executor.summary(r) : undefined;
    },
    events: () => executor.events.map((e) => ({ ...e, runs: [...e.runs] })),
  };

  const actions: DashboardActions = {
    resync: () => registry.syncAll(),
    cancel: (id) => {
      const run = executor.runs.get(id);
      if (!run || run.status !== "running") return false;
      executor.cancelRun(run, "dashboard (Cancel button)");
      return true;
    },
    rerun: (id) => {
      const run = executor.runs.get(id);
      const fn = run && registry.fns.get(run.functionId);
      if (!run || !fn) return undefined;
      log(`run ${run.id} rerun from the dashboard`);
      // A rerun sees the same trigger event, as the dev server's Rerun does.
      return executor.startRun(fn, structuredClone(run.event))?.id;
    },
    send: (event) => executor.ingest([{ ...event, ts: Date.now() }]),
    eventKeyOk: ctx.eventKeyOk,
  };

  const host = opts.host ?? "127.0.0.1";
  let port = 0;
  const route = createRoutes(ctx, registry, executor, state, actions, () => ({ host, port }));
  const server = http.createServer((req, res) => {
    route(req, res).catch((e) => {
      // A malformed %-escape in the path is the caller's mistake, not ours.
      const status = e instanceof URIError ? 400 : 500;
      log(`ERROR ${req.method} ${req.url}: ${messageOf(e)} (${status})`);
      if (!res.headersSent) res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: messageOf(e) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 8288, host, () => resolve());
  });
  port = (server.address() as { port: number }).port;
  const url = `http://${host}:${port}`;
  log(`listening on ${url} in ${ctx.mode} mode${ctx.signingKey ? " (calls signed; events need the event key)" : " (unsigned)"} (retry schedule ×${ctx.retryScale}, checkpointing ${ctx.checkpointing ? "on" : "off"})`);

  const loginUrl = ctx.dashboardToken ? `${url}/ui/login?token=${ctx.dashboardToken}` : undefined;
  if (loginUrl) log(`dashboard login (sets its cookie; the JSON API takes the signing key or this token as a bearer): ${loginUrl}`);

  executor.scheduleCron();
  for (const appUrl of opts.appUrls) void registry.syncUntilUp(appUrl);
  if (opts.pollMs && opts.pollMs > 0) {
    const poll = () => {
      ctx.later(opts.pollMs!, () => {
        if (ctx.closed) return;
        void Promise.allSettled(opts.appUrls.filter((u) => !registry.pendingSync.has(u)).map((u) => registry.syncApp(u).catch((e) => log(`re-sync of ${u} failed: ${messageOf(e)}`)))).then(poll);
      });
    };
    poll();
  }

  return {
    url,
    port,
    mode: ctx.mode,
    loginUrl,
    runs: executor.listRuns,
    sync: registry.syncAll,
    async close() {
      ctx.closed = true;
      executor.stopAll();
      ctx.clearTimers();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
