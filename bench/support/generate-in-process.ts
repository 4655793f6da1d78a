// The generation's database work and model call as inngest/generate-lease-proposal.ts does
// them, step by step, in this process: the "domain" lifecycle of `npm run bench lifecycle`
// measures the lib calls without HTTP or the Inngest server. Keep it in step with that file:
// the answer parsed by the purpose's schema, and the call's usage priced and proposed with it,
// so the propose writes the one model_usage row the real function's does
// (tests/integration/spend/bench-mirror.test.ts holds the two to the same rows).
import type { Db } from "@/db/client";
import { loadForGeneration, proposeLease } from "@/lib/leases";
import type { ModelProvider } from "@/lib/model/types";
import { purposeOf } from "@/lib/purposes";
import { callCostCents, callKey, type CallUsage } from "@/lib/spend";

/** The run's first attempt, as the Inngest function counts it (`attempt` 0). */
const ATTEMPT = 0;

export async function generateInProcess(db: Db, leaseId: string, runNonce: string, model: ModelProvider): Promise<string> {
  // step generate: one read, then the model call
  const input = await loadForGeneration(db, leaseId);
  if (!input.ok) return input.reason;
  const proposal = await model.generate({
    purpose: input.lease.purpose,
    actorId: input.lease.actorId,
    invoice: input.invoice,
    context: input.context,
    signal: AbortSignal.timeout(input.lease.remainingMs),
  });
  const purpose = purposeOf(input.lease.purpose);
  const output = purpose.output.safeParse(proposal.output);
  if (!output.success) return "invalid_output";
  const tokens = { inputTokens: proposal.usage.inputTokens, outputTokens: proposal.usage.outputTokens };
  const usage: CallUsage = {
    callKey: callKey(leaseId, ATTEMPT),
    model: proposal.model,
    ...tokens,
    estimated: proposal.usage.estimated,
    costCents: callCostCents(proposal.model, tokens),
  };
  // step propose
  const proposed = await proposeLease(db, {
    leaseId,
    actorId: proposal.actorId,
    runNonce,
    proposal: { ...(output.data as Record<string, unknown>), model: proposal.model },
    detail: { prompt_version: purpose.promptVersion, ...purpose.describe(output.data) },
    usage,
  });
  return proposed.ok ? "proposed" : proposed.code;
}
