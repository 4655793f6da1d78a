// A local stand-in for the Inngest server (`inngest-cli dev`, or `inngest start` in its
// self-hosted mode), which cannot be downloaded here. It speaks the executor-to-SDK protocol
// of the pinned SDK (inngest 4.24.0; see tools/inngest-local/README.md) and drives an app's
// real serve route over HTTP. Self-hosted mode (a signing key and event keys) signs every
// call to the app and checks the app's calls and events, as the real server does; dev mode
// does neither. Dev and test tooling only: nothing in the app imports it.

import http from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { compileExpression, type CompiledExpression } from "./expr";
import { cronMatches, nextCronTime, parseCron, type CronSchedule } from "./cron";
import { bearerMatches, canonicalBody, sameSecret, signBody } from "./signing";
import { appIdOf, executeGql, type LocalState } from "./gql";
import { dashboardAction, errorPage, renderDashboard, type DashboardActions } from "./dashboard";

export type RunStatus = "running" | "completed" | "failed" | "cancelled";
export type StepStatus = "planned" | "retrying" | "sleeping" | "waiting" | "completed" | "failed";

export interface StepSummary {
  /** Hashed id, the key the SDK uses in the `steps` map. */
  id: string;
  /** The id the developer wrote (`step.run("charge", ...)`). */
  name: string;
  op: string;
  status: StepStatus;
  attempts: number;
  output?: unknown;
  error?: unknown;
  /** True when the result arrived through POST /v1/checkpoint/{runId}/async. */
  checkpointed?: boolean;
  startedAt: string;
  endedAt?: string;
}

export interface RunSummary {
  id: string;
  functionId: string;
  functionName: string;
  eventName: string;
  eventId: string;
  event: EventPayload;
  status: RunStatus;
  /** Most attempts any single request of this run needed (1 = no retries). */
  attempts: number;
  maxAttempts: number;
  steps: StepSummary[];
  output?: unknown;
  error?: unknown;
  cancelledBy?: string;
  startedAt: string;
  endedAt?: string;
}

export type EventPayload = { name: string; id?: string; data: Record<string, unknown>; ts: number; [k: string]: unknown };

export interface InngestLocalOptions {
  port?: number;
  host?: string;
  appUrls: string[];
  log?: (line: string) => void;
  /** Base of the retry backoff (attempt n waits base * 2^n). Default: $INNGEST_LOCAL_BACKOFF_MS or 1000. */
  backoffMs?: number;
  /** Send ctx.fn_id so the SDK checkpoints steps (its v4 default). Default true; $INNGEST_LOCAL_CHECKPOINTING=0 turns it off. */
  checkpointing?: boolean;
  /** Delay between sync attempts while an app is unreachable. Default 1000. */
  syncRetryMs?: number;
  /** Re-sync every n ms, like the dev server's polling (0 = off). Default 0. */
  pollMs?: number;
  /** Per-request timeout for calls to the app. Default 5 minutes. */
  callTimeoutMs?: number;
  /**
   * Self-hosted mode, as `inngest start --signing-key`: every call to the app is signed with
   * it, and the SDK's register and checkpoint calls must carry its hash. Needs `eventKeys`.
   */
  signingKey?: string;
  /** Self-hosted mode: the keys events must be sent with (POST /e/<key>); others get 401. */
  eventKeys?: string[];
}

export interface InngestLocal {
  url: string;
  port: number;
  mode: "dev" | "self-hosted";
  close(): Promise<void>;
  runs(): RunSummary[];
  sync(): Promise<void>;
}

type Memo = { data: unknown } | { error: unknown };
type Op = { id: string; op: string; name?: string; displayName?: string; data?: unknown; error?: unknown; opts?: Record<string, unknown>; userland?: { id?: string } };
type Trigger = { event: string; expr?: CompiledExpression } | { cron: CronSchedule };
type FnEntry = {
  id: string;
  name: string;
  appUrl: string;
  /** The config as the SDK synced it (served by GET /dev and the GraphQL API). */
  raw: Record<string, unknown>;
  url: string;
  triggers: Trigger[];
  maxAttempts: number;
  cancel: { event: string; expr?: CompiledExpression; timeoutMs?: number }[];
  concurrency: { limit: number; key?: CompiledExpression; scope: string }[];
  idempotency?: CompiledExpression;
  /** Config this stand-in cannot honour: runs of the function fail with these messages. */
  problems: string[];
};
type Request = { stepId: string; attempt: number };
type Pending = { op: Op; kind: "step" | "sleep" | "wait" | "invoke" };
type Run = RunSummary & {
  fn: FnEntry;
  memo: Record<string, Memo>;
  stack: string[];
  stepById: Map<string, StepSummary>;
  /** Requests to the app waiting their turn: "step" asks the SDK what comes next, a hashed id runs that planned step. */
  requests: Request[];
  /** Steps, sleeps, waits and invokes the SDK reported that have no result yet, by hashed id. */
  pending: Map<string, Pending>;
  /** disable_immediate_execution: on from a parallel group until the group is done (the executor's ForceStepPlan). */
  forceStepPlan: boolean;
  /** When the current request left, or its last step result came in: where the next executed step began. */
  mark?: number;
  version?: number;
  /** Wakes the call loop when a request is queued, or the run ends. */
  wakeDriver?: () => void;
  /** Stops the run's timers (sleeps, wait and invoke timeouts, retry backoff): used when it ends. */
  stops: Set<() => void>;
  /** The run's waitForEvent steps, by hashed id. */
  waiters: Map<string, { event: string; expr?: CompiledExpression; resolve: (e: EventPayload) => void }>;
  /** The step.invoke that started this run, which its end settles. */
  parent?: { run: Run; op: Op };
};

const INTERNAL = { failed: "inngest/function.failed", finished: "inngest/function.finished", cancelled: "inngest/function.cancelled", invoked: "inngest/function.invoked", cron: "inngest/scheduled.timer" };
const sha1 = (s: string) => createHash("sha1").update(s).digest("hex");
/** The SDK reports function-level results under the hashed id "complete". */
const COMPLETE_ID = sha1("complete");
const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_TIMER = 2 ** 31 - 1;

