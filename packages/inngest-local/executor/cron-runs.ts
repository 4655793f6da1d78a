// Runs that no event starts: cron schedules (checked once a minute, UTC) and a function
// invoked by hand (POST /fn/:id/invoke).
import { cronMatches, type CronSchedule } from "../cron";
import { toEvent } from "../events";
import { INTERNAL, ulid } from "../util";
import type { FnEntry, Run } from "../types";
import { startRun } from "./runs";
import type { ExecutorState } from "./state";

export function scheduleCron(ex: ExecutorState) {
  const now = Date.now();
  const nextMinute = Math.floor(now / 60_000) * 60_000 + 60_000;
  ex.cronCancel = ex.ctx.later(nextMinute - now + 5, () => {
    const at = new Date(nextMinute);
    for (const fn of ex.fns.values()) {
      for (const t of fn.triggers) {
        if ("cron" in t && cronMatches(t.cron, at)) {
          startRun(ex, fn, toEvent({ name: INTERNAL.cron, data: { cron: t.cron.source }, ts: nextMinute }, ulid()));
          break;
        }
      }
    }
    if (!ex.ctx.closed) scheduleCron(ex);
  });
}

export function invoke(ex: ExecutorState, fn: FnEntry, body: Record<string, unknown>): Run | undefined {
  const cron = fn.triggers.find((t): t is { cron: CronSchedule } => "cron" in t);
  const name = typeof body.name === "string" ? body.name : cron ? INTERNAL.cron : INTERNAL.invoked;
  const data = (body.data as Record<string, unknown>) ?? (cron ? { cron: cron.cron.source } : {});
  ex.ctx.log(`fn ${fn.id} invoked directly`);
  return startRun(ex, fn, toEvent({ name, data }, ulid()));
}
