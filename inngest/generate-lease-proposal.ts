import "server-only";
// Check 2 of the lease contract, as an Inngest function: generate (one read, then the model
// call) → propose (the lease core's conditional update, `proposeLease`). No transaction is
// open across the model call. What the model sees is the
// purpose, the invoice (read as the lease's actor) and the actor id: no cookie, no secret.
// The lease's run nonce comes in the event and goes back to propose and fail as it came: it
// proves the call is the run this lease dispatched (docs/decisions/0008-run-nonce.md).
import { NonRetriableError } from "inngest";
import { z } from "zod";
import { getDb, type Db } from "@/db/client";
import { failGeneration, loadForGeneration, proposeLease, type GenerationFailureCode, type GenerationInput } from "@/lib/leases";
import { log } from "@/lib/log";
import { getModelProvider, ModelOutputError, ModelSchemaError, ModelUnavailableError, type ModelProvider } from "@/lib/model";
import { purposeOf } from "@/lib/purposes";
import { inngest } from "./client";
import { decryptEventData } from "./encryption";
import { leaseClosed, leaseOpened } from "./events";
import { watchLeaseClose } from "./lease-close-signal";
import { retryCouldFinish } from "./retry-schedule";

/** Retries after the first attempt; the model errors worth retrying are ModelUnavailableError. */
export const GENERATION_RETRIES = 3;

export type GenerationOutcome =
  { leaseId: string; outcome: "proposed" } | { leaseId: string; outcome: "stopped"; reason: string; status: string | null };

/**
 * The failed run's lease and nonce, from its lease/opened data. The SDK does not validate the
 * event a failure handler receives, and a run can fail because its event was malformed: the
 * lease id is read on its own, and the nonce only from data that passes lease/opened's schema.
 * The app never sends any other, so a misshapen event is not the lease's run whatever nonce it
 * carries: its nonce reads as "", which matches no lease (the lease gets run_mismatch).
 */
const FailedLease = z.object({ leaseId: z.string().catch("") }).catch({ leaseId: "" });
const failedLease = (eventData: unknown) => {
  const opened = leaseOpened.schema.safeParse(eventData);
  return opened.success ? opened.data : { leaseId: FailedLease.parse(eventData).leaseId, runNonce: "" };
};

/**
 * The code the actor sees for a failed run. The error arrives serialized (name and message),
 * so it is recognised by the names our own throws give it; anything else is internal.
 */
export function failureCode(error: { name?: string; message?: string }): GenerationFailureCode {
  const name = error.name ?? "";
  const message = error.message ?? "";
  const is = (kind: string) => name === kind || message.startsWith(`${kind}:`);
  if (message.startsWith("invoice_not_found:")) return "invoice_not_found";
  if (is("ModelConfigError")) return "model_not_configured";
  if (is("ModelSchemaError")) return "invalid_output";
  if (is("ModelOutputError")) return "model_output_invalid";
  if (is("ModelUnavailableError")) return "model_unavailable";
  return "internal_error";
}

/**
 * A lease that cannot be generated for. An open lease whose invoice the actor no longer
 * owns fails the run, so onFailure closes it now; any other reason simply ends the run.
 */
function stopped(leaseId: string, input: Extract<GenerationInput, { ok: false }>): Generated {
  if (input.reason === "invoice_not_found") {
    throw new NonRetriableError(`invoice_not_found: the lease's invoice is not readable as its actor`);
  }
  log.info("generation stopped", { lease_id: leaseId, step: "generate", reason: input.reason, status: input.status ?? null });
  return { ok: false, outcome: { leaseId, outcome: "stopped", reason: input.reason, status: input.status ?? null } };
}

function modelProvider(): ModelProvider {
  try {
    return getModelProvider();
  } catch (error) {
    // Misconfiguration: every retry would fail the same way, so fail now and close the lease.
    const message = error instanceof Error ? error.message : String(error);
    throw new NonRetriableError(`ModelConfigError: ${message}`, { cause: error });
  }
}

/**
 * The failure handler's work, run once the run's retries are spent or it threw a
 * NonRetriableError: close the lease now, so the user learns at once instead of watching it
 * run down to its deadline. Records `expired` instead when the lease is already past its
 * deadline. The event gets the code and plain words; the error itself (it may hold SQL text)
 * the log only. `eventData` is the failed run's lease/opened data, as it came.
 */
export async function recordGenerationFailure(
  db: Db,
  eventData: unknown,
  error: { name?: string; message?: string },
): Promise<Awaited<ReturnType<typeof failGeneration>>> {
  // The failed event as the Inngest server keeps it: its run nonce encrypted (inngest/encryption.ts).
  const { leaseId, runNonce } = failedLease(await decryptEventData(eventData));
  const code = failureCode(error);
  const result = await failGeneration(db, { leaseId, runNonce, code });
  log.warn("generation failed", {
    lease_id: leaseId,
    code,
    error: `${error.name}: ${error.message}`,
    closed: result.closed,
    ...(result.refused ? { refused: result.refused } : {}),
  });
  return result;
}

