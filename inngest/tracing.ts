// Each step attempt of an Inngest function as a span in its lease's trace (lib/tracing.ts),
// the lease found in the triggering event (or, in a failure handler, in the event that failed).
// Our own middleware rather than the SDK's extendedTracesMiddleware: that one exports spans to
// the Inngest server for its dashboard, under the run's trace; these go with the app's other
// spans over OTLP, under the lease's (docs/decisions/0026-one-trace-per-lease.md).
import { Middleware } from "inngest";
import { inLeaseSpan } from "@/lib/tracing";

export function leaseIdOf(data: unknown): unknown {
  const record = (data ?? {}) as { leaseId?: unknown; event?: { data?: { leaseId?: unknown } } };
  return record.leaseId ?? record.event?.data?.leaseId;
}

export class LeaseStepTracing extends Middleware.BaseMiddleware {
  readonly id = "claimcheck:lease-step-tracing";

  override wrapStepHandler({ ctx, fn, stepInfo, next }: Middleware.WrapStepHandlerArgs): Promise<unknown> {
    const step = stepInfo.options.id;
    return inLeaseSpan(`inngest.step ${step}`, leaseIdOf(ctx.event?.data), () => next(), {
      "inngest.function": fn.id(this.client.id),
      "inngest.step": step,
      "inngest.run_id": ctx.runId,
      "inngest.attempt": ctx.attempt,
    });
  }
}
