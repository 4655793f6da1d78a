// Events in: each event is checked against the ids seen in the last 24 h, recorded, and then
// cancels the runs it matches (cancelOn), resolves the waits it matches (waitForEvent), and
// starts a run of each function it triggers, or joins that function's batch (batchEvents).
import { createHash } from "node:crypto";
import { eventMatches, toEvent } from "../events";
import { DAY_MS, messageOf, ulid } from "../util";
import type { EventPayload, FnEntry } from "../types";
import { applyCancellations } from "./cancel";
import { startRun } from "./runs";
import type { EventRecord, ExecutorState } from "./state";

export function ingest(ex: ExecutorState, raw: unknown[], seed?: string): string[] {
  const { log } = ex.ctx;
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
    for (const [k, v] of ex.seenEventIds) if (now - v.at > DAY_MS) ex.seenEventIds.delete(k);
    const dedupeKey = userId ? `id:${userId}` : `internal:${internalId}`;
    const seen = ex.seenEventIds.get(dedupeKey);
    if (seen) {
      log(`event ${event.name} ${userId ?? internalId} is a duplicate of ${seen.internalId}; ignored (dedupe by id within 24h)`);
      ids.push(seen.internalId);
      return;
    }
    ex.seenEventIds.set(dedupeKey, { internalId, at: now });
    const record = recordEvent(ex, event, internalId);
    const internal = event.name.startsWith("inngest/");
    if (!internal) log(`event received ${event.name} id=${event.id}`);
    ids.push(internalId);
    applyCancellations(ex, event);
    for (const run of ex.runs.values()) {
      if (run.status !== "running") continue;
      for (const w of [...run.waiters.values()]) {
        if (w.event === event.name && (!w.expr || w.expr.evaluate({ event: run.event, async: event }) === true)) w.resolve(event);
      }
    }
    for (const fn of ex.fns.values()) {
      for (const t of fn.triggers) {
        if (!("event" in t) || !eventMatches(t.event, event.name)) continue;
        if (t.expr && t.expr.evaluate({ event }) !== true) continue;
        if (internal && !record.runs.length) log(`event ${event.name} id=${event.id}`);
        if (fn.batch) {
          addToBatch(ex, fn, fn.batch, event, record);
          break;
        }
        const run = startRun(ex, fn, event);
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
function addToBatch(ex: ExecutorState, fn: FnEntry, batch: NonNullable<FnEntry["batch"]>, event: EventPayload, record: EventRecord) {
  if (batch.if && batch.if.evaluate({ event }) !== true) return;
  const id = `${fn.id}\u0000${batch.key ? JSON.stringify(batch.key.evaluate({ event }) ?? null) : ""}`;
  let open = ex.batches.get(id);
  if (!open) {
    const stop = ex.ctx.later(batch.timeoutMs, () => flushBatch(ex, id));
    open = { events: [], records: [], stop };
    ex.batches.set(id, open);
  }
  open.events.push(event);
  open.records.push(record);
  if (open.events.length >= batch.maxSize) flushBatch(ex, id);
}

function flushBatch(ex: ExecutorState, id: string) {
  const open = ex.batches.get(id);
  if (!open) return;
  ex.batches.delete(id);
  open.stop();
  if (ex.ctx.closed) return;
  const fn = ex.fns.get(id.split("\u0000")[0]!);
  if (!fn) return;
  ex.ctx.log(`fn ${fn.id}: a batch of ${open.events.length} event(s)`);
  const run = startRun(ex, fn, open.events[0]!, undefined, open.events);
  if (run) for (const r of open.records) r.runs.push(run.id);
}

export function recordEvent(ex: ExecutorState, event: EventPayload, internalId: string) {
  const record = { internalId, event, receivedAt: new Date().toISOString(), runs: [] as string[] };
  ex.events.unshift(record);
  if (ex.events.length > 1000) ex.events.pop();
  return record;
}

export function emit(ex: ExecutorState, name: string, data: Record<string, unknown>) {
  // Internal events go through the same path so onFailure handlers (triggered by
  // inngest/function.failed) are matched like any other function.
  setImmediate(() => {
    if (ex.ctx.closed) return;
    try {
      ingest(ex, [{ name, data, ts: Date.now() }]);
    } catch (e) {
      ex.ctx.log(`ERROR emitting ${name}: ${messageOf(e)}`);
    }
  });
}
