// The "local" provider: no network, no model. A deterministic summary built only from the
// invoice's own data, so development, tests and an unconfigured deployment still produce
// something a finance reviewer can read. Same request in, same summary out.
import { PURPOSE_DEFINITIONS } from "@/lib/purposes";
import { estimateTokens, sleep, userMessage } from "./internal";
import { ModelSchemaError, type ModelProvider, type ModelRequest, type Proposal } from "./types";

export { summarizeInvoice, moneyFormatter } from "@/lib/purposes/summary-text";

export const LOCAL_MODEL_ID = "local-summary-v1";

export type LocalProviderOptions = {
  /**
   * Delay before answering, to mimic a real model (default 0). `request.signal` is honoured
   * during the delay: an abort rejects at once with a ModelUnavailableError (retriable) whose
   * `cause` is the signal's reason. An already-aborted signal rejects even with no delay.
   */
  latencyMs?: number;
  /**
   * Ignore `request.signal` and always answer after the delay, as a model server that cannot
   * be stopped once asked (default false): to rehearse late completions.
   */
  ignoreAbort?: boolean;
};

export function createLocalProvider(opts: LocalProviderOptions = {}): ModelProvider {
  const latencyMs = opts.latencyMs ?? 0;
  if (!Number.isFinite(latencyMs) || latencyMs < 0) {
    throw new RangeError(`latencyMs must be a finite number >= 0, got ${String(latencyMs)}`);
  }
  return {
    name: "local",
    timeLimitMs: latencyMs,
    async generate(request: ModelRequest): Promise<Proposal> {
      await sleep(latencyMs, opts.ignoreAbort ? undefined : request.signal, "local");
      const purpose = PURPOSE_DEFINITIONS[request.purpose];
      if (!purpose) throw new ModelSchemaError(`local model: no purpose ${String(request.purpose)}`);
      const output = purpose.local(localInput(request), (request.context ?? {}) as never);
      // Counted as the openai-compatible lane would be billed: the prompt and the answer.
      const usage = {
        inputTokens: estimateTokens(purpose.instructions) + estimateTokens(userMessage(request)),
        outputTokens: estimateTokens(JSON.stringify(output)),
        estimated: true,
      };
      return { output, actorId: request.actorId, model: LOCAL_MODEL_ID, usage };
    },
  };
}

/** The request as a purpose's `local` takes it: every line with an id (a caller's line without one gets its position). */
function localInput(request: ModelRequest) {
  const lines = request.invoice.lines.map((line, index) => ({ ...line, id: line.id ?? String(index + 1) }));
  return { orgId: "", invoice: { ...request.invoice, lines } };
}