const B32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** ULIDs like the real server's ids: sortable by time, which keeps /runs readable. */
function ulid(time = Date.now(), rand: Buffer = randomBytes(10)): string {
  let t = "";
  for (let i = 0, n = time; i < 10; i++, n = Math.floor(n / 32)) t = B32.charAt(n % 32) + t;
  let r = "";
  let acc = 0;
  let bits = 0;
  for (const b of rand.subarray(0, 10)) {
    acc = ((acc << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) r += B32.charAt((acc >>> (bits -= 5)) & 31);
  }
  return t + r;
}

/** "1w2d3h4m5s", "500ms", a bare number of ms; or an ISO date (sleepUntil). Returns ms from now. */
export function parseDelay(s: string, now = Date.now()): number {
  if (/^\d+$/.test(s)) return Number(s);
  const units: Record<string, number> = { w: 7 * DAY_MS, d: DAY_MS, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  const re = /(\d+(?:\.\d+)?)(ms|w|d|h|m|s)/gy;
  let total = 0;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(s))) {
    total += Number(m[1]) * (units[m[2]!] ?? 0);
    consumed = re.lastIndex;
  }
  if (consumed === s.length && s.length > 0) return total;
  const at = Date.parse(s);
  if (!Number.isNaN(at)) return at - now;
  throw new Error(`cannot parse duration or date "${s}"`);
}

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === "object" && !Array.isArray(v);

/**
 * An event as the server stores and sends it: `data` and `user` always objects, an `id`
 * (the sender's, else the internal one), `ts`, and the sessions of `meta` settled: the
 * layer the SDK stamps (`meta.propagated_sessions`) is folded into `meta.sessions`, where
 * the sender's own sessions win, a `null` session cuts the inherited one, and a `null`
 * `sessions` cuts them all.
 */
export function toEvent(given: Record<string, unknown>, internalId: string): EventPayload {
  const event: EventPayload = {
    ...given,
    name: String(given.name),
    data: isObject(given.data) ? given.data : {},
    user: isObject(given.user) ? given.user : {},
    id: typeof given.id === "string" && given.id ? given.id : internalId,
    ts: Number(given.ts) || Date.now(),
  };
  if (isObject(given.meta)) {
    const { sessions: manual, propagated_sessions: propagated, ...rest } = given.meta;
    const sessions: Record<string, string> = {};
    if (manual !== null) {
      for (const [k, v] of Object.entries(isObject(propagated) ? propagated : {})) if (v !== null && v !== undefined) sessions[k] = String(v);
      for (const [k, v] of Object.entries(isObject(manual) ? manual : {})) {
        if (v === null) delete sessions[k];
        else sessions[k] = String(v);
      }
    }
    const meta = Object.keys(sessions).length ? { ...rest, sessions } : rest;
    if (Object.keys(meta).length) event.meta = meta;
    else delete event.meta;
  }
  return event;
}

/** A trigger's event name matches itself, or as `prefix/*` every event under the prefix. */
export const eventMatches = (pattern: string, name: string) => pattern === name || (pattern.endsWith("/*") && name.startsWith(pattern.slice(0, -1)));

const errorOf = (e: unknown) =>
  e instanceof Error ? { name: e.name, message: e.message, stack: e.stack ?? "" } : { name: "Error", message: String(e), stack: "" };
const messageOf = (e: unknown) => (e && typeof e === "object" && "message" in e ? String((e as { message: unknown }).message) : JSON.stringify(e));

