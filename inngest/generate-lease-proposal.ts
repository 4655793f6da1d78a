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
import {
  failGeneration,
  loadForGeneration,
  proposeLease,
  recordUsage,
  releaseReservation,
  type GenerationFailureCode,
  type GenerationInput,
} from "@/lib/leases";
import { log } from "@/lib/log";
import {
  estimateTokens,
  getModelProvider,
  modelPricing,
  ModelOutputError,
  ModelSchemaError,
  ModelUnavailableError,
  userMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelUsage,
  usageOfError,
} from "@/lib/model";
import { purposeOf } from "@/lib/purposes";
import { callCostCents, callKey, type CallUsage } from "@/lib/spend";
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
  const usage = usageInMessage(error.message ?? "");
  const result = await failGeneration(db, { leaseId, runNonce, code, ...(usage ? { usage } : {}) });
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
      if (!input.ok) {
        // No call of this lease will run (it closed before this attempt could call): its reservation goes.
        if (input.reason !== "invoice_not_found") await releaseReservation(db, leaseId);
        return stopped(leaseId, input);
      }
      const model = modelProvider();
      // Aborts the model call (and drops its HTTP request) as soon as the lease closes or
      // its deadline passes: docs/decisions/0025-a-close-aborts-the-model-call.md.
      const closed = await watchLeaseClose(leaseId, input.lease.remainingMs);
      const request: ModelRequest = {
        purpose: input.lease.purpose,
        actorId: input.lease.actorId,
        invoice: input.invoice,
        context: input.context,
        signal: closed.signal,
      };
      // This call's usage when it did not answer: what the lane counted (a refused answer's
      // reported tokens, an aborted prompt's estimate), else the prompt counted here, no answer.
      let failure: unknown;
      const unanswered = () => {
        const counted = usageOfError(failure);
        return counted ? priced(leaseId, attempt, modelPricing().model, counted) : promptOnly(leaseId, attempt, request);
      };
      let proposal;
      try {
        proposal = await model.generate(request);
      } catch (error) {
        failure = error;
        if (closed.signal.aborted) {
          // The lease closed or ran out while the model worked: no retry can help. The call is
          // counted all the same, on a statement of its own (no transition ends it here). Read
          // what the lease became (recording `expired` if due) and end the run; a close is the
          // user's or the deadline's doing, not a failed generation.
          await recordUsage(db, leaseId, unanswered(), "aborted");
          const after = await loadForGeneration(db, leaseId);
          if (!after.ok) return stopped(leaseId, after);
        }
        if (error instanceof ModelOutputError) {
          throw new NonRetriableError(withUsage(`${error.name}: ${error.message}`, unanswered()), { cause: error });
        }
        if (error instanceof ModelUnavailableError) {
          // Retried only if the retry could still finish in the lease's time, read again on the
          // database clock; else the lease closes now as model_unavailable, not later as expired
          // (docs/decisions/0050-no-retry-that-cannot-finish-in-time.md).
          const now = await loadForGeneration(db, leaseId);
          if (!now.ok) {
            await recordUsage(db, leaseId, unanswered(), "failed");
            return stopped(leaseId, now);
          }
          if (!retryCouldFinish(attempt, now.lease.remainingMs, model.timeLimitMs)) {
            const why = `no retry could finish in the lease's ${now.lease.remainingMs} ms left`;
            throw new NonRetriableError(withUsage(`${error.name}: ${error.message} (${why})`, unanswered()), { cause: error });
          }
        }
        // Retried: this attempt's call is counted now, on its own statement, and drawn from the lease's
        // reservation, which stays to cover the next attempt (another call) until the generation's final
        // outcome; past the last retry the failure handler (failGeneration) releases what is left.
        await recordUsage(db, leaseId, unanswered(), "failed", false);
        throw error; // ModelUnavailableError with time left, and anything unexpected: retried with backoff
      } finally {
        closed.release();
      }

      // The purpose's schema decides what may be proposed: anything else is `invalid_output`,
      // never written (and not retried: the same model would answer the same way).
      const purpose = purposeOf(input.lease.purpose);
      const usage = priced(leaseId, attempt, proposal.model, proposal.usage);
      const output = purpose.output.safeParse(proposal.output);
      if (!output.success) {
        // An answer that came after the lease closed is the close's business, not a failure.
        if (closed.signal.aborted) {
          const after = await loadForGeneration(db, leaseId);
          if (!after.ok) {
            await recordUsage(db, leaseId, usage, "late");
            return stopped(leaseId, after);
          }
        }
        const problems = output.error.issues.map((issue) => `${issue.path.join(".") || "output"}: ${issue.message}`).slice(0, 5);
        const message = `ModelSchemaError: ${input.lease.purpose} output rejected: ${problems.join("; ")}`;
        throw new NonRetriableError(withUsage(message, usage), { cause: new ModelSchemaError(problems.join("; ")) });
      }
      const completion: Completion = {
        usage,
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

type Completion = { actorId: string; output: Record<string, unknown>; model: string; detail: Record<string, unknown>; usage: CallUsage };
type Generated = ({ ok: true } & Completion) | { ok: false; outcome: GenerationOutcome };

/** Check 2's write, the lease core's conditional update: the run's outcome. */
async function propose(leaseId: string, runNonce: string, completion: Completion): Promise<GenerationOutcome> {
  const proposed = await proposeLease(await getDb(), {
    leaseId,
    actorId: completion.actorId,
    runNonce,
    proposal: { ...completion.output, model: completion.model },
    detail: completion.detail,
    usage: completion.usage,
  });
  if (proposed.ok) return { leaseId, outcome: "proposed" };
  return { leaseId, outcome: "stopped", reason: proposed.code, status: proposed.status ?? null };
}

/** A call's usage as the model reported it (or the local lane counted it), priced, keyed by the lease and attempt. */
function priced(leaseId: string, attempt: number, model: string, usage: ModelUsage): CallUsage {
  const tokens = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  return { callKey: callKey(leaseId, attempt), model, ...tokens, estimated: usage.estimated, costCents: callCostCents(model, tokens) };
}

/** The usage of a call the model never answered (aborted, failed): its prompt counted by us, no output. */
function promptOnly(leaseId: string, attempt: number, request: ModelRequest): CallUsage {
  const inputTokens = estimateTokens(purposeOf(request.purpose).instructions) + estimateTokens(userMessage(request));
  return priced(leaseId, attempt, modelPricing().model, { inputTokens, outputTokens: 0, estimated: true });
}

/**
 * The failure handler gets the error only as its name and message (serialized by the SDK), so the
 * usage of the call that failed rides at the end of the message, for failGeneration to record in
 * the transaction that closes the lease. Never shown to the actor: the event gets the code only.
 */
const USAGE_MARK = " [usage:";
function withUsage(message: string, usage: CallUsage): string {
  return `${message}${USAGE_MARK}${JSON.stringify(usage)}]`;
}

const UsageInMessage = z.object({
  callKey: z.string().max(200),
  model: z.string().max(200),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  estimated: z.boolean(),
  costCents: z.number().nonnegative(),
});
export function usageInMessage(message: string): CallUsage | null {
  const at = message.lastIndexOf(USAGE_MARK);
  if (at < 0 || !message.endsWith("]")) return null;
  try {
    const parsed = UsageInMessage.safeParse(JSON.parse(message.slice(at + USAGE_MARK.length, -1)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
