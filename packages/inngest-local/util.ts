// Small pieces every module of the stand-in uses: ids, durations, error text, timers.
import { createHash, randomBytes } from "node:crypto";

/** Names of the events the server itself sends. */
export const INTERNAL = { failed: "inngest/function.failed", finished: "inngest/function.finished", cancelled: "inngest/function.cancelled", invoked: "inngest/function.invoked", cron: "inngest/scheduled.timer", deferred: "inngest/deferred.schedule" };
export const sha1 = (s: string) => createHash("sha1").update(s).digest("hex");
/** The SDK reports function-level results under the hashed id "complete". */
export const COMPLETE_ID = sha1("complete");
export const DAY_MS = 24 * 60 * 60 * 1000;
export const MAX_TIMER = 2 ** 31 - 1;

const B32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** ULIDs like the real server's ids: sortable by time, which keeps /runs readable. */
export function ulid(time = Date.now(), rand: Buffer = randomBytes(10)): string {
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

export const errorOf = (e: unknown) =>
  e instanceof Error ? { name: e.name, message: e.message, stack: e.stack ?? "" } : { name: "Error", message: String(e), stack: "" };
export const messageOf = (e: unknown) => (e && typeof e === "object" && "message" in e ? String((e as { message: unknown }).message) : JSON.stringify(e));

/**
 * Timers that close() can clear all at once, and that can wait longer than setTimeout's
 * 24.8 days (a sleep of weeks re-arms itself).
 */
export function createTimers() {
  const timers = new Set<NodeJS.Timeout>();
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
  const clearAll = () => {
    for (const t of timers) clearTimeout(t);
    timers.clear();
  };
  return { later, clearAll };
}
