// The executor: events in (triggers, cancellations, waits), runs driven through the app's
// serve route one request at a time, with sleeps, waits and invoked runs going on side by
// side, retries, concurrency, cron, and the checkpoints the SDK posts.
import { createHash, randomBytes } from "node:crypto";
import { calcPrice } from "@pydantic/genai-prices";
import { compileExpression, type CompiledExpression } from "./expr";
import { cronMatches, type CronSchedule } from "./cron";
import { canonicalBody } from "./signing";
import { appIdOf } from "./gql";
import { retryDelayMs } from "./backoff";
import { eventMatches, toEvent } from "./events";
import { COMPLETE_ID, DAY_MS, INTERNAL, errorOf, messageOf, parseDelay, ulid } from "./util";
import type { Context } from "./context";
import type { Registry } from "./registry";
import type { EventPayload, FnEntry, Memo, MetadataEntry, MetadataUpdate, Op, Request, Run, RunStatus, RunSummary, StepSummary } from "./types";

/** A run's W3C trace id: 32 hex digits derived from its id, so every request of the run shares it. */
const traceIdOf = (runId: string) => createHash("sha256").update(`trace:${runId}`).digest("hex").slice(0, 32);

export type EventRecord = { internalId: string; event: EventPayload; receivedAt: string; runs: string[] };
export type Executor = ReturnType<typeof createExecutor>;

