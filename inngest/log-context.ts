// Every log line a function run writes carries its lease (`lease_id`, from the triggering
// event, or in a failure handler from the event that failed) and its run (`inngest_run_id`),
// on top of the request id server.mjs gave the call to /api/inngest (lib/log-context.ts).
import { Middleware } from "inngest";
import { withLogContext } from "@/lib/log-context";
import { leaseIdOf } from "./tracing";

function fields(ctx: { event?: { data?: unknown }; runId: string }) {
  const leaseId = leaseIdOf(ctx.event?.data);
  return { ...(typeof leaseId === "string" ? { lease_id: leaseId } : {}), inngest_run_id: ctx.runId };
}

export class LeaseLogContext extends Middleware.BaseMiddleware {
  readonly id = "claimcheck:lease-log-context";

  override wrapFunctionHandler({ ctx, next }: Middleware.WrapFunctionHandlerArgs): Promise<unknown> {
    return withLogContext(fields(ctx), () => next());
  }

  override wrapStepHandler({ ctx, next }: Middleware.WrapStepHandlerArgs): Promise<unknown> {
    return withLogContext(fields(ctx), () => next());
  }
}
