// Traces exported over OTLP by the built app: `next start` with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at a collector in this process (OTLP over HTTP with JSON bodies), its real
// /api/inngest route driven by the local Inngest stand-in. One lifecycle (open → proposed →
// apply) arrives as one trace, the lease's (docs/decisions/0026-one-trace-per-lease.md).
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAppServer, type AppServer } from "../../harness/app-server";
import { http, signIn, waitFor } from "../../harness/app-client";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";
import { startCollector } from "../../harness/otlp-collector";

if (inject("dbKind") !== "postgres") {
  throw new Error("traces.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

const BOOT_TIMEOUT = 300_000;

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
