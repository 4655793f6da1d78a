// A client of a running app (`next start`) over real HTTP, as curl or a browser tab would be:
// JSON calls with a cookie, and the lease event stream (GET /api/leases/:id/events) read
// frame by frame with the time each frame arrived.
import { performance } from "node:perf_hooks";
import { PASSWORD } from "./users";

export type Res = { status: number; body: any; headers: Headers };

export async function http(
  base: string,
  method: string,
  path: string,
  opts: { cookie?: string; json?: unknown; timeoutMs?: number } = {},
): Promise<Res> {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON (an error page): kept as text
  }
  return { status: res.status, body, headers: res.headers };
}

export function cookieOf(headers: Headers): string {
  return headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

export async function signIn(base: string, email: string, password = PASSWORD): Promise<string> {
  const res = await http(base, "POST", "/api/session", { json: { email, password } });
  if (res.status !== 200) throw new Error(`sign-in at ${base} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return cookieOf(res.headers);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 15_000): Promise<T> {
  const started = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(50);
  }
}

export type LeaseFrame = { at: number; lease: { status: string; events: { kind: string }[]; [k: string]: unknown } };

export type EventStream = {
  status: number;
  frames: LeaseFrame[];
  /** performance.now() when the server ended the stream (undefined while it is open). */
  endedAt(): number | undefined;
  /** The first frame (from `from` on) that satisfies `pred`. */
  next(pred: (f: LeaseFrame) => boolean, timeoutMs?: number, from?: number): Promise<LeaseFrame>;
  /** Resolves with performance.now() when the server ends the stream. */
  ended(timeoutMs?: number): Promise<number>;
  close(): void;
};

/** Opens GET /api/leases/:id/events and records each `lease` frame with its arrival time. */
export async function openEventStream(base: string, leaseId: string, cookie: string): Promise<EventStream> {
  const abort = new AbortController();
  const res = await fetch(`${base}/api/leases/${leaseId}/events`, { headers: { cookie, accept: "text/event-stream" }, signal: abort.signal });
  const frames: LeaseFrame[] = [];
  let endedAt: number | undefined;
  let wake: (() => void)[] = [];
  const notify = () => {
    const w = wake;
    wake = [];
    for (const f of w) f();
  };
  if (res.ok && res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          const at = performance.now();
          buffer += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const lines = block.split("\n");
            if (!lines.includes("event: lease")) continue;
            const data = lines.find((l) => l.startsWith("data: "));
            if (data) frames.push({ at, lease: JSON.parse(data.slice(6)) });
          }
          notify();
        }
      } catch {
        // aborted by close()
      }
      endedAt = performance.now();
      notify();
    })();
  } else {
    await res.body?.cancel();
    endedAt = performance.now();
  }
  const until = async <T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`event stream of lease ${leaseId}: timed out after ${timeoutMs} ms waiting for ${what}; frames: ${frames.map((f) => f.lease.status).join(", ")}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  return {
    status: res.status,
    frames,
    endedAt: () => endedAt,
    next: (pred, timeoutMs = 15_000, from = 0) =>
      until("a matching frame", () => frames.slice(from).find(pred) ?? (endedAt !== undefined ? failEnded(leaseId, frames) : undefined), timeoutMs),
    ended: (timeoutMs = 15_000) => until("the stream to end", () => endedAt, timeoutMs),
    close: () => abort.abort(),
  };
}

function failEnded(leaseId: string, frames: LeaseFrame[]): never {
  throw new Error(`event stream of lease ${leaseId} ended; frames: ${frames.map((f) => f.lease.status).join(", ")}`);
}

/** p50/p95/max and the like, for console figures. */
export function distribution(values: number[]): { n: number; min: number; p50: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const r = (x: number) => Math.round(x * 10) / 10;
  return { n: sorted.length, min: r(sorted[0] ?? NaN), p50: r(at(0.5)), p95: r(at(0.95)), max: r(sorted.at(-1) ?? NaN) };
}
