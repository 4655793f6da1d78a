import "server-only";
import { watchSessionRevoked } from "@/lib/lease-feed";
// Server-sent events as a web Response, with what any long-lived stream needs and nothing about
// what it carries: the reconnect delay, a heartbeat comment, an end when the client goes away
// (abort, cancel, a failed write) or stops reading (heartbeats pile up unread: a half-open
// connection), an end after MAX_STREAM_MS in any case (EventSource reconnects by itself), and
// a cap on the streams one session holds open, listening before the first read, one read at a
// time. The route says what is sent and when it is done (app/api/leases/[id]/events/route.ts,
// app/api/invoices/[id]/events/route.ts).

const HEARTBEAT_MS = 15_000;
/** The longest one stream lives; the client reconnects (after RECONNECT_MS) and re-reads. */
const MAX_STREAM_MS = 5 * 60_000;
/** The client's wait before it reconnects (the stream's `retry:` line). */
const RECONNECT_MS = 2_000;
/** Chunks queued unread beyond this mean the client is not reading: the stream ends. */
const MAX_UNREAD_CHUNKS = 8;

export type EventChannel = {
  /** Sends one event: `event: <name>` with `data` as JSON. Nothing once closed. */
  send(event: string, data: unknown): void;
  /** Ends the stream (idempotent); the stream's `onClose` runs once. */
  close(): void;
  readonly closed: boolean;
};

/**
 * A `text/event-stream` response. `start` runs once the stream exists, before the heartbeat
 * and the lifetime start (neither does if `start` closed it); `onClose` once, however it ends.
 * The stream ends when `signal` (the request's) aborts.
 */
export function eventStream(signal: AbortSignal, { start, onClose }: { start(channel: EventChannel): void; onClose(): void }): Response {
  const encoder = new TextEncoder();
  let closed = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let lifetime: ReturnType<typeof setTimeout> | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    clearTimeout(lifetime);
    onClose();
    try {
      controller.close();
    } catch {
      // already closed by the client
    }
  };
  const write = (text: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      return close();
    }
    // desiredSize goes below zero by one for each chunk the response has not taken.
    if ((controller.desiredSize ?? 0) < -MAX_UNREAD_CHUNKS) close();
  };
  const channel: EventChannel = {
    send: (event, data) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
    close,
    get closed() {
      return closed;
    },
  };

  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      write(`retry: ${RECONNECT_MS}\n\n`);
      start(channel);
      if (closed) return;
      heartbeat = setInterval(() => write(": heartbeat\n\n"), HEARTBEAT_MS);
      lifetime = setTimeout(close, MAX_STREAM_MS);
    },
    cancel() {
      close();
    },
  });
  if (signal.aborted) close();
  else signal.addEventListener("abort", close, { once: true });

  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      // no-transform keeps the server's compression from buffering the stream.
      "cache-control": "no-cache, no-store, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}

// ---------------------------------------------------------------------------------------
// Open streams per session

/** Event streams one session may hold open at once; the next one is 429 too_many_streams. */
export const MAX_STREAMS_PER_SESSION = 20;

// In this process's memory: the cap holds per app instance, which is what it is for (each
// stream holds a socket and a listener here). With several instances behind a balancer, a
// session could hold 20 on each; a shared counter would need the database per stream.
const streams = ((globalThis as unknown as { __claimcheckStreams?: Map<string, number> }).__claimcheckStreams ??= new Map());

/**
 * Takes one of the session's stream slots: a release function (idempotent), or null when the
 * session already holds MAX_STREAMS_PER_SESSION.
 */
export function takeStreamSlot(sessionId: string): (() => void) | null {
  const held = streams.get(sessionId) ?? 0;
  if (held >= MAX_STREAMS_PER_SESSION) return null;
  streams.set(sessionId, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const now = (streams.get(sessionId) ?? 1) - 1;
    if (now <= 0) streams.delete(sessionId);
    else streams.set(sessionId, now);
  };
}

/**
 * A stream's two feeds, listened to before its first read so that nothing committed after that
 * read is missed: the row's changes (`subscribe`) and the session's sign-out. Until the stream
 * starts (`start`), a change or a sign-out is only remembered; `start` hands them over.
 */
export async function listenBeforeRead<N>(subscribe: (onChange: (notice: N | null) => void) => Promise<() => void>, sessionId: string) {
  let notified = false;
  let revokedEarly = false;
  let onChange: (notice: N | null) => void = () => {
    notified = true;
  };
  let onRevoked: () => void = () => {
    revokedEarly = true;
  };
  const unsubscribeRow = await subscribe((notice) => onChange(notice));
  const unwatchSession = await watchSessionRevoked(sessionId, () => onRevoked()).catch((error: unknown) => {
    unsubscribeRow();
    throw error;
  });
  return {
    unsubscribe() {
      unsubscribeRow();
      unwatchSession();
    },
    /** Routes later changes and the sign-out to the stream; says what came before, if anything. */
    start(handlers: { changed(notice: N | null): void; revoked(): void }) {
      onChange = handlers.changed;
      onRevoked = handlers.revoked;
      return { notified, revoked: revokedEarly };
    },
  };
}

export type StreamFeed<N> = Awaited<ReturnType<typeof listenBeforeRead<N>>>;

/**
 * Coalesces a burst of changes into one read at a time: `pass` runs again after itself when a
 * change came in while it ran, until the channel closes or `pass` answers "stop". A failed read
 * ends the stream (the client reconnects and reads afresh).
 */
export function oneReadAtATime(channel: () => EventChannel, pass: () => Promise<"stop" | void>, onError: (error: unknown) => void) {
  let reading: Promise<void> | null = null;
  let again = false;
  const refresh = () => {
    if (channel().closed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = (async () => {
      do {
        again = false;
        if ((await pass()) === "stop") return;
      } while (again && !channel().closed);
    })()
      .catch((error: unknown) => {
        onError(error);
        channel().close();
      })
      .finally(() => {
        reading = null;
      });
  };
  return Object.assign(refresh, { busy: () => reading !== null });
}