export async function startInngestLocal(opts: InngestLocalOptions): Promise<InngestLocal> {
  const log = opts.log ?? ((line: string) => console.log(`[inngest-local] ${line}`));
  const envBackoff = Number(process.env.INNGEST_LOCAL_BACKOFF_MS);
  const backoffMs = opts.backoffMs ?? (Number.isFinite(envBackoff) && envBackoff >= 0 ? envBackoff : 1000);
  const checkpointing = opts.checkpointing ?? process.env.INNGEST_LOCAL_CHECKPOINTING !== "0";
  const syncRetryMs = opts.syncRetryMs ?? 1000;
  const callTimeoutMs = opts.callTimeoutMs ?? 5 * 60_000;
  const signingKey = opts.signingKey || undefined;
  const eventKeys = (opts.eventKeys ?? []).filter(Boolean);
  if (Boolean(signingKey) !== eventKeys.length > 0) {
    throw new Error("self-hosted mode needs both a signing key and at least one event key (as `inngest start` does)");
  }
  // `inngest start` takes the bare hex; the SDK's form adds a `signkey-<env>-` prefix. Both work.
  if (signingKey && !/^(?:signkey-\w+-)?(?:[0-9a-f]{2})+$/i.test(signingKey)) {
    throw new Error("the signing key must be hex (an even number of digits), optionally as signkey-<env>-<hex>");
  }
  const mode = signingKey ? ("self-hosted" as const) : ("dev" as const);
  /** Headers of a call to the app: signed in self-hosted mode, over exactly this body text. */
  const appHeaders = (bodyText: string): Record<string, string> => ({
    "content-type": "application/json",
    "x-inngest-server-kind": signingKey ? "cloud" : "dev",
    ...(signingKey ? { "x-inngest-signature": signBody(bodyText, signingKey) } : {}),
  });
  /** The SDK's own calls to us (register, checkpoints): its bearer of the hashed signing key. */
  const sdkAuthorized = (req: http.IncomingMessage) => !signingKey || bearerMatches(req.headers.authorization, [signingKey]);

  const fns = new Map<string, FnEntry>();
  const appFns = new Map<string, { appName: string; ids: string[]; fingerprint: string; syncedAt: string; sdk?: string; framework?: string }>();
  const runs = new Map<string, Run>();
  const events: { internalId: string; event: EventPayload; receivedAt: string; runs: string[] }[] = [];
  const seenEventIds = new Map<string, { internalId: string; at: number }>();
  const idempotencyKeys = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  // ---------- timers that close() can clear and that survive > 24.8 days ----------
  const later = (ms: number, fn: () => void): (() => void) => {
    let t: NodeJS.Timeout;
    const arm = (left: number) => {
      t = setTimeout(() => {
        timers.delete(t);
        if (left > MAX_TIMER) arm(left - MAX_TIMER);
        else fn();
      }, Math.max(0, Math.min(left, MAX_TIMER)));
      timers.add(t);
    };
    arm(ms);
    return () => {
      clearTimeout(t);
      timers.delete(t);
    };
  };
  /** Wait, unless the run ends (or the server closes) first. */
  const pause = (run: Run, ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        stop();
        run.stops.delete(done);
        resolve();
      };
      const stop = later(ms, done);
      run.stops.add(done);
    });

  // ---------- sync ----------
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
    for (const key of ["batchEvents", "rateLimit", "throttle", "debounce", "singleton", "timeouts"]) {
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
      problems,
    };
  }

  /** In-band sync: PUT with x-inngest-sync-kind: in_band and the SDK answers with its configs. */
  async function syncApp(appUrl: string): Promise<void> {
    const bodyText = canonicalBody({ url: appUrl });
    const res = await fetch(appUrl, {
      method: "PUT",
      headers: { ...appHeaders(bodyText), "x-inngest-sync-kind": "in_band" },
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
    for (let attempt = 0; !closed; attempt++) {
      try {
        await syncApp(appUrl);
        pendingSync.delete(appUrl);
        return;
      } catch (e) {
        if (attempt % 10 === 0) log(`waiting for app at ${appUrl}: ${messageOf(e)}`);
        await new Promise<void>((r) => later(syncRetryMs, r));
      }
    }
  }

  // ---------- events ----------
  function ingest(raw: unknown[], seed?: string): string[] {
    const ids: string[] = [];
    // Validate the whole batch first, so a bad event rejects it without half-ingesting.
    raw.forEach((r, i) => {
      if (!r || typeof r !== "object" || typeof (r as { name?: unknown }).name !== "string" || !(r as { name: string }).name) {
        throw new Error(`event ${i} has no name`);
      }
    });
    raw.forEach((r, i) => {
      // The SDK sends x-inngest-event-id-seed so a retried send maps to the same ids.
      const internalId = seed ? ulid(Number(seed.split(",")[0]) || Date.now(), createHash("sha256").update(`${seed}:${i}`).digest()) : ulid();
      const event = toEvent(r as Record<string, unknown>, internalId);
      const userId = event.id !== internalId ? event.id : undefined;
      const now = Date.now();
      for (const [k, v] of seenEventIds) if (now - v.at > DAY_MS) seenEventIds.delete(k);
      const dedupeKey = userId ? `id:${userId}` : `internal:${internalId}`;
      const seen = seenEventIds.get(dedupeKey);
      if (seen) {
        log(`event ${event.name} ${userId ?? internalId} is a duplicate of ${seen.internalId}; ignored (dedupe by id within 24h)`);
        ids.push(seen.internalId);
        return;
      }
      seenEventIds.set(dedupeKey, { internalId, at: now });
      const record = recordEvent(event, internalId);
      const internal = event.name.startsWith("inngest/");
      if (!internal) log(`event received ${event.name} id=${event.id}`);
      ids.push(internalId);
      applyCancellations(event);
      for (const run of runs.values()) {
        if (run.status !== "running") continue;
        for (const w of [...run.waiters.values()]) {
          if (w.event === event.name && (!w.expr || w.expr.evaluate({ event: run.event, async: event }) === true)) w.resolve(event);
        }
      }
      for (const fn of fns.values()) {
        for (const t of fn.triggers) {
          if (!("event" in t) || !eventMatches(t.event, event.name)) continue;
          if (t.expr && t.expr.evaluate({ event }) !== true) continue;
          if (internal && !record.runs.length) log(`event ${event.name} id=${event.id}`);
          const run = startRun(fn, event);
          if (run) record.runs.push(run.id);
          break;
        }
      }
    });
    return ids;
  }

  function recordEvent(event: EventPayload, internalId: string) {
    const record = { internalId, event, receivedAt: new Date().toISOString(), runs: [] as string[] };
    events.unshift(record);
    if (events.length > 1000) events.pop();
    return record;
  }

  function emit(name: string, data: Record<string, unknown>) {
    // Internal events go through the same path so onFailure handlers (triggered by
    // inngest/function.failed) are matched like any other function.
    setImmediate(() => {
      if (closed) return;
      try {
        ingest([{ name, data, ts: Date.now() }]);
      } catch (e) {
        log(`ERROR emitting ${name}: ${messageOf(e)}`);
      }
    });
  }

  function applyCancellations(event: EventPayload) {
    for (const run of runs.values()) {
      if (run.status !== "running") continue;
      for (const c of run.fn.cancel) {
        if (c.event !== event.name) continue;
        if (c.timeoutMs !== undefined && Date.now() - Date.parse(run.startedAt) > c.timeoutMs) continue;
        if (c.expr && c.expr.evaluate({ event: run.event, async: event }) !== true) continue;
        cancelRun(run, `event ${event.name} ${event.id}`);
        break;
      }
    }
  }

  // ---------- runs ----------
  function startRun(fn: FnEntry, event: EventPayload, parent?: Run["parent"]): Run | undefined {
    if (fn.idempotency) {
      const key = `${fn.id}:${JSON.stringify(fn.idempotency.evaluate({ event }) ?? null)}`;
      const at = idempotencyKeys.get(key);
      if (at !== undefined && Date.now() - at < DAY_MS) {
        log(`fn ${fn.id}: skipped for event ${event.id} (idempotency key ${key})`);
        return undefined;
      }
      idempotencyKeys.set(key, Date.now());
    }
    const run: Run = {
      id: ulid(),
      functionId: fn.id,
      functionName: fn.name,
      eventName: event.name,
      eventId: String(event.id),
      event,
      status: "running",
      attempts: 0,
      maxAttempts: fn.maxAttempts,
      steps: [],
      startedAt: new Date().toISOString(),
      fn,
      memo: {},
      stack: [],
      stepById: new Map(),
      requests: [{ stepId: "step", attempt: 0 }],
      pending: new Map(),
      forceStepPlan: false,
      stops: new Set(),
      waiters: new Map(),
      parent,
    };
    runs.set(run.id, run);
    log(`run ${run.id} started: fn ${fn.id} for event ${event.name}${parent ? ` (invoked by run ${parent.run.id})` : ""}`);
    if (fn.problems.length) {
      failRun(run, { name: "InngestLocalUnsupported", message: `inngest-local cannot run ${fn.id}: ${fn.problems.join("; ")}`, stack: "" });
    } else {
      drive(run).catch((e) => failRun(run, { name: "InngestLocalError", message: `inngest-local crashed driving the run: ${messageOf(e)}`, stack: errorOf(e).stack }));
    }
    return run;
  }

  function endRun(run: Run, status: RunStatus) {
    run.status = status;
    run.endedAt = new Date().toISOString();
    run.waiters.clear();
    for (const stop of [...run.stops]) stop();
    run.stops.clear();
    run.wakeDriver?.();
    // A run that step.invoke started hands its end to the invoking step.
    const link = run.parent;
    if (link) {
      run.parent = undefined;
      const memo: Memo = status === "completed" ? { data: run.output ?? null } : { error: status === "failed" ? run.error : { name: "Error", message: `invoked run ${run.id} was cancelled`, stack: "" } };
      settle(link.run, link.op, memo);
    }
  }
  function completeRun(run: Run, output: unknown) {
    if (run.status !== "running") return;
    run.output = output;
    endRun(run, "completed");
    log(`run ${run.id} finished: fn ${run.functionId} completed`);
    emit(INTERNAL.finished, { function_id: run.functionId, run_id: run.id, event: run.event, result: output });
  }
  function failRun(run: Run, error: unknown) {
    if (run.status !== "running") return;
    run.error = error;
    endRun(run, "failed");
    log(`ERROR run ${run.id} failed: fn ${run.functionId} after ${run.attempts} attempt(s): ${messageOf(error)}`);
    const e = error as Record<string, unknown>;
    const err = { ...e, name: String(e?.name ?? "Error"), message: messageOf(error), stack: String(e?.stack ?? "") };
    // Shape read by the SDK's failure handler: data.error is a serialized error.
    emit(INTERNAL.failed, { function_id: run.functionId, run_id: run.id, error: err, event: run.event });
    emit(INTERNAL.finished, { function_id: run.functionId, run_id: run.id, event: run.event, error: err });
  }
  function cancelRun(run: Run, by: string) {
    if (run.status !== "running") return;
    run.cancelledBy = by;
    for (const s of run.steps) if (!s.endedAt) s.endedAt = new Date().toISOString();
    endRun(run, "cancelled");
    log(`run ${run.id} cancelled: fn ${run.functionId} by ${by}`);
    emit(INTERNAL.cancelled, { function_id: run.functionId, run_id: run.id, event: run.event });
  }

  function stepRecord(run: Run, op: Op, executed = false): StepSummary {
    let s = run.stepById.get(op.id);
    if (!s) {
      // A step first heard of with its result ran since the request left or since the result
      // before it (steps run back to back within one request), not at the moment we learn of it.
      const startedAt = new Date(executed && run.mark ? run.mark : Date.now()).toISOString();
      s = { id: op.id, name: op.userland?.id ?? op.displayName ?? op.name ?? op.id, op: op.op, status: "planned", attempts: 0, startedAt };
      run.stepById.set(op.id, s);
      run.steps.push(s);
    }
    // A planned step becomes StepRun when it runs; a sleep, wait or invoke keeps its kind.
    if (!["Sleep", "WaitForEvent", "InvokeFunction"].includes(s.op)) s.op = op.op;
    return s;
  }
  /** Store a step result; later calls send it back in `steps`, which is the memoization. */
  function memoize(run: Run, op: Op, memo: Memo, attempt: number, viaCheckpoint = false) {
    // A checkpointed step can come back again in the request's final answer.
    if (op.id in run.memo) return;
    const s = stepRecord(run, op, true);
    // One clock reading: the step ends when the next one (run back to back) starts.
    const now = Date.now();
    run.mark = now;
    run.stack.push(op.id);
    run.memo[op.id] = memo;
    // A checkpoint does not say which attempt it ran in: after a retry it is the next one.
    s.attempts = Math.max(s.attempts, viaCheckpoint && s.status === "retrying" ? s.attempts + 1 : attempt + 1);
    s.status = "error" in memo ? "failed" : "completed";
    if ("error" in memo) s.error = memo.error;
    else s.output = memo.data;
    s.endedAt = new Date(now).toISOString();
    if (viaCheckpoint) s.checkpointed = true;
    log(`run ${run.id} step "${s.name}" ${s.status}${viaCheckpoint ? " (checkpoint)" : ""}${"error" in memo ? `: ${messageOf(memo.error)}` : ""}`);
  }

  // Step-level concurrency, as Inngest does it: a slot is held while a request runs,
  // not while a run sleeps or backs off.
  const active = new Map<string, number>();
  let slotWaiters: (() => void)[] = [];
  async function acquire(run: Run): Promise<() => void> {
    const keys = run.fn.concurrency.map((c) => {
      const k = c.key ? JSON.stringify(c.key.evaluate({ event: run.event }) ?? null) : "";
      return { key: `${c.scope}:${c.scope === "fn" ? run.functionId : ""}:${c.key?.source ?? ""}=${k}`, limit: c.limit };
    });
    while (!keys.every((k) => (active.get(k.key) ?? 0) < k.limit)) {
      if (run.status !== "running") return () => {};
      await new Promise<void>((resolve) => {
        slotWaiters.push(resolve);
        run.wakeDriver = resolve;
      });
    }
    for (const k of keys) active.set(k.key, (active.get(k.key) ?? 0) + 1);
    return () => {
      for (const k of keys) active.set(k.key, (active.get(k.key) ?? 1) - 1);
      const w = slotWaiters;
      slotWaiters = [];
      for (const r of w) r();
    };
  }

  type Answer = { status: number; headers: Headers; body: unknown; text: string };
  async function callApp(run: Run, req: Request): Promise<Answer> {
    const url = new URL(run.fn.url);
    url.searchParams.set("fnId", run.functionId);
    url.searchParams.set("stepId", req.stepId);
    const jobId = ulid();
    const ctx: Record<string, unknown> = {
      run_id: run.id,
      attempt: req.attempt,
      max_attempts: run.maxAttempts,
      disable_immediate_execution: run.forceStepPlan,
      use_api: false,
      stack: { stack: run.stack, current: Math.max(0, run.stack.length - 1) },
    };
    if (checkpointing) {
      // With fn_id (and a queue item id) the SDK runs steps back to back in one
      // request and POSTs each result to /v1/checkpoint/{runId}/async.
      ctx.fn_id = run.functionId;
      ctx.qi_id = jobId;
    }
    const body: Record<string, unknown> = { event: run.event, events: [run.event], steps: run.memo, ctx };
    if (run.version !== undefined) body.version = run.version;
    const release = await acquire(run);
    try {
      // Signed when the request leaves (after any concurrency wait), so it is fresh.
      const bodyText = canonicalBody(body);
      run.mark = Date.now();
      const res = await fetch(url, {
        method: "POST",
        // x-inngest-job-id is the queue item's id, which the SDK gives functions as ctx.jobId.
        headers: { ...appHeaders(bodyText), "x-request-id": ulid(), "x-inngest-job-id": jobId },
        body: bodyText,
        signal: AbortSignal.timeout(callTimeoutMs),
      });
      let status = res.status;
      let headers = res.headers;
      let text = await res.text();
      const v = Number(res.headers.get("x-inngest-req-version"));
      if (Number.isInteger(v) && v > 0) run.version = v;
      if (status === 201) {
        // Streaming mode: heartbeat spaces, then the real response as JSON.
        const inner = JSON.parse(text.trim()) as { status: number; headers?: Record<string, string>; body: string };
        status = inner.status;
        headers = new Headers(inner.headers ?? {});
        text = inner.body ?? "";
      }
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON (e.g. an HTML error page): kept as text
      }
      return { status, headers, body: parsed, text };
    } finally {
      release();
    }
  }

  function backoff(attempt: number, retryAfter: string | null): number {
    if (retryAfter) {
      const secs = Number(retryAfter);
      const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(retryAfter) - Date.now();
      if (Number.isFinite(ms)) return Math.max(0, ms);
    }
    return Math.min(backoffMs * 2 ** attempt, 10 * 60_000);
  }

  /** Queue a request to the app; a discovery (stepId "step") already waiting is not doubled. */
  function enqueue(run: Run, req: Request, first = false) {
    if (req.stepId === "step" && run.requests.some((r) => r.stepId === "step")) return;
    if (first) run.requests.unshift(req);
    else run.requests.push(req);
    run.wakeDriver?.();
  }

  /**
   * The call loop: one request to the app at a time per run, as they are queued. Sleeps,
   * waits and invoked runs go on meanwhile, side by side (the executor schedules each one
   * on its own), and each queues the request that resumes the function when it ends.
   */
  async function drive(run: Run) {
    while (run.status === "running" && !closed) {
      const req = run.requests.shift();
      if (!req) {
        await new Promise<void>((resolve) => {
          run.wakeDriver = resolve;
        });
        run.wakeDriver = undefined;
        continue;
      }
      // A planned step that has its result already (reported again by a later discovery) is not run twice.
      if (req.stepId !== "step" && req.stepId in run.memo) continue;
      let ans: Answer;
      try {
        ans = await callApp(run, req);
      } catch (e) {
        ans = { status: 599, headers: new Headers(), body: errorOf(e), text: messageOf(e) };
        log(`run ${run.id} request to ${run.fn.url} failed: ${messageOf(e)}`);
      }
      // Cancelled while the request was in flight: its result is discarded.
      if (run.status !== "running") {
        log(`run ${run.id} is ${run.status}: discarded the answer (HTTP ${ans.status}) of its in-flight request`);
        return;
      }
      run.attempts = Math.max(run.attempts, req.attempt + 1);
      await handleAnswer(run, ans, req);
      if (run.status === "running" && !run.requests.length && !run.pending.size) {
        failRun(run, { name: "InngestLocalError", message: "the SDK reported nothing to run and no step, sleep, wait or invoke is pending", stack: "" });
      }
    }
  }

  async function retryOrFail(run: Run, req: Request, error: unknown, retryAfter: string | null) {
    if (req.attempt + 1 >= run.maxAttempts) {
      failRun(run, error);
      return;
    }
    const delay = backoff(req.attempt, retryAfter);
    log(`run ${run.id} attempt ${req.attempt + 1}/${run.maxAttempts} errored (${messageOf(error)}); retrying in ${delay} ms`);
    await pause(run, delay);
    enqueue(run, { stepId: req.stepId, attempt: req.attempt + 1 }, true);
  }

  const PLANS = new Set(["StepPlanned", "Sleep", "WaitForEvent", "InvokeFunction"]);

  async function handleAnswer(run: Run, ans: Answer, req: Request): Promise<void> {
    if (ans.status === 200) {
      completeRun(run, ans.body);
      return;
    }
    if (ans.status !== 206) {
      const noRetry = ans.headers.get("x-inngest-no-retry") === "true";
      const error = ans.body && typeof ans.body === "object" ? ans.body : { name: "Error", message: `HTTP ${ans.status}: ${ans.text.slice(0, 500)}`, stack: "" };
      if (noRetry) return failRun(run, error);
      return retryOrFail(run, req, error, ans.headers.get("retry-after"));
    }

    const ops = (Array.isArray(ans.body) ? ans.body : [ans.body]) as Op[];
    if (!ops.every((o) => o && typeof o === "object" && typeof o.op === "string" && typeof o.id === "string")) {
      return failRun(run, { name: "InngestLocalError", message: `206 answer is not a list of ops: ${ans.text.slice(0, 300)}`, stack: "" });
    }
    // Several steps, sleeps, waits or invokes reported together are a parallel group: from
    // now on the SDK must plan every step before running it, as the executor makes it do.
    if (ops.filter((o) => PLANS.has(o.op)).length > 1) run.forceStepPlan = true;
    let ranResults = false;
    let planned = 0;
    const finished: Op[] = [];
    let retry: { error: unknown } | undefined;
    for (const op of ops) {
      switch (op.op) {
        case "StepRun":
        case "StepFailed":
          if (op.id === COMPLETE_ID && op.op === "StepFailed") return failRun(run, op.error);
          memoize(run, op, op.op === "StepRun" ? { data: op.data ?? null } : { error: op.error }, req.attempt);
          ranResults = true;
          if (run.pending.get(op.id)?.kind === "step") {
            finished.push(run.pending.get(op.id)!.op);
            run.pending.delete(op.id);
          }
          break;
        case "StepError":
          if (req.attempt + 1 >= run.maxAttempts) {
            // The SDK says StepFailed on the last attempt because we send
            // max_attempts; if it did not, the step has still run out of attempts.
            if (op.id === COMPLETE_ID) return failRun(run, op.error);
            memoize(run, op, { error: op.error }, req.attempt);
            ranResults = true;
            if (run.pending.delete(op.id)) finished.push(op);
          } else {
            if (op.id !== COMPLETE_ID) {
              const s = stepRecord(run, op, true);
              s.status = "retrying";
              s.attempts = req.attempt + 1;
              s.error = op.error;
            }
            retry = { error: op.error };
          }
          break;
        case "StepPlanned":
        case "Sleep":
        case "WaitForEvent":
        case "InvokeFunction":
          if (op.id in run.memo || run.pending.has(op.id)) break;
          planned++;
          schedule(run, op);
          break;
        case "RunComplete":
          return completeRun(run, op.data ?? null);
        case "DiscoveryRequest":
          enqueue(run, { stepId: "step", attempt: 0 });
          break;
        default:
          return failRun(run, { name: "InngestLocalUnsupported", message: `inngest-local does not support the "${op.op}" op (step "${op.userland?.id ?? op.displayName ?? op.id}")`, stack: "" });
      }
    }
    if (retry) return retryOrFail(run, req, retry.error, ans.headers.get("retry-after"));
    if (finished.length) {
      // A step of a parallel group resumes the function when the whole group is done (a
      // "race" group: at once). Then the group is over, and the SDK may again run the next
      // step at once and checkpoint (request version 2, as the executor resets it).
      const race = finished.some((op) => op.opts?.parallelMode === "race");
      if (!run.pending.size) {
        if (run.forceStepPlan && (run.version ?? 2) >= 2) run.forceStepPlan = false;
        enqueue(run, { stepId: "step", attempt: 0 });
      } else if (race) {
        enqueue(run, { stepId: "step", attempt: 0 });
      }
    } else if (req.stepId === "step" && ranResults && !planned) {
      enqueue(run, { stepId: "step", attempt: 0 });
    }
  }

  /** Take up a step, sleep, wait or invoke the SDK reported: each goes on by itself. */
  function schedule(run: Run, op: Op) {
    const s = stepRecord(run, op);
    if (op.op === "StepPlanned") {
      run.pending.set(op.id, { op, kind: "step" });
      enqueue(run, { stepId: op.id, attempt: 0 });
      return;
    }
    let ms: number;
    try {
      ms = op.op === "Sleep" ? parseDelay(String(op.name)) : op.op === "InvokeFunction" && !op.opts?.timeout ? Infinity : parseDelay(String(op.opts?.timeout ?? ""));
    } catch (e) {
      return failRun(run, { name: "InngestLocalUnsupported", message: `${op.op} "${s.name}": ${messageOf(e)}`, stack: "" });
    }
    run.pending.set(op.id, { op, kind: op.op === "Sleep" ? "sleep" : op.op === "WaitForEvent" ? "wait" : "invoke" });
    const timer = (onTimeout: () => void) => {
      if (ms === Infinity) return;
      const stop = later(Math.max(0, ms), () => {
        run.stops.delete(stop);
        onTimeout();
      });
      run.stops.add(stop);
    };
    if (op.op === "Sleep") {
      s.status = "sleeping";
      log(`run ${run.id} step "${s.name}" sleeping ${ms} ms`);
      timer(() => settle(run, op, { data: null }));
    } else if (op.op === "WaitForEvent") {
      let expr: CompiledExpression | undefined;
      try {
        expr = op.opts?.if ? compileExpression(String(op.opts.if), ["event", "async"]) : undefined;
      } catch (e) {
        return failRun(run, { name: "InngestLocalUnsupported", message: `waitForEvent "${s.name}": ${messageOf(e)}`, stack: "" });
      }
      s.status = "waiting";
      log(`run ${run.id} step "${s.name}" waiting for ${op.name} (timeout ${ms} ms)`);
      run.waiters.set(op.id, { event: String(op.name), expr, resolve: (e) => settle(run, op, { data: e }) });
      timer(() => settle(run, op, { data: null })); // null = timed out, as the SDK expects
    } else {
      s.status = "waiting";
      startInvoke(run, op, s.name, timer);
    }
  }

  /** step.invoke: a child run of the named function; its end settles the step. */
  function startInvoke(run: Run, op: Op, name: string, timer: (onTimeout: () => void) => void) {
    const fnId = String(op.opts?.function_id ?? "");
    const fn = fns.get(fnId);
    if (!fn) {
      log(`run ${run.id} step "${name}" invokes ${fnId}, which is not synced`);
      return settle(run, op, { error: { name: "Error", message: `could not find function with ID "${fnId}"`, stack: "" } });
    }
    const payload = (op.opts?.payload ?? {}) as { data?: Record<string, unknown>; v?: string; meta?: Record<string, unknown> };
    const data = { ...(payload.data ?? {}), _inngest: { source_app_id: appIdOf(run.fn.appUrl), source_fn_id: run.functionId, source_run_id: run.id, invoke_correlation_id: `${run.id}.${op.id}` } };
    const internalId = ulid();
    const event = toEvent({ name: INTERNAL.invoked, data, ...(payload.v ? { v: payload.v } : {}), ...(payload.meta ? { meta: payload.meta } : {}) }, internalId);
    const record = recordEvent(event, internalId);
    log(`run ${run.id} step "${name}" invokes ${fnId}`);
    const child = startRun(fn, event, { run, op });
    if (child) record.runs.push(child.id);
    if (!child) return settle(run, op, { error: { name: "Error", message: `${fnId} was not run (idempotency key already used)`, stack: "" } });
    if (child.status !== "running") return;
    timer(() => {
      if (child.parent) child.parent = undefined;
      settle(run, op, { error: { name: "InngestInvokeTimeoutError", message: `Timed out waiting for invoked function ${fnId} to complete`, stack: "" } });
    });
  }

  /** A sleep, wait or invoke ended: store its result and resume the function. */
  function settle(run: Run, op: Op, memo: Memo) {
    if (run.status !== "running" || closed || !run.pending.has(op.id)) return;
    run.pending.delete(op.id);
    run.waiters.delete(op.id);
    memoize(run, op, memo, 0);
    enqueue(run, { stepId: "step", attempt: 0 });
  }

  // ---------- cron ----------
  let cronCancel: (() => void) | undefined;
  function scheduleCron() {
    const now = Date.now();
    const nextMinute = Math.floor(now / 60_000) * 60_000 + 60_000;
    cronCancel = later(nextMinute - now + 5, () => {
      const at = new Date(nextMinute);
      for (const fn of fns.values()) {
        for (const t of fn.triggers) {
          if ("cron" in t && cronMatches(t.cron, at)) {
            startRun(fn, toEvent({ name: INTERNAL.cron, data: { cron: t.cron.source }, ts: nextMinute }, ulid()));
            break;
          }
        }
      }
      if (!closed) scheduleCron();
    });
  }

  function invoke(fn: FnEntry, body: Record<string, unknown>): Run | undefined {
    const cron = fn.triggers.find((t): t is { cron: CronSchedule } => "cron" in t);
    const name = typeof body.name === "string" ? body.name : cron ? INTERNAL.cron : INTERNAL.invoked;
    const data = (body.data as Record<string, unknown>) ?? (cron ? { cron: cron.cron.source } : {});
    log(`fn ${fn.id} invoked directly`);
    return startRun(fn, toEvent({ name, data }, ulid()));
  }

  // ---------- HTTP ----------
  const summary = (r: Run): RunSummary =>
    structuredClone({
      id: r.id,
      functionId: r.functionId,
      functionName: r.functionName,
      eventName: r.eventName,
      eventId: r.eventId,
      event: r.event,
      status: r.status,
      attempts: r.attempts,
      maxAttempts: r.maxAttempts,
      steps: r.steps,
      output: r.output,
      error: r.error,
      cancelledBy: r.cancelledBy,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
    });
  const listRuns = () => [...runs.values()].map(summary);

  function findFn(key: string): FnEntry | undefined {
    if (fns.has(key)) return fns.get(key);
    const matches = [...fns.values()].filter((f) => f.id.endsWith(`-${key}`));
    return matches.length === 1 ? matches[0] : undefined;
  }

  /** What the GraphQL API and the dashboard read. */
  const state: LocalState = {
    mode,
    functions: () =>
      [...fns.values()].map((f) => ({
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
        .concat([...appFns.keys()].filter((u) => !opts.appUrls.includes(u)))
        .map((u) => {
          const a = appFns.get(u);
          return { id: appIdOf(u), url: u, name: a?.appName ?? "(not synced yet)", syncedAt: a?.syncedAt, sdk: a?.sdk, framework: a?.framework, functionIds: a?.ids ?? [], pending: !a || pendingSync.has(u) };
        }),
    runs: listRuns,
    run: (id) => {
      const r = runs.get(id);
      return r ? summary(r) : undefined;
    },
    events: () => events.map((e) => ({ ...e, runs: [...e.runs] })),
  };

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

  const actions: DashboardActions = {
    resync: () => api.sync(),
    cancel: (id) => {
      const run = runs.get(id);
      if (!run || run.status !== "running") return false;
      cancelRun(run, "dashboard (Cancel button)");
      return true;
    },
    rerun: (id) => {
      const run = runs.get(id);
      const fn = run && fns.get(run.functionId);
      if (!run || !fn) return undefined;
      log(`run ${run.id} rerun from the dashboard`);
      // A rerun sees the same trigger event, as the dev server's Rerun does.
      return startRun(fn, structuredClone(run.event))?.id;
    },
    send: (event) => ingest([{ ...event, ts: Date.now() }]),
  };

  // The dashboard's writes are form POSTs: a cross-site page could submit them, so they must
  // come from one of this server's own origins (browsers send Origin on every POST). Host is
  // checked too, so a rebound DNS name cannot reach the pages.
  const ownHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${host.includes(":") ? `[${host}]` : host}:${port}`]);
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
  const ownHost = (req: http.IncomingMessage) => ownHosts().has(String(req.headers.host ?? ""));
  /** Dashboard responses: no script at all, no framing. */
  const HTML_HEADERS = {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
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

  async function route(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? "/", "http://local");
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const method = req.method ?? "GET";
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    let m: RegExpMatchArray | null;

    if (method === "GET" && path === "/health") return json(200, { ok: true });
    if (method === "GET" && (path === "/" || path.startsWith("/ui/"))) {
      if (!ownHost(req)) return json(421, { error: "the dashboard answers on its own host name only (127.0.0.1 or localhost)" });
      const page = renderDashboard(state, path, url.searchParams);
      if (page) {
        res.writeHead(page.status, HTML_HEADERS);
        return res.end(page.html);
      }
    }
    if (method === "POST" && path.startsWith("/ui/")) {
      if (!ownHost(req) || !sameOrigin(req, true) || (req.headers["sec-fetch-site"] && req.headers["sec-fetch-site"] !== "same-origin")) {
        log(`ERROR refused a dashboard ${method} ${url.pathname} from another origin (${String(req.headers.origin ?? "no Origin")}) (403)`);
        res.writeHead(403, HTML_HEADERS);
        return res.end(errorPage(state, 403, "This button works from the dashboard's own page only."));
      }
      if (!/^application\/x-www-form-urlencoded\b/i.test(String(req.headers["content-type"] ?? ""))) {
        res.writeHead(415, HTML_HEADERS);
        return res.end(errorPage(state, 415, "Expected a form submission."));
      }
      const out = await dashboardAction(actions, path, new URLSearchParams(await readText(req)));
      if (out && "location" in out) {
        res.writeHead(303, { location: out.location, "cache-control": "no-store" });
        return res.end();
      }
      if (out) {
        res.writeHead(out.status, HTML_HEADERS);
        return res.end(errorPage(state, out.status, out.message));
      }
    }
    // The JSON control routes: curl and tests send no Origin; a browser page from elsewhere does.
    if (method === "POST" && (path === "/sync" || /^\/runs\/[^/]+\/cancel$/.test(path) || /^\/fn\/[^/]+\/invoke$/.test(path)) && !sameOrigin(req, false)) {
      log(`ERROR refused ${method} ${url.pathname} from another origin (${String(req.headers.origin)}) (403)`);
      return json(403, { error: "cross-origin request refused" });
    }
    if (method === "GET" && path === "/dev") {
      // As `inngest start` (self-hosted), which answers 404 here; the dev server answers its info.
      if (signingKey) return json(404, { error: "GET /dev is the dev server's; this server runs self-hosted" });
      return json(200, devInfo());
    }
    if (method === "POST" && path === "/v0/gql") {
      if (!/^application\/json\b/i.test(String(req.headers["content-type"] ?? ""))) return json(415, { errors: [{ message: "expected content-type application/json" }] });
      let body: unknown;
      try {
        body = await readBody(req);
      } catch (e) {
        return json(400, { errors: [{ message: `body is not JSON: ${messageOf(e)}` }] });
      }
      const result = await executeGql(state, body as Record<string, unknown>);
      return json(result.data === undefined && result.errors ? 400 : 200, result);
    }
    if (method === "GET" && path === "/runs") {
      const q = url.searchParams;
      return json(200, listRuns().filter((r) => (!q.get("function") || r.functionId === q.get("function") || r.functionId.endsWith(`-${q.get("function")}`)) && (!q.get("status") || r.status === q.get("status")) && (!q.get("event") || r.eventName === q.get("event"))));
    }
    if (method === "GET" && (m = path.match(/^\/runs\/([^/]+)$/))) {
      const run = runs.get(m[1]!);
      return run ? json(200, summary(run)) : json(404, { error: "no such run" });
    }
    if (method === "POST" && (m = path.match(/^\/runs\/([^/]+)\/cancel$/))) {
      const run = runs.get(m[1]!);
      if (!run) return json(404, { error: "no such run" });
      cancelRun(run, "POST /runs/:id/cancel");
      return json(200, summary(run));
    }
    if (method === "GET" && path === "/events") return json(200, events.map((e) => ({ ...e.event, internal_id: e.internalId, received_at: e.receivedAt, runs: e.runs })));
    if (method === "GET" && path === "/functions") {
      return json(200, [...fns.values()].map((f) => ({ id: f.id, name: f.name, app: f.appUrl, maxAttempts: f.maxAttempts, triggers: f.triggers.map((t) => ("cron" in t ? { cron: t.cron.source, next: nextCronTime(t.cron, new Date())?.toISOString() } : { event: t.event, if: t.expr?.source })), problems: f.problems })));
    }
    if (method === "POST" && (m = path.match(/^\/e\/([^/]+)$/))) {
      // As the real server answers an unknown key; the SDK reports it as "Event key not found".
      const key = decodeURIComponent(m[1]!);
      if (signingKey && !eventKeys.some((k) => sameSecret(key, k))) {
        log(`ERROR refused events sent without a valid event key (401)`);
        return json(401, { ids: [], status: 401, error: "Event key not found" });
      }
      let body: unknown;
      try {
        body = await readBody(req);
        const list = Array.isArray(body) ? body : [body];
        const ids = ingest(list, req.headers["x-inngest-event-id-seed"] as string | undefined);
        return json(200, { ids, status: 200 });
      } catch (e) {
        log(`ERROR rejected events: ${messageOf(e)}`);
        return json(400, { ids: [], status: 400, error: messageOf(e) });
      }
    }
    if (method === "POST" && path === "/fn/register") {
      if (!sdkAuthorized(req)) {
        log(`ERROR refused a register call without the signing key's bearer (401)`);
        return json(401, { status: 401, error: "Unauthorized", modified: false });
      }
      const body = (await readBody(req)) as { url?: string; appName?: string; functions?: unknown[]; sdk?: string; framework?: string };
      if (!body?.url || !Array.isArray(body.functions)) return json(400, { status: 400, error: "expected {url, appName, functions}" });
      const modified = register(body.url, body.appName ?? "app", body.functions, { sdk: body.sdk, framework: body.framework });
      return json(200, { ok: true, status: 200, modified });
    }
    if (method === "POST" && path === "/sync") {
      try {
        await api.sync();
        return json(200, { ok: true, functions: [...fns.keys()] });
      } catch (e) {
        return json(502, { ok: false, error: messageOf(e) });
      }
    }
    if (method === "POST" && (m = path.match(/^\/fn\/([^/]+)\/invoke$/))) {
      const fn = findFn(decodeURIComponent(m[1]!));
      if (!fn) return json(404, { error: `no function ${m[1]}; known: ${[...fns.keys()].join(", ")}` });
      const body = ((await readBody(req).catch(() => undefined)) ?? {}) as Record<string, unknown>;
      const run = invoke(fn, body);
      return json(200, { ok: true, runId: run?.id ?? null });
    }
    if ((m = path.match(/^\/v[01]\//)) && !sdkAuthorized(req)) {
      log(`ERROR refused ${method} ${url.pathname} without the signing key's bearer (401)`);
      return json(401, { status: 401, error: "Unauthorized" });
    }
    if (method === "POST" && (m = path.match(/^\/v1\/checkpoint\/([^/]+)\/async$/))) {
      const run = runs.get(decodeURIComponent(m[1]!));
      const body = (await readBody(req)) as { steps?: Op[] };
      if (!run) return json(404, { error: "no such run" });
      // 409 is what the SDK treats as "stale dispatch": it stops running further
      // steps at once (a 400 would be retried 5 times, ~1.5 s, before it gives up).
      if (run.status !== "running") {
        log(`run ${run.id} is ${run.status}: refused a checkpoint (409), so the SDK stops before the next step`);
        return json(409, { error: `run is ${run.status}` });
      }
      for (const op of body?.steps ?? []) {
        if (op.op === "StepRun") memoize(run, op, { data: op.data ?? null }, 0, true);
        else {
          failRun(run, { name: "InngestLocalUnsupported", message: `inngest-local does not support checkpointed "${op.op}" ops`, stack: "" });
          return json(409, { error: "unsupported op" });
        }
      }
      return json(200, {});
    }
    if (method === "GET" && (m = path.match(/^\/v0\/runs\/([^/]+)\/(actions|batch)$/))) {
      const run = runs.get(decodeURIComponent(m[1]!));
      if (!run) return json(404, { error: "no such run", status: 404 });
      return json(200, m[2] === "actions" ? run.memo : [run.event]);
    }
    log(`ERROR unsupported route ${method} ${url.pathname} (not implemented by inngest-local)`);
    return json(404, { error: `inngest-local does not implement ${method} ${url.pathname}`, status: 404 });
  }

  const server = http.createServer((req, res) => {
    route(req, res).catch((e) => {
      // A malformed %-escape in the path is the caller's mistake, not ours.
      const status = e instanceof URIError ? 400 : 500;
      log(`ERROR ${req.method} ${req.url}: ${messageOf(e)} (${status})`);
      if (!res.headersSent) res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: messageOf(e) }));
    });
  });
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 8288, host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  const url = `http://${host}:${port}`;
  log(`listening on ${url} in ${mode} mode${signingKey ? " (calls signed; events need the event key)" : " (unsigned)"} (backoff base ${backoffMs} ms, checkpointing ${checkpointing ? "on" : "off"})`);

  const api: InngestLocal = {
    url,
    port,
    mode,
    runs: listRuns,
    async sync() {
      const results = await Promise.allSettled(opts.appUrls.map((u) => syncApp(u)));
      const failed = results.flatMap((r, i) => (r.status === "rejected" ? [`${opts.appUrls[i]}: ${messageOf(r.reason)}`] : []));
      if (failed.length) {
        for (const f of failed) log(`ERROR sync failed for ${f}`);
        throw new Error(`sync failed: ${failed.join("; ")}`);
      }
    },
    async close() {
      closed = true;
      cronCancel?.();
      for (const r of runs.values()) {
        for (const stop of [...r.stops]) stop();
        r.wakeDriver?.();
      }
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  scheduleCron();
  for (const appUrl of opts.appUrls) void syncUntilUp(appUrl);
  if (opts.pollMs && opts.pollMs > 0) {
    const poll = () => {
      later(opts.pollMs!, () => {
        if (closed) return;
        void Promise.allSettled(opts.appUrls.filter((u) => !pendingSync.has(u)).map((u) => syncApp(u).catch((e) => log(`re-sync of ${u} failed: ${messageOf(e)}`)))).then(poll);
      });
    };
    poll();
  }
  return api;
}
