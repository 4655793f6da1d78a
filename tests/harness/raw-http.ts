// A client that writes exactly the bytes it is given, for the tests of the built app over the
// wire (tests/integration/**/*.built-app.test.ts): fetch (undici) refuses methods such as TRACE, TRACK
// and CONNECT, lying lengths and raw bytes, which are exactly what a hostile client sends.
import net from "node:net";

export type RawAnswer = { status: number; head: string; body: string };

/**
 * Sends `head` (request line and headers, without the blank line) and `body` to `baseUrl` on a
 * fresh connection. A request whose declared length exceeds what it sends gets its write side
 * closed after `halfCloseMs`, as a client that gives up would. Status 0: no answer. An event
 * stream is read to its head, or with `firstEvent` to its first `event:` frame (or the timeout),
 * and then the connection is dropped, as a page that goes away drops it.
 */
export function rawRequest(
  baseUrl: string,
  head: string,
  body: Uint8Array | null,
  opts: { halfCloseMs?: number; timeoutMs?: number; firstEvent?: boolean } = {},
): Promise<RawAnswer> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), "127.0.0.1");
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      let all = Buffer.concat(chunks);
      // Interim answers (100 Continue to `Expect: 100-continue`) come before the real one.
      while (/^HTTP\/1\.[01] 1\d\d /.test(all.subarray(0, 16).toString("latin1")) && all.indexOf("\r\n\r\n") >= 0) {
        all = all.subarray(all.indexOf("\r\n\r\n") + 4);
      }
      const split = all.indexOf("\r\n\r\n");
      const headPart = (split < 0 ? all : all.subarray(0, split)).toString("latin1");
      let rest: Buffer = split < 0 ? Buffer.alloc(0) : all.subarray(split + 4);
      if (/^transfer-encoding: *chunked/im.test(headPart)) rest = dechunk(rest);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(headPart)?.[1] ?? 0);
      resolve({ status, head: headPart, body: rest.toString("utf8").slice(0, 2000) });
    };
    const timer = setTimeout(finish, opts.timeoutMs ?? 10_000);
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      // An event stream never ends by itself: its head is all we need, or its first frame.
      const soFar = Buffer.concat(chunks);
      const split = soFar.indexOf("\r\n\r\n");
      if (split < 0 || !/content-type: text\/event-stream/i.test(soFar.subarray(0, split).toString("latin1"))) return;
      if (!opts.firstEvent) return finish();
      const rest = soFar.subarray(split + 4);
      const text = (/^transfer-encoding: *chunked/im.test(soFar.subarray(0, split).toString("latin1")) ? dechunk(rest) : rest).toString(
        "utf8",
      );
      if (/^event: .*\n(?:.*\n)*?\n/m.test(text)) finish();
    });
    socket.on("end", finish);
    socket.on("close", finish);
    socket.on("error", finish);
    socket.write(Buffer.from(`${head}\r\n\r\n`, "latin1"));
    if (body && body.byteLength) socket.write(body);
    if (opts.halfCloseMs !== undefined) setTimeout(() => socket.end(), opts.halfCloseMs);
  });
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const eol = data.indexOf("\r\n", at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString("latin1"), 16);
    if (!size) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** A header's value in a raw answer's head, or null. */
export function headerOf(head: string, name: string): string | null {
  const line = head.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line ? line.slice(name.length + 1).trim() : null;
}