export function createExecutor(ctx: Context, registry: Registry) {
  const { log, later, checkpointing, retryScale, callTimeoutMs, appHeaders } = ctx;
  const { fns } = registry;
  const runs = new Map<string, Run>();
  const events: EventRecord[] = [];
  const seenEventIds = new Map<string, { internalId: string; at: number }>();
  const idempotencyKeys = new Map<string, number>();

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
          if (fn.batch) {
            addToBatch(fn, fn.batch, event, record);
            break;
          }
          const run = startRun(fn, event);
          if (run) record.runs.push(run.id);
          break;
        }
      }
    });
    return ids;
  }

  /**
   * batchEvents: an event joins its function's open batch (one per key); the batch becomes
   * one run when it holds maxSize events, or when the timeout since its first event is up.
   * An event the batch's `if` rejects runs nothing, as under the executor.
   */
  const batches = new Map<string, { events: EventPayload[]; records: EventRecord[]; stop: () => void }>();
  function addToBatch(fn: FnEntry, batch: NonNullable<FnEntry["batch"]>, event: EventPayload, record: EventRecord) {
    if (batch.if && batch.if.evaluate({ event }) !== true) return;
    const id = `${fn.id}\u0000${batch.key ? JSON.stringify(batch.key.evaluate({ event }) ?? null) : ""}`;
    let open = batches.get(id);
    if (!open) {
      const stop = later(batch.timeoutMs, () => flushBatch(id));
      open = { events: [], records: [], stop };
      batches.set(id, open);
    }
    open.events.push(event);
    open.records.push(record);
    if (open.events.length >= batch.maxSize) flushBatch(id);
  }
  function flushBatch(id: string) {
    const open = batches.get(id);
    if (!open) return;
    batches.delete(id);
    open.stop();
    if (ctx.closed) return;
    const fn = fns.get(id.split("\u0000")[0]!);
    if (!fn) return;
    log(`fn ${fn.id}: a batch of ${open.events.length} event(s)`);
    const run = startRun(fn, open.events[0]!, undefined, open.events);
    if (run) for (const r of open.records) r.runs.push(run.id);
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
      if (ctx.closed) return;
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
        cancelRun(run, `event ${event.name} ${event.id}`, event.id);
        break;
      }
    }
  }

  // ---------- metadata (scores, experiments, AI usage, userland) ----------
  /**
   * `inngest.ai` metadata without a cost gets `estimated_cost` (USD, 6 decimals) from the
   * model and token counts, as the dev server backfills it: the response model, else the
   * requested one; no price known, no cost. Prices: @pydantic/genai-prices' table.
   */
  function backfillEstimatedCost(values: Record<string, unknown>) {
    if (typeof values.estimated_cost === "number") return;
    const model = [values.response_model, values.request_model].find((m): m is string => typeof m === "string" && m !== "");
    if (!model) return;
    const usage = { input_tokens: Number(values.input_tokens) || 0, output_tokens: Number(values.output_tokens) || 0 };
    let price: ReturnType<typeof calcPrice> = null;
    for (const opts of typeof values.provider === "string" ? [{ providerId: values.provider }, undefined] : [undefined]) {
      try {
        price = calcPrice(usage, model, opts);
      } catch {
        price = null;
      }
      if (price) break;
    }
    if (price) values.estimated_cost = Math.round(Number(price.total_price) * 1e6) / 1e6;
  }

  /** One update: `merge` merges into the values of the same kind and scope, anything else replaces them. */
  function putMetadata(holder: { metadata?: MetadataEntry[] }, u: MetadataUpdate, scope: string) {
    if (!u || typeof u.kind !== "string" || !u.values || typeof u.values !== "object") return;
    const list = (holder.metadata ??= []);
    const at = new Date().toISOString();
    const found = list.find((m) => m.kind === u.kind && m.scope === scope);
    const entry = found ?? { kind: u.kind, scope, values: {}, updatedAt: at };
    entry.values = u.op === "merge" ? { ...entry.values, ...u.values } : { ...u.values };
    entry.updatedAt = at;
    if (u.kind === "inngest.ai") backfillEstimatedCost(entry.values);
    if (!found) list.push(entry);
  }
  /** Metadata on a step's op: `step` scope goes on that step, `run` scope on the run. */
  function opMetadata(run: Run, op: Op) {
    if (!Array.isArray(op.metadata) || op.id === COMPLETE_ID) return;
    for (const u of op.metadata) {
      if (u?.scope === "run") putMetadata(run, u, "run");
      else if (u?.scope === "step" || u?.scope === undefined) putMetadata(stepRecord(run, op), u, "step");
      else log(`run ${run.id} step "${op.userland?.id ?? op.id}": metadata of scope "${String(u?.scope)}" is not kept by inngest-local`);
    }
  }
  /**
   * POST /v1/runs/{runId}/metadata (client.score, metadata.update from outside the step).
   * A `step_id` names the step as written; one the run does not have keeps nothing (as the
   * dev server, whose orphan span never shows), nor does a `span_id` (userland spans).
   */
  function updateMetadata(run: Run, target: { step_id?: string; span_id?: string }, updates: MetadataUpdate[]) {
    if (target.span_id) {
      log(`run ${run.id}: metadata for span ${target.span_id} not kept (inngest-local has no userland spans)`);
      return;
    }
    if (target.step_id) {
      const step = run.steps.find((s) => s.name === target.step_id);
      if (!step) {
        log(`run ${run.id}: metadata for step "${target.step_id}", which the run does not have, not kept`);
        return;
      }
      for (const u of updates) putMetadata(step, u, "step");
      return;
    }
    for (const u of updates) putMetadata(run, u, "run");
  }

  // ---------- runs ----------
  function startRun(fn: FnEntry, event: EventPayload, parent?: Run["parent"], batch?: EventPayload[], endpoint?: { runId: string }): Run | undefined {
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
      id: endpoint?.runId ?? ulid(),
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
      events: batch ?? [event],
      memo: {},
      stack: [],
      stepById: new Map(),
      requests: [{ stepId: "step", attempt: 0 }],
      pending: new Map(),
      forceStepPlan: false,
      stops: new Set(),
      waiters: new Map(),
      parent,
      defers: new Map(),
    };
    runs.set(run.id, run);
    log(`run ${run.id} started: fn ${fn.id} for event ${event.name}${parent ? ` (invoked by run ${parent.run.id})` : ""}`);
    // A durable endpoint's run is driven by the endpoint itself (its checkpoints), not by us.
    if (endpoint) return run;
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
    scheduleDefers(run);
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
  /**
   * When a run ends, however it ends, each `defer()` it made and did not abort becomes an
   * `inngest/deferred.schedule` event, which triggers the `createDefer` function named by
   * `fn_slug` (its trigger's expression matches `event.data._inngest.fn_slug`). The data is
   * the defer's input with `_inngest` naming the parent; the id is derived from the run and
   * the defer, so the same defer can never schedule twice.
   */
  function scheduleDefers(run: Run) {
    for (const [hashedId, d] of run.defers) {
      if (d.status !== "after_run") continue;
      d.status = "scheduled"; // no longer abortable, never scheduled again
      const input = d.input && typeof d.input === "object" && !Array.isArray(d.input) ? (d.input as Record<string, unknown>) : d.input == null ? {} : undefined;
      if (!input) {
        log(`ERROR run ${run.id} defer "${d.name}": its data is not an object; not scheduled (as the executor drops it)`);
        continue;
      }
      const id = ulid(Date.now(), createHash("sha256").update(`defer-event:${run.id}:${hashedId}`).digest());
      const _inngest = { fn_slug: d.fnSlug, parent_app_id: appIdOf(run.fn.appUrl), parent_fn_id: appIdOf(`fn:${run.functionId}`), parent_fn_slug: run.functionId, parent_run_id: run.id };
      log(`run ${run.id} defer "${d.name}" scheduled: ${d.fnSlug}`);
      setImmediate(() => {
        if (ctx.closed) return;
        try {
          ingest([{ name: INTERNAL.deferred, id, data: { ...input, _inngest }, ...(d.meta ? { meta: d.meta } : {}), ts: Date.now() }]);
        } catch (e) {
          log(`ERROR scheduling defer "${d.name}" of run ${run.id}: ${messageOf(e)}`);
        }
      });
    }
  }

  /** DeferAdd / DeferAbort: lazy ops, which ride along with a step's result or the run's end. */
  function deferOp(run: Run, op: Op) {
    if (op.op === "DeferAdd") {
      if (run.defers.has(op.id)) return; // reported again (a retried request): the first one holds
      const meta = op.opts?.meta && typeof op.opts.meta === "object" ? (op.opts.meta as Record<string, unknown>) : undefined;
      const name = op.userland?.id ?? op.displayName ?? op.id;
      run.defers.set(op.id, { fnSlug: String(op.opts?.fn_slug ?? ""), input: op.opts?.input, meta, name, status: "after_run" });
      log(`run ${run.id} defer "${name}" added: ${String(op.opts?.fn_slug)} runs after this run ends`);
    } else {
      const target = String(op.opts?.target_hashed_id ?? "");
      const d = run.defers.get(target);
      if (d) d.status = "aborted";
      // Aborted before its add reached us (the SDK drops a buffered add it aborts): keep the
      // id, so an add reported later is ignored.
      else run.defers.set(target, { fnSlug: String(op.opts?.fn_slug ?? ""), input: null, name: String(op.opts?.id ?? target), status: "aborted" });
      log(`run ${run.id} defer "${d?.name ?? op.opts?.id ?? target}" aborted`);
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
  function cancelRun(run: Run, by: string, byEvent?: string) {
    if (run.status !== "running") return;
    run.cancelledBy = by;
    run.cancelledByEvent = byEvent;
    // The step the app was running, for the dashboard: the SDK names it only when it reports it.
    if (run.inFlight !== undefined) {
      const planned = runningPlannedStep(run);
      run.interrupted = { since: new Date(run.mark ?? Date.now()).toISOString(), cancelledAt: new Date().toISOString(), ...(planned ? { stepId: planned.id, name: planned.name } : {}) };
    }
    for (const s of run.steps) if (!s.endedAt) s.endedAt = new Date().toISOString();
    endRun(run, "cancelled");
    log(`run ${run.id} cancelled: fn ${run.functionId} by ${by}`);
    emit(INTERNAL.cancelled, { function_id: run.functionId, run_id: run.id, event: run.event });
  }

  /** The planned step the request out was sent to run, while it has no result: then the step running is known by name. */
  const runningPlannedStep = (run: Run) => {
    const s = run.inFlight !== undefined && run.inFlight !== "step" ? run.stepById.get(run.inFlight) : undefined;
    return s && !s.endedAt ? s : undefined;
  };
  /**
   * What the app reported, after a cancel, for the step it interrupted: shown beside the run,
   * never memoized. `final`: the request's answer, after which nothing more comes.
   */
  function lateReport(run: Run, ops: unknown, final = false) {
    const i = run.interrupted;
    if (!i || i.reportedAt) return;
    const op = Array.isArray(ops) ? (ops as Op[]).find((o) => o && typeof o === "object" && ["StepRun", "StepFailed", "StepError"].includes(o.op) && o.id !== COMPLETE_ID) : undefined;
    if (!op) {
      if (final) i.reportedAt = new Date().toISOString();
      return;
    }
    Object.assign(i, { reportedAt: new Date().toISOString(), stepId: op.id, name: op.userland?.id ?? op.displayName ?? op.name ?? op.id, op: op.op }, op.op === "StepRun" ? { output: op.data ?? null } : { error: op.error });
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
    // The defers the SDK already reported, so it does not report them again; an aborted or
    // scheduled one can no longer be aborted.
    const defers = Object.fromEntries([...run.defers].map(([id, d]) => [id, { abortable: d.status === "after_run" }]));
    const body: Record<string, unknown> = { event: run.event, events: run.events, steps: run.memo, defers, ctx };
    if (run.version !== undefined) body.version = run.version;
    const release = await acquire(run);
    try {
      // Signed when the request leaves (after any concurrency wait), so it is fresh.
      const bodyText = canonicalBody(body);
      run.mark = Date.now();
      run.inFlight = req.stepId;
      const res = await fetch(url, {
        method: "POST",
        // x-inngest-job-id is the queue item's id, which the SDK gives functions as ctx.jobId.
        // traceparent: the run's trace (one id per run) and a span per request, as the executor
        // sends it; the SDK attributes OpenTelemetry spans (AI usage metadata) only under one.
        headers: { ...appHeaders(bodyText), "x-request-id": ulid(), "x-inngest-job-id": jobId, traceparent: `00-${traceIdOf(run.id)}-${randomBytes(8).toString("hex")}-01` },
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
      run.inFlight = undefined;
      release();
    }
  }

  function backoff(attempt: number, retryAfter: string | null): number {
    if (retryAfter) {
      const secs = Number(retryAfter);
      const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(retryAfter) - Date.now();
      if (Number.isFinite(ms)) return Math.max(0, ms);
    }
    return retryDelayMs(attempt, retryScale);
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
    while (run.status === "running" && !ctx.closed) {
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
        lateReport(run, ans.body, true);
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
  const LAZY = new Set(["DeferAdd", "DeferAbort"]);

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
    // Lazy ops first, as the executor does, so a defer reported with RunComplete is scheduled.
    for (const op of ops) if (LAZY.has(op.op)) deferOp(run, op);
    for (const op of ops) if (op.metadata && !LAZY.has(op.op)) opMetadata(run, op);
    for (const op of ops) {
      switch (op.op) {
        case "DeferAdd":
        case "DeferAbort":
          break;
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
    } else if (ops.every((op) => LAZY.has(op.op))) {
      // Only defers and nothing to go on with (the executor's fallback): ask again.
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
    if (run.status !== "running" || ctx.closed || !run.pending.has(op.id)) return;
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
      if (!ctx.closed) scheduleCron();
    });
  }

  function invoke(fn: FnEntry, body: Record<string, unknown>): Run | undefined {
    const cron = fn.triggers.find((t): t is { cron: CronSchedule } => "cron" in t);
    const name = typeof body.name === "string" ? body.name : cron ? INTERNAL.cron : INTERNAL.invoked;
    const data = (body.data as Record<string, unknown>) ?? (cron ? { cron: cron.cron.source } : {});
    log(`fn ${fn.id} invoked directly`);
    return startRun(fn, toEvent({ name, data }, ulid()));
  }

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
      cancelledByEvent: r.cancelledByEvent,
      // Only while the step running is unnamed: a planned step sent to run shows as itself.
      inFlightSince: r.status === "running" && r.inFlight !== undefined && r.mark && !runningPlannedStep(r) ? new Date(r.mark).toISOString() : undefined,
      interrupted: r.interrupted,
      metadata: r.metadata,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
    });
  const listRuns = () => [...runs.values()].map(summary);

  /** POST /v1/checkpoint/{runId}/async: step results the SDK reports mid-request. */
  function checkpoint(run: Run, steps: Op[]): { ok: true } | { ok: false; error: string } {
    // 409 is what the SDK treats as "stale dispatch": it stops running further
    // steps at once (a 400 would be retried 5 times, ~1.5 s, before it gives up).
    if (run.status !== "running") {
      log(`run ${run.id} is ${run.status}: refused a checkpoint (409), so the SDK stops before the next step`);
      lateReport(run, steps);
      return { ok: false, error: `run is ${run.status}` };
    }
    for (const op of steps) if (LAZY.has(op.op)) deferOp(run, op);
    for (const op of steps) {
      if (op.op === "StepRun") {
        memoize(run, op, { data: op.data ?? null }, 0, true);
        opMetadata(run, op);
      }
      else if (LAZY.has(op.op)) continue;
      else {
        failRun(run, { name: "InngestLocalUnsupported", message: `inngest-local does not support checkpointed "${op.op}" ops`, stack: "" });
        return { ok: false, error: "unsupported op" };
      }
    }
    return { ok: true };
  }

  /**
   * Durable endpoints (`client.endpoint`), sync mode: the endpoint runs the function inside an
   * HTTP request of its own, creates the run with its first checkpoint (POST /v1/checkpoint)
   * and reports each step, then the end, to /v1/checkpoint/{runId}/steps; the server never
   * calls it. A run that would go async (a sleep, a wait, a retried step: the SDK hands it to
   * the server, which then calls the endpoint back) is refused with a message: the stand-in
   * does not do that part.
   */
  function newEndpointRun(body: { run_id?: string; event?: Record<string, unknown>; steps?: Op[]; retries?: number }): { run: Run } | { error: string } {
    const runId = String(body.run_id ?? "");
    if (!runId || runs.has(runId)) return { error: runId ? `run ${runId} exists already` : "run_id is required" };
    // The SDK describes the request as an inngest/http.request event: {domain, path, method, …}.
    const event = toEvent({ name: "inngest/http.request", ...(body.event ?? {}) }, ulid());
    const data = event.data as { domain?: string; path?: string; method?: string };
    const where = typeof data.path === "string" && data.path ? data.path : "/";
    const url = `${data.domain ?? ""}${where}`;
    const id = `durable-endpoint${where.replace(/[^a-zA-Z0-9]+/g, "-").replace(/-$/, "")}`;
    const fn: FnEntry = { id, name: `${data.method ?? "GET"} ${where}`, appUrl: url, raw: {}, url, triggers: [], maxAttempts: (Number(body.retries) || 0) + 1, cancel: [], concurrency: [], problems: [] };
    const run = startRun(fn, event, undefined, undefined, { runId })!;
    log(`run ${run.id} is a durable endpoint's (${fn.name}), in sync mode`);
    const out = endpointSteps(run, body.steps ?? []);
    return "error" in out ? out : { run };
  }
  function endpointSteps(run: Run, steps: Op[]): { ok: true } | { error: string } {
    if (run.status !== "running") return { error: `run is ${run.status}` };
    for (const op of steps) if (LAZY.has(op.op)) deferOp(run, op);
    for (const op of steps) {
      if (LAZY.has(op.op)) continue;
      if (op.op === "StepRun") {
        memoize(run, op, { data: op.data ?? null }, 0, true);
        opMetadata(run, op);
      } else if (op.op === "RunComplete") completeRun(run, op.data ?? null);
      else if (op.op === "StepFailed" && op.id === COMPLETE_ID) failRun(run, op.error);
      else if (op.op === "StepFailed") memoize(run, op, { error: op.error }, 0, true);
      else {
        const message = `inngest-local does not support durable endpoints that go async (the "${op.op}" op of step "${op.userland?.id ?? op.displayName ?? op.id}"): only sync mode`;
        failRun(run, { name: "InngestLocalUnsupported", message, stack: "" });
        return { error: message };
      }
    }
    return { ok: true };
  }

  /** Stop everything the runs wait on (close()). */
  function stopAll() {
    cronCancel?.();
    for (const b of batches.values()) b.stop();
    batches.clear();
    for (const r of runs.values()) {
      for (const stop of [...r.stops]) stop();
      r.wakeDriver?.();
    }
  }

  return { runs, events, ingest, startRun, cancelRun, invoke, checkpoint, newEndpointRun, endpointSteps, updateMetadata, scheduleCron, summary, listRuns, stopAll };
}
