// The functions the stand-in knows: each app's sync (in-band PUT, or the SDK's out-of-band
// register call), each function's config read into what the executor needs, and what it
// cannot honour, said at sync and kept as the function's problems.
import { compileExpression } from "./expr";
import { parseCron } from "./cron";
import { canonicalBody } from "./signing";
import { appIdOf } from "./gql";
import { messageOf, parseDelay } from "./util";
import type { Context } from "./context";
import type { FnEntry, Trigger } from "./types";

export type AppEntry = { appName: string; ids: string[]; fingerprint: string; syncedAt: string; sdk?: string; framework?: string };
export type Registry = ReturnType<typeof createRegistry>;

export function createRegistry(ctx: Context) {
  const { log, opts } = ctx;
  const fns = new Map<string, FnEntry>();
  const appFns = new Map<string, AppEntry>();

  function register(appUrl: string, appName: string, configs: unknown[], sdkInfo: { sdk?: string; framework?: string } = {}) {
    const ids: string[] = [];
    for (const raw of configs) {
      const entry = toFnEntry(appUrl, raw as Record<string, unknown>);
      fns.set(entry.id, entry);
      ids.push(entry.id);
    }
    const prev = appFns.get(appUrl);
    for (const old of prev?.ids ?? []) if (!ids.includes(old)) fns.delete(old);
    const fingerprint = JSON.stringify(configs);
    appFns.set(appUrl, { appName, ids, fingerprint, syncedAt: new Date().toISOString(), ...sdkInfo });
    if (prev?.fingerprint === fingerprint) return false;
    log(`synced app "${appName}" at ${appUrl}: ${ids.length} function(s)`);
    for (const id of ids) {
      const f = fns.get(id)!;
      const trig = f.triggers.map((t) => ("cron" in t ? `cron "${t.cron.source}"` : `event "${t.event}"${t.expr ? ` if ${t.expr.source}` : ""}`));
      log(`  fn ${id} <- ${trig.join(", ") || "(no triggers)"}; max attempts ${f.maxAttempts}`);
      for (const p of f.problems) log(`ERROR fn ${id}: ${p}; its runs will fail`);
    }
    return true;
  }

  function toFnEntry(appUrl: string, c: Record<string, unknown>): FnEntry {
    const id = String(c.id);
    const problems: string[] = [];
    const step = (c.steps as Record<string, { runtime?: { type?: string; url?: string }; retries?: { attempts?: number } }> | undefined)?.step;
    if (step?.runtime?.type && step.runtime.type !== "http") problems.push(`runtime "${step.runtime.type}" is not supported (http only)`);
    const compile = (src: string, roots: string[], what: string) => {
      try {
        return compileExpression(src, roots);
      } catch (e) {
        problems.push(`${what}: ${messageOf(e)}`);
        return undefined;
      }
    };
    const triggers: Trigger[] = [];
    for (const t of (c.triggers as Record<string, string>[] | undefined) ?? []) {
      if (t.cron !== undefined) {
        try {
          triggers.push({ cron: parseCron(t.cron) });
          if (t.jitter) problems.push(`cron jitter "${t.jitter}" is not supported`);
        } catch (e) {
          problems.push(messageOf(e));
        }
      } else if (t.event !== undefined) {
        // `prefix/*` is the only wildcard the real server has; any other `*` would never match.
        if (t.event.includes("*") && !/^[^*]+\/\*$/.test(t.event)) problems.push(`trigger "${t.event}": a wildcard must be a whole last segment ("prefix/*")`);
        triggers.push({ event: t.event, expr: t.expression ? compile(t.expression, ["event"], "trigger expression") : undefined });
      }
    }
    const cancel = ((c.cancel as { event: string; if?: string; timeout?: string }[] | undefined) ?? []).map((x) => ({
      event: x.event,
      expr: x.if ? compile(x.if, ["event", "async"], "cancelOn expression") : undefined,
      timeoutMs: x.timeout ? parseDelay(x.timeout, 0) : undefined,
    }));
    const concurrency: FnEntry["concurrency"] = [];
    const rawConc = c.concurrency === undefined ? [] : Array.isArray(c.concurrency) ? c.concurrency : [c.concurrency];
    for (const cc of rawConc as (number | { limit: number; key?: string; scope?: string })[]) {
      const o = typeof cc === "number" ? { limit: cc } : cc;
      if (o.limit > 0) concurrency.push({ limit: o.limit, scope: o.scope ?? "fn", key: o.key ? compile(o.key, ["event"], "concurrency key") : undefined });
    }
    // Config that changes which runs happen or what they see: never ignore silently.
    let batch: FnEntry["batch"];
    const b = c.batchEvents as { maxSize?: number; timeout?: string; key?: string; if?: string } | undefined | null;
    if (b) {
      const maxSize = Number(b.maxSize);
      const timeoutMs = parseDelay(String(b.timeout ?? ""), 0);
      if (!Number.isInteger(maxSize) || maxSize < 1 || !Number.isFinite(timeoutMs) || timeoutMs <= 0) problems.push(`batchEvents ${JSON.stringify(b)}: needs a maxSize of 1 or more and a timeout`);
      else batch = { maxSize, timeoutMs, key: b.key ? compile(b.key, ["event"], "batchEvents key") : undefined, if: b.if ? compile(b.if, ["event"], "batchEvents if") : undefined };
    }
    for (const key of ["rateLimit", "throttle", "debounce", "singleton", "timeouts"]) {
      if (c[key] !== undefined && c[key] !== null) problems.push(`config "${key}" is not supported by inngest-local`);
    }
    if (c.priority) log(`WARN fn ${id}: priority is ignored (runs are not queued behind each other except by concurrency)`);
    return {
      id,
      name: String(c.name ?? id),
      appUrl,
      raw: c,
      url: step?.runtime?.url ?? appUrl,
      triggers,
      maxAttempts: (step?.retries?.attempts ?? 3) + 1,
      cancel,
      concurrency,
      idempotency: typeof c.idempotency === "string" ? compile(c.idempotency, ["event"], "idempotency key") : undefined,
      batch,
      problems,
    };
  }

  /** In-band sync: PUT with x-inngest-sync-kind: in_band and the SDK answers with its configs. */
  async function syncApp(appUrl: string): Promise<void> {
    const bodyText = canonicalBody({ url: appUrl });
    const res = await fetch(appUrl, {
      method: "PUT",
      headers: { ...ctx.appHeaders(bodyText), "x-inngest-sync-kind": "in_band" },
      body: bodyText,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`PUT ${appUrl} answered ${res.status}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { app_id?: string; functions?: unknown[]; sdk_language?: string; sdk_version?: string; framework?: string };
    if (res.headers.get("x-inngest-sync-kind") === "in_band" && Array.isArray(body.functions)) {
      register(appUrl, body.app_id ?? "app", body.functions, { sdk: body.sdk_language ? `${body.sdk_language}:v${body.sdk_version ?? "?"}` : undefined, framework: body.framework });
    } else if (!appFns.has(appUrl)) {
      // Out-of-band: the SDK POSTed /fn/register to its own base URL. If that was
      // not us, we know nothing about its functions; say so.
      throw new Error(`app at ${appUrl} synced out-of-band and did not register here; point its INNGEST_DEV / INNGEST_BASE_URL at this server`);
    }
  }

  const pendingSync = new Set<string>();
  async function syncUntilUp(appUrl: string) {
    pendingSync.add(appUrl);
    for (let attempt = 0; !ctx.closed; attempt++) {
      try {
        await syncApp(appUrl);
        pendingSync.delete(appUrl);
        return;
      } catch (e) {
        if (attempt % 10 === 0) log(`waiting for app at ${appUrl}: ${messageOf(e)}`);
        await new Promise<void>((r) => ctx.later(ctx.syncRetryMs, r));
      }
    }
  }

  function findFn(key: string): FnEntry | undefined {
    if (fns.has(key)) return fns.get(key);
    const matches = [...fns.values()].filter((f) => f.id.endsWith(`-${key}`));
    return matches.length === 1 ? matches[0] : undefined;
  }

  /** GET /dev: the dev server's info, in its shape (functions as synced, with their step URLs). */
  function devInfo() {
    const functions = [...fns.values()].map((f) => {
      const steps = Object.values((f.raw.steps as Record<string, { id: string; name: string; runtime?: { url?: string }; retries?: unknown }>) ?? {}).map((s) => ({
        id: s.id,
        name: s.name,
        uri: s.runtime?.url ?? f.url,
        ...(s.retries !== undefined ? { retries: s.retries } : {}),
      }));
      return { ...f.raw, id: appIdOf(`fn:${f.id}`), name: f.name, slug: f.id, triggers: f.raw.triggers ?? [], steps };
    });
    return {
      version: "inngest-local",
      authed: false,
      startOpts: { sdkURLs: opts.appUrls, poll: Boolean(opts.pollMs), noDiscovery: true },
      functions,
      handlers: [...appFns.entries()].map(([u, a]) => ({ url: u, sdk: { language: a.sdk?.split(":")[0] ?? "js", version: a.sdk?.split(":")[1] ?? "" }, functionIDs: a.ids, updatedAt: a.syncedAt })),
      isSingleNodeService: false,
      isMissingSigningKey: false,
      isMissingEventKeys: false,
      features: {},
    };
  }


  /** Re-sync every app once; throws naming each that failed. */
  async function syncAll() {
    const results = await Promise.allSettled(opts.appUrls.map((u) => syncApp(u)));
    const failed = results.flatMap((r, i) => (r.status === "rejected" ? [`${opts.appUrls[i]}: ${messageOf(r.reason)}`] : []));
    if (failed.length) {
      for (const f of failed) log(`ERROR sync failed for ${f}`);
      throw new Error(`sync failed: ${failed.join("; ")}`);
    }
  }

  return { fns, appFns, pendingSync, register, syncApp, syncUntilUp, syncAll, findFn, devInfo };
}
