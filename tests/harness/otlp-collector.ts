// An OTLP/HTTP collector in this process (JSON bodies, POST /v1/traces) that keeps every span
// it is sent, with its attributes and its times in ms on the Unix clock. The app exports to it
// when started with OTEL_EXPORTER_OTLP_ENDPOINT=<url> and OTEL_EXPORTER_OTLP_PROTOCOL=http/json
// (tests/integration/operations/traces.built-app.test.ts, bench/timeline.ts).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: OtlpValue }[];
};

export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** ms on the Unix clock */
  start: number;
  end: number;
  attributes: Record<string, unknown>;
};

const ms = (unixNano: string) => Number(BigInt(unixNano) / 1000n) / 1000;

export async function startCollector() {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            const attributes: Record<string, unknown> = {};
            for (const { key, value } of span.attributes ?? []) attributes[key] = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              start: ms(span.startTimeUnixNano),
              end: ms(span.endTimeUnixNano),
              attributes,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