export const generateLeaseProposal = inngest.createFunction(
  {
    id: "generate-lease-proposal",
    name: "Generate a lease's proposal",
    triggers: [leaseOpened],
    // Sent by cancel and sign-out once the lease is closed: stop at the next step boundary.
    cancelOn: [{ event: leaseClosed.name, if: "event.data.leaseId == async.data.leaseId" }],
    retries: GENERATION_RETRIES,
    // Retries exhausted or a NonRetriableError: close the lease now, so the user learns at
    // once instead of watching it run down to its deadline.
    onFailure: async ({ event, error, step }) =>
      step.run("record-failure", async () => recordGenerationFailure(await getDb(), event.data.event?.data, error)),
  },
  async ({ event, step, attempt }): Promise<GenerationOutcome> => {
    const { leaseId, runNonce } = event.data;

    const generated = await step.run("generate", async (): Promise<Generated> => {
      const db = await getDb();
      // One read, on the database clock, when the step runs (a retry may come long after the
      // event): stop (recording `expired` if due) unless the lease is open and in time. The
      // read's statement ends before the model is called; nothing is held across the call.
      const input = await loadForGeneration(db, leaseId);
      if (!input.ok) return stopped(leaseId, input);
      const model = modelProvider();
      // Aborts the model call (and drops its HTTP request) as soon as the lease closes or
      // its deadline passes: docs/decisions/0025-a-close-aborts-the-model-call.md.
      const closed = await watchLeaseClose(leaseId, input.lease.remainingMs);
      let proposal;
      try {
        proposal = await model.generate({
          purpose: input.lease.purpose,
          actorId: input.lease.actorId,
          invoice: input.invoice,
          context: input.context,
          signal: closed.signal,
        });
      } catch (error) {
        if (closed.signal.aborted) {
          // The lease closed or ran out while the model worked: no retry can help. Read what
          // it became (recording `expired` if due) and end the run; a close is the user's or
          // the deadline's doing, not a failed generation.
          const after = await loadForGeneration(db, leaseId);
          if (!after.ok) return stopped(leaseId, after);
        }
        if (error instanceof ModelOutputError) {
          throw new NonRetriableError(`${error.name}: ${error.message}`, { cause: error });
        }
        if (error instanceof ModelUnavailableError) {
          // Retried only if the retry could still finish in the lease's time, read again on the
          // database clock; else the lease closes now as model_unavailable, not later as expired
          // (docs/decisions/0050-no-retry-that-cannot-finish-in-time.md).
          const now = await loadForGeneration(db, leaseId);
          if (!now.ok) return stopped(leaseId, now);
          if (!retryCouldFinish(attempt, now.lease.remainingMs, model.timeLimitMs)) {
            const why = `no retry could finish in the lease's ${now.lease.remainingMs} ms left`;
            throw new NonRetriableError(`${error.name}: ${error.message} (${why})`, { cause: error });
          }
        }
        throw error; // ModelUnavailableError with time left, and anything unexpected: retried with backoff
      } finally {
        closed.release();
      }

      // The purpose's schema decides what may be proposed: anything else is `invalid_output`,
      // never written (and not retried: the same model would answer the same way).
      const purpose = purposeOf(input.lease.purpose);
      const output = purpose.output.safeParse(proposal.output);
      if (!output.success) {
        // An answer that came after the lease closed is the close's business, not a failure.
        if (closed.signal.aborted) {
          const after = await loadForGeneration(db, leaseId);
          if (!after.ok) return stopped(leaseId, after);
        }
        const problems = output.error.issues.map((issue) => `${issue.path.join(".") || "output"}: ${issue.message}`).slice(0, 5);
        throw new NonRetriableError(`ModelSchemaError: ${input.lease.purpose} output rejected: ${problems.join("; ")}`, {
          cause: new ModelSchemaError(problems.join("; ")),
        });
      }
      const completion: Completion = {
        // The actor the completion names, not the one we asked for: propose compares them.
        actorId: proposal.actorId,
        output: output.data as Record<string, unknown>,
        model: proposal.model,
        detail: { prompt_version: purpose.promptVersion, ...purpose.describe(output.data) },
      };
      // The lease closed while a model that ignores its signal ran (cancel, sign-out, deadline,
      // an edit): the executor may already have dropped this run and would never call the
      // propose step, so propose here. Its conditional update cannot match a closed lease: it
      // records the late completion (and `expired`, if due) and writes nothing else. No re-read
      // is needed to know this: the signal is the lease's own events and the database's deadline
      // (docs/decisions/0041-one-read-per-generation-and-frames-from-notify.md).
      if (closed.signal.aborted) return { ok: false, outcome: await propose(leaseId, runNonce, completion) };
      return { ok: true as const, ...completion };
    });
    if (!generated.ok) return generated.outcome;

    return step.run("propose", async () => propose(leaseId, runNonce, generated));
  },
);

type Completion = { actorId: string; output: Record<string, unknown>; model: string; detail: Record<string, unknown> };
type Generated = ({ ok: true } & Completion) | { ok: false; outcome: GenerationOutcome };

/** Check 2's write, the lease core's conditional update: the run's outcome. */
async function propose(leaseId: string, runNonce: string, completion: Completion): Promise<GenerationOutcome> {
  const proposed = await proposeLease(await getDb(), {
    leaseId,
    actorId: completion.actorId,
    runNonce,
    proposal: { ...completion.output, model: completion.model },
    detail: completion.detail,
  });
  if (proposed.ok) return { leaseId, outcome: "proposed" };
  return { leaseId, outcome: "stopped", reason: proposed.code, status: proposed.status ?? null };
}
