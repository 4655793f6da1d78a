// The model call as a span (lib/tracing.ts): a child of the generate step's span, in its
// lease's trace, saying which provider answered, how long it took, and whether the call was
// aborted because the lease closed (docs/decisions/0025) or failed.
import { inChildSpan } from "@/lib/tracing";
import type { ModelProvider } from "./types";

export function tracedProvider(provider: ModelProvider): ModelProvider {
  return {
    name: provider.name,
    timeLimitMs: provider.timeLimitMs,
    generate: (request) =>
      inChildSpan(
        "model.generate",
        async (span) => {
          try {
            const proposal = await provider.generate(request);
            span.setAttribute("claimcheck.model", proposal.model);
            return proposal;
          } finally {
            // Set on failure and on success alike: a model that ignores the signal answers anyway.
            span.setAttribute("claimcheck.model.aborted", request.signal?.aborted ?? false);
          }
        },
        { "claimcheck.model.provider": provider.name, "claimcheck.purpose": request.purpose },
      ),
  };
}
