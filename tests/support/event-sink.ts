import http from "node:http";
import type { AddressInfo } from "node:net";

export type SentEvent = { name: string; id?: string; data: Record<string, unknown> };

/**
 * Stands where the Inngest server's event API stands (POST /e/:key), for tests of the
 * HTTP API alone. It records what the app sent and can be told to refuse.
 */
export async function startEventSink() {
  const events: SentEvent[] = [];
  let failing = false;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.startsWith("/e/")) {
        res.writeHead(404).end();
        return;
      }
      if (failing) {
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "down", status: 500 }));
        return;
      }
      const parsed = JSON.parse(body) as SentEvent | SentEvent[];
      const batch = Array.isArray(parsed) ? parsed : [parsed];
      events.push(...batch);
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ ids: batch.map((_, i) => `evt-${events.length + i}`), status: 200 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    events,
    setFailing(value: boolean) {
      failing = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
