// Traces of a lease's lifecycle (OpenTelemetry API only; the SDK is registered by
// instrumentation.ts when OTEL_EXPORTER_OTLP_ENDPOINT is set, and without it every call here
// goes to the API's no-op tracer).
//
// One trace per lease: its trace id IS the lease id (a UUID is 32 hex digits, as a W3C trace id
// is), and every span about the lease (open, the generation's steps, the model call, propose,
// apply, cancel, sign-out, an edit's withdrawal, the sweep) is a child of one parent span id
// derived from it. A transition happens in many requests and runs (the POST that opened it, the
// Inngest calls, a later apply), which share nothing but the lease id; deriving the trace from
// it needs no storage and no trace context in the event. Each span links to the span that was
// active (the HTTP request, the Inngest call), so either trace leads to the other.
// docs/decisions/0026-one-trace-per-lease.md.
import {
  context,
  createContextKey,
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  trace,
  SpanStatusCode,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from "@opentelemetry/api";
import { canonicalId, canonicalKey, isUuid } from "./ids";

export const TRACER_NAME = "claimcheck";
/** The attribute every lease span carries. */
export const LEASE_ID = "claimcheck.lease_id";

const tracer = () => trace.getTracer(TRACER_NAME);
/** The API's no-op provider: what the global provider delegates to until an SDK registers. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();
/** A span that records nothing, handed to `fn` when tracing is off. */
const NOT_RECORDING = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Whether an SDK is registered (instrumentation.ts, or a test's). Off, the helpers below call
 * straight through: no context, no span, not even a no-op one (bench/tracing-cost.ts).
 */
export function tracingOn(): boolean {
  const provider = trace.getTracerProvider();
  return (provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider) !== NOOP_PROVIDER;
}

/** The lease the active lease span is about, for the spans started inside it. */
const LEASE_KEY = createContextKey("claimcheck.lease_id");
/** Milliseconds since the epoch, below the millisecond too. */
const now = () => performance.timeOrigin + performance.now();

/** The lease's trace id: its UUID's hex digits (never all zeros, as a UUID v4 cannot be). */
export function leaseTraceId(leaseId: string): string {
  return canonicalKey(leaseId).replace(/-/g, "");
}

/**
 * `base` with the lease's trace as its parent span: a remote span (never exported itself)
 * whose id is the trace id's low 64 bits. Null for anything that is not a lease id.
 */
export function leaseContext(leaseId: unknown, base: Context = context.active()): Context | null {
  if (!isUuid(leaseId)) return null;
  const traceId = leaseTraceId(leaseId);
  const parent = { traceId, spanId: traceId.slice(16), traceFlags: TraceFlags.SAMPLED, isRemote: true };
  return trace.setSpanContext(base.setValue(LEASE_KEY, leaseId), parent);
}

/** The lease of the lease span active here (inside `inLeaseSpan`), if any. */
export function activeLeaseId(): string | undefined {
  const value = context.active().getValue(LEASE_KEY);
  return typeof value === "string" ? value : undefined;
}

function endWith(span: Span, error: unknown) {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** The body of a span started by startActiveSpan: `fn`, an error recorded on the span, the span ended. */
function runInSpan<T>(fn: (span: Span) => Promise<T>): (span: Span) => Promise<T> {
  return async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      endWith(span, error);
      throw error;
    } finally {
      span.end();
    }
  };
}

/**
 * Runs `fn` in a child span of the active one (a step's work inside its lease span), with the
 * active lease's id as an attribute.
 */
export function inChildSpan<T>(name: string, fn: (span: Span) => Promise<T>, attributes: Attributes = {}): Promise<T> {
  if (!tracingOn()) return fn(NOT_RECORDING);
  const leaseId = activeLeaseId();
  const attrs = leaseId ? { ...attributes, [LEASE_ID]: leaseId } : attributes;
  return tracer().startActiveSpan(name, { attributes: attrs }, runInSpan(fn));
}

/** A link to the span active where the work happens (the request or run), if it is a real one. */
function linkToActive(): Link[] {
  const active = trace.getSpan(context.active())?.spanContext();
  return active && trace.isSpanContextValid(active) ? [{ context: active }] : [];
}

/**
 * Runs `fn` in a span of lease `leaseId`'s trace (active inside `fn`, so spans it starts are its
 * children), with the lease id as an attribute. Not a lease id: the span stays in the current trace.
 */
export function inLeaseSpan<T>(name: string, leaseId: unknown, fn: (span: Span) => Promise<T>, attributes: Attributes = {}): Promise<T> {
  if (!tracingOn()) return fn(NOT_RECORDING);
  const parent = leaseContext(leaseId) ?? context.active();
  const id = canonicalId(leaseId);
  const attrs = id ? { ...attributes, [LEASE_ID]: id } : attributes;
  return tracer().startActiveSpan(name, { attributes: attrs, links: linkToActive() }, parent, runInSpan(fn));
}

/** What a lease operation's spans say: which leases it touched, and how it went. */
export type LeaseOpSpans<A extends unknown[], R> = {
  /**
   * The leases, from the arguments and the result (which lease a call touches may only be known
   * once it returns: the one it opened, those a sign-out closed); the result is undefined when
   * the call threw.
   */
  leases: (args: A, result: R | undefined) => readonly unknown[];
  /** The spans' attributes, from the result (none when the call threw). */
  attributes?: (result: R) => Attributes;
};

/**
 * Wraps a lease operation so each lease it touched gets a span in its own trace, spanning the
 * call, as `spans` says. A call that throws gets an error span on the leases its arguments name.
 * When tracing is off it calls `fn` and nothing else. Each operation is a plain function of its
 * module (`applyLeaseUntraced`), wrapped where it is exported (`export const applyLease = ...`).
 */
export function tracedLeaseOp<A extends unknown[], R>(
  name: string,
  fn: (...args: A) => Promise<R>,
  spans: LeaseOpSpans<NoInfer<A>, NoInfer<R>>,
): (...args: A) => Promise<R> {
  const { leases: leasesOf, attributes: attributesOf = () => ({}) } = spans;
  return async (...args: A) => {
    if (!tracingOn()) return fn(...args);
    const startTime = now();
    const finish = (result: R | undefined, error?: unknown) => {
      const endTime = now();
      const links = linkToActive();
      for (const leaseId of leasesOf(args, result)) {
        const parent = leaseContext(leaseId);
        if (!parent) continue;
        const attributes = { ...(result === undefined ? {} : attributesOf(result)), [LEASE_ID]: leaseId as string };
        const span = tracer().startSpan(name, { startTime, attributes, links }, parent);
        if (error !== undefined) endWith(span, error);
        span.end(endTime);
      }
    };
    let result: R;
    try {
      result = await fn(...args);
    } catch (error) {
      finish(undefined, error);
      throw error;
    }
    finish(result);
    return result;
  };
}

/** `{ ok, code }` results as span attributes. */
export function outcome(result: { ok: boolean; code?: string }): Attributes {
  return { "claimcheck.outcome": result.ok ? "ok" : (result.code ?? "refused") };
}
