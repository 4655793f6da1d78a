// Traces exported over OTLP by the built app: `next start` with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at a collector in this process (OTLP over HTTP with JSON bodies), its real
// /api/inngest route driven by the local Inngest stand-in. One lifecycle (open → proposed →
// apply) arrives as one trace, the lease's (docs/decisions/0026-one-trace-per-lease.md).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAppServer, type AppServer } from "../support/app-server";
import { http, signIn, waitFor } from "../support/app-client";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../support/db";

if (inject("dbKind") !== "postgres") {
  throw new Error("traces.pg.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

const BOOT_TIMEOUT = 300_000;

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: { key: string; value: OtlpValue }[] };
type ReceivedSpan = { traceId: string; spanId: string; parentSpanId: string; name: string; attributes: Record<string, unknown> };

/** A collector that keeps every span it is sent (POST /v1/traces, OTLP/JSON). */
async function startCollector() {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
      };
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            const attributes: Record<string, unknown> = {};
            for (const { key, value } of span.attributes ?? []) attributes[key] = value.stringValue ?? value.intValue ?? value.boolValue;
            spans.push({ traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? "", name: span.name, attributes });
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

let t: TestDb;
let collector: Awaited<ReturnType<typeof startCollector>>;
let app: AppServer;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  collector = await startCollector();
  app = await startAppServer({
    databaseUrl: url.toString(),
    model: { provider: "local" },
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_SCHEDULE_DELAY: "200" },
  });
}, BOOT_TIMEOUT);
afterAll(async () => {
  await app?.stop();
  await collector?.close();
  await t?.close();
});

describe("traces over OTLP from the running app", () => {
  it("one lifecycle, open → proposed → apply, is one trace: the lease's, with every transition, step and the model call", async () => {
    const user = await makeUser(t.db, "Exported");
    const inv = await makeInvoice(t.db, user.id);
    const cookie = await signIn(app.url, user.email);
    const opened = await http(app.url, "POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    expect(opened.status).toBe(201);
    const leaseId = opened.body.lease_id as string;
    await waitFor("the lease to be proposed", async () => (await http(app.url, "GET", `/api/leases/${leaseId}`, { cookie })).body.status === "proposed");
    expect((await http(app.url, "POST", `/api/leases/${leaseId}/apply`, { cookie })).status).toBe(200);

    const traceId = leaseId.replace(/-/g, "");
    const expected = ["lease.open", "inngest.step generate", "model.generate", "inngest.step propose", "lease.propose", "lease.apply"];
    const spans = await waitFor("the lifecycle's spans at the collector", () => {
      const mine = collector.spans.filter((s) => s.attributes["claimcheck.lease_id"] === leaseId);
      return expected.every((name) => mine.some((s) => s.name === name)) ? mine : undefined;
    });
    expect(spans.map((s) => s.name).sort()).toEqual([...expected].sort());
    for (const span of spans) expect(span.traceId, span.name).toBe(traceId);
    // The model call hangs under the generate step; the rest under the lease's own parent.
    const generate = spans.find((s) => s.name === "inngest.step generate")!;
    expect(spans.find((s) => s.name === "model.generate")!.parentSpanId).toBe(generate.spanId);
    for (const span of spans.filter((s) => s.name !== "model.generate")) expect(span.parentSpanId, span.name).toBe(traceId.slice(16));
    // The app's own request spans (Next.js) are there too, in their own traces.
    expect(collector.spans.some((s) => s.traceId !== traceId)).toBe(true);
  });
});
