// What a lease span costs a transition (lib/tracing.ts), in one run: an async operation called
// directly, wrapped by `tracedLeaseOp` with no OpenTelemetry SDK registered (tracing off: the
// API's no-op tracer), and wrapped with an SDK recording into memory (tracing on, without the
// network). Per call, in microseconds; the operation itself does nothing, so the figures are
// the wrapper's own cost, to compare with a transition's database round trips (milliseconds).
//
//   npx tsx bench/tracing-cost.ts [--calls N]
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { tracedLeaseOp } from "@/lib/tracing";

const LEASE = "6f1c1a52-6d55-4a0e-9a43-3f2f2b8f1a01";
const args = process.argv.slice(2);
const callsAt = args.indexOf("--calls");
const CALLS = callsAt >= 0 ? Number(args[callsAt + 1]) : 200_000;

const operation = async (leaseId: string) => ({ ok: true as const, leaseId });
const wrapped = tracedLeaseOp("lease.bench", operation, {
  leases: ([leaseId]) => [leaseId],
  attributes: () => ({ "claimcheck.outcome": "ok" }),
});

async function microsPerCall(fn: (leaseId: string) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 10_000; i++) await fn(LEASE); // warm-up
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) await fn(LEASE);
  return ((performance.now() - started) * 1000) / CALLS;
}

const direct = await microsPerCall(operation);
const off = await microsPerCall(wrapped);
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);
const on = await microsPerCall(async (leaseId) => {
  const result = await wrapped(leaseId);
  exporter.reset(); // keep memory flat: only the recording is measured
  return result;
});
await provider.shutdown();

const r = (x: number) => Math.round(x * 100) / 100;
console.table({
  "direct call": { "µs per call": r(direct) },
  "tracedLeaseOp, tracing off": { "µs per call": r(off), "added µs": r(off - direct) },
  "tracedLeaseOp, tracing on (in-memory)": { "µs per call": r(on), "added µs": r(on - direct) },
});
console.info(`${CALLS} calls each`);
