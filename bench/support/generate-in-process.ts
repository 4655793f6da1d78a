// The generation's database work and model call as inngest/generate-lease-proposal.ts does
// them, step by step, in this process: the "domain" lifecycle of `npm run bench lifecycle`
// measures the lib calls without HTTP or the Inngest server. Keep it in step with that file.
import type { Db } from "@/db/client";
import { loadForGeneration, proposeLease } from "@/lib/leases";
import type { ModelProvider } from "@/lib/model/types";

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
  // step propose
  const proposed = await proposeLease(db, {
    leaseId,
    actorId: proposal.actorId,
    runNonce,
    proposal: { ...(proposal.output as Record<string, unknown>), model: proposal.model },
  });
  return proposed.ok ? "proposed" : proposed.code;
}
