// A tiny HTTP app that serves Inngest functions with the pinned SDK (`serve` from
// inngest/node) on an ephemeral loopback port, for contract tests of
// packages/inngest-local. The listener starts before the functions exist (the client
// needs the stand-in's URL, and the stand-in needs ours), so until `setHandler` is
// called every request gets 503 — which also exercises the stand-in's sync retry.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type SdkApp = {
  /** The serve URL, e.g. http://127.0.0.1:41234/api/inngest */
  url: string;
  setHandler(handler: http.RequestListener): void;
  close(): Promise<void>;
};

export async function startSdkApp(path = "/api/inngest"): Promise<SdkApp> {
  let handler: http.RequestListener | undefined;
  const server = http.createServer((req, res) => {
    if (!req.url?.startsWith(path)) {
      res.writeHead(404).end();
    } else if (!handler) {
      res.writeHead(503, { "content-type": "text/plain" }).end("app not ready");
    } else {
      handler(req, res);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    setHandler: (h) => {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Wraps a serve handler to hand each POST's JSON body (and the request) to `onBody` once read,
 * without taking the body from the SDK: it copies the chunks as the socket pushes them.
 */
export function tapBodies(handler: http.RequestListener, onBody: (req: http.IncomingMessage, body: Record<string, unknown>) => void): http.RequestListener {
  return (req, res) => {
    if (req.method !== "POST") return handler(req, res);
    const chunks: Buffer[] = [];
    const push = req.push.bind(req);
    req.push = (chunk: unknown, enc?: BufferEncoding) => {
      if (chunk) chunks.push(Buffer.from(chunk as Buffer));
      else {
        try {
          onBody(req, JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
        } catch {
          // not JSON
        }
      }
      return push(chunk, enc);
    };
    handler(req, res);
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Polls `fn` every 25 ms until it gives a truthy value, or fails naming `what`. */
export async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 8000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
