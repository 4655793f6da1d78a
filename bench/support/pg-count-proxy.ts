// A TCP proxy in front of PostgreSQL that counts the statements clients send, for the
// benchmark's "statements per lifecycle" (pg_stat_statements needs shared_preload_libraries,
// which a shared server may not have). It reads the frontend protocol only to count: a simple
// Query ('Q') is one statement, an extended-protocol Execute ('E') is one statement, and the
// text of each Execute is found from its Bind ('B') and the Parse ('P') that named it, so the
// counts can be grouped by statement. Bytes go through unchanged both ways.
import net from "node:net";

export type StatementCounts = { total: number; byText: Map<string, number> };

export type CountProxy = {
  /** The upstream URL with the proxy's host and port in place of the server's. */
  url: string;
  counts(): StatementCounts;
  reset(): void;
  close(): Promise<void>;
};

export async function startCountProxy(upstreamUrl: string): Promise<CountProxy> {
  const upstream = new URL(upstreamUrl);
  let total = 0;
  let byText = new Map<string, number>();
  const count = (text: string) => {
    total++;
    const key = text.replace(/\s+/g, " ").trim().slice(0, 240);
    byText.set(key, (byText.get(key) ?? 0) + 1);
  };
  const sockets = new Set<net.Socket>();

  const server = net.createServer((client) => {
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(client).add(server);
    const drop = () => {
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on("error", drop).on("close", drop);
    server.on("error", drop).on("close", drop);
    server.pipe(client);

    // Per connection: prepared statement name -> text, and the statement the last Bind named.
    const prepared = new Map<string, string>();
    let bound = "";
    let started = false; // the startup message has no type byte
    let buffer: Buffer = Buffer.alloc(0);
    client.on("data", (chunk: Buffer) => {
      server.write(chunk);
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      for (;;) {
        if (!started) {
          if (buffer.length < 4) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          buffer = buffer.subarray(length);
          if (code !== 80877103) started = true; // an SSLRequest is followed by the real startup
          continue;
        }
        if (buffer.length < 5) return;
        const type = String.fromCharCode(buffer[0]!);
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) return;
        const body = buffer.subarray(5, 1 + length);
        buffer = buffer.subarray(1 + length);
        if (type === "Q") count(cString(body, 0).text);
        else if (type === "P") {
          const name = cString(body, 0);
          prepared.set(name.text, cString(body, name.next).text);
          if (name.text === "") bound = cString(body, name.next).text;
        } else if (type === "B") {
          const portal = cString(body, 0);
          const name = cString(body, portal.next).text;
          bound = name === "" ? bound : (prepared.get(name) ?? `(statement ${name})`);
        } else if (type === "E") count(bound);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(upstreamUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    counts: () => ({ total, byText: new Map(byText) }),
    reset() {
      total = 0;
      byText = new Map();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function cString(buf: Buffer, from: number): { text: string; next: number } {
  const end = buf.indexOf(0, from);
  const stop = end < 0 ? buf.length : end;
  return { text: buf.toString("utf8", from, stop), next: stop + 1 };
}
