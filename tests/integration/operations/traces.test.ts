// Traces (lib/tracing.ts, inngest/tracing.ts, lib/model/traced.ts) on a real database
// (PostgreSQL or PGlite, per run): an OpenTelemetry SDK with an in-memory exporter, the HTTP
// API through its real route handlers, and the generate function run by @inngest/test on the
// event the API sent, with the local model. One lease's lifecycle is one trace: every span
// about it, from the request that opened it through each step attempt and the model call to
// the apply, carries its id and shares one trace id; another lease's spans are in another.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { InngestTestEngine } from "@inngest/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateLeaseProposal } from "@/inngest/generate-lease-proposal";
import { LEASE_ID, leaseTraceId } from "@/lib/tracing";
import { api, signInCookie, sink } from "../../support/api";
import { opened as decrypted } from "../../harness/step-data";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
  await t?.close();
});

/** Open → generate (all three steps) → apply, as the page and the Inngest server would drive it. */
async function lifecycle(name: string) {
  const user = await makeUser(t.db, name);
  const inv = await makeInvoice(t.db, user.id, { counterparty: `${name} GmbH` });
  const cookie = await signInCookie(user.email);
  const opened = await api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
  expect(opened.status).toBe(201);
  const leaseId = opened.body.lease_id as string;
  const event = sink().events.find((e) => e.name === "lease/opened" && e.data.leaseId === leaseId);
  expect(event).toBeDefined();

  const { result } = await new InngestTestEngine({ function: generateLeaseProposal, events: [{ ...event!, data: event!.data }] }).execute();
  expect(await decrypted(result)).toEqual({ leaseId, outcome: "proposed" });

  const applied = await api("POST", `/api/leases/${leaseId}/apply`, { cookie });
  expect(applied.status).toBe(200);
  return leaseId;
}

const spansOf = (leaseId: string) => exporter.getFinishedSpans().filter((s) => s.attributes[LEASE_ID] === leaseId);
const names = (spans: ReadableSpan[]) => new Set(spans.map((s) => s.name));

describe("one trace per lease lifecycle", () => {
  it("every span of a lease (open, each step, the model call, propose, apply) carries its id and shares its trace; another lease has its own", async () => {
    const first = await lifecycle("Tracey");
    const second = await lifecycle("Tracer");

    for (const leaseId of [first, second]) {
      const spans = spansOf(leaseId);
      expect(names(spans)).toEqual(
        new Set([
          "lease.open",
          "inngest.step generate",
          "model.generate",
          "inngest.step propose",
          "lease.propose",
          "lease.apply",
        ]),
      );
      expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([leaseTraceId(leaseId)]));
      // No span about this lease lives anywhere else: the trace holds the whole lifecycle.
      const inTrace = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === leaseTraceId(leaseId));
      expect(inTrace.map((s) => s.spanContext().spanId).sort()).toEqual(spans.map((s) => s.spanContext().spanId).sort());

      // The model call is a child of the generate step's span, and says how it went.
      const generate = spans.find((s) => s.name === "inngest.step generate")!;
      const model = spans.find((s) => s.name === "model.generate")!;
      expect(model.parentSpanContext?.spanId).toBe(generate.spanContext().spanId);
      expect(model.attributes).toMatchObject({ "claimcheck.model.provider": "local", "claimcheck.model": "local-summary-v1", "claimcheck.model.aborted": false });
      expect(generate.attributes).toMatchObject({ "inngest.step": "generate", "inngest.function": "claimcheck-generate-lease-proposal", "inngest.attempt": 0 });
      expect(spans.find((s) => s.name === "lease.apply")!.attributes).toMatchObject({ "claimcheck.outcome": "ok" });
      expect(spans.find((s) => s.name === "lease.propose")!.attributes).toMatchObject({ "claimcheck.outcome": "ok" });
      expect(spans.find((s) => s.name === "lease.open")!.attributes).toMatchObject({ "claimcheck.outcome": "ok", "claimcheck.created": true });
      // The open span starts before, and the apply span ends after, every other span of it.
      const start = (s: ReadableSpan) => s.startTime[0] * 1e9 + s.startTime[1];
      const end = (s: ReadableSpan) => s.endTime[0] * 1e9 + s.endTime[1];
      const open = spans.find((s) => s.name === "lease.open")!;
      const apply = spans.find((s) => s.name === "lease.apply")!;
      for (const s of spans) {
        expect(start(s)).toBeGreaterThanOrEqual(start(open));
        expect(end(s)).toBeLessThanOrEqual(end(apply));
      }
    }
    expect(leaseTraceId(first)).not.toBe(leaseTraceId(second));
  });

  it("a cancel and a refused apply are spans of the lease's trace too", async () => {
    const user = await makeUser(t.db, "Cancelling");
    const inv = await makeInvoice(t.db, user.id);
    const cookie = await signInCookie(user.email);
    const opened = await api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
    const leaseId = opened.body.lease_id as string;
    expect((await api("POST", `/api/leases/${leaseId}/apply`, { cookie })).status).toBe(409);
    expect((await api("POST", `/api/leases/${leaseId}/cancel`, { cookie })).status).toBe(200);

    const spans = spansOf(leaseId);
    expect(spans.map((s) => [s.name, s.attributes["claimcheck.outcome"]])).toEqual([
      ["lease.open", "ok"],
      ["lease.apply", "lease_open"],
      ["lease.cancel", "ok"],
    ]);
    for (const s of spans) expect(s.spanContext().traceId).toBe(leaseTraceId(leaseId));
  });
});
