// The "openai-compatible" provider: any server speaking the OpenAI chat-completions API
// (OpenAI, vLLM, llama.cpp, Ollama, LiteLLM…), for every purpose of the registry (lib/purposes).
// It asks for structured output with the purpose's schema (response_format json_schema, strict),
// the purpose's instructions as the system prompt and userMessage (lib/model/internal.ts) as the
// user message: only the invoice data, the purpose's context and the actor id are sent. The
// answer is validated with the purpose's own schema before anything else sees it.
//
// Error mapping (what the caller — the lease's propose step / Inngest — should do):
//   ModelUnavailableError (retriable): connection failure, timeout (ours or the caller's
//     `request.signal`), HTTP 408/409/429/5xx, a body cut off mid-transfer.
//   ModelConfigError (a ModelOutputError, non-retriable): any other HTTP 4xx — 400, 401,
//     403, 404, 422 … a wrong key, model name or base URL that retrying will not fix.
//   ModelSchemaError (a ModelOutputError, non-retriable, `invalid_output`): content that is JSON
//     but not the purpose's form — a field missing or of the wrong type, a code outside its enum,
//     a summary too long, no string actor_id, a line number that names no line.
//   ModelOutputError (non-retriable): HTTP 200 whose body is not a chat completion (HTML,
//     broken JSON), a refusal, no content, content that is not JSON.
// The returned `actorId` is the one the completion names, never the requested one: the
// caller compares them and fails closed on a mismatch.
//
// Spend: an error thrown once the prompt may have reached the model carries the call's tokens as
// `usage` (usageOfError): the completion's for an answer refused, the prompt's estimate
// (promptUsage) for a call aborted or timed out while the model worked. An error with none sent
// nothing that could be billed (an already-aborted signal, a refused connection, an HTTP error).
import OpenAI from "openai";
import { z } from "zod";
import { purposeOf, type Wire } from "@/lib/purposes";
import { abortedError, estimateTokens, userMessage } from "./internal";
import {
  ModelConfigError,
  ModelOutputError,
  ModelSchemaError,
  ModelUnavailableError,
  type ModelProvider,
  type ModelRequest,
  type ModelUsage,
  type Proposal,
  type Purpose,
} from "./types";

export const DEFAULT_TIMEOUT_MS = 30_000;

export type OpenAICompatibleOptions = {
  /** e.g. "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1" */
  baseURL: string;
  apiKey: string;
  model: string;
  /** Whole-call deadline (connect, headers and body), default 30 s. */
  timeoutMs?: number;
  /** For tests or proxies; defaults to the global fetch. */
  fetch?: typeof fetch;
};

const PROVIDER = "openai-compatible";

const CompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
        }),
      }),
    )
    .min(1),
});

/**
 * What the model is asked to answer for a purpose, and how its answer becomes the purpose's
 * output: the purpose's own `wire` hook when it has one (categorize_lines answers line numbers,
 * which its hook maps to the lines' ids), else its output schema, answered as it is.
 */
function wireOf(request: ModelRequest): Wire {
  const purpose = purposeOf(request.purpose);
  return purpose.wire ? purpose.wire(request) : { answer: purpose.output, toOutput: (answer) => answer };
}

const ActorSchema = z.looseObject({ actor_id: z.string().min(1, "actor_id is empty") });

/**
 * The answer's JSON Schema for response_format: the wire answer plus `actor_id`, in OpenAI's
 * strict subset. String lengths are not in that subset (a strict request naming them is refused)
 * nor is zod's safe-integer bound needed: the purpose's schema checks them after the answer.
 */
function responseSchema(answer: z.ZodType): Record<string, unknown> {
  const json = strictSubset(z.toJSONSchema(answer)) as { type?: unknown; properties?: Record<string, unknown>; required?: string[] };
  if (json.type !== "object" || !json.properties) throw new TypeError("a purpose's output must be a JSON object");
  return {
    ...json,
    properties: { ...json.properties, actor_id: { type: "string" } },
    required: [...(json.required ?? []), "actor_id"],
  };
}

function strictSubset(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictSubset);
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema" || key === "minLength" || key === "maxLength") continue;
    if ((key === "maximum" || key === "minimum") && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    out[key] = strictSubset(value);
  }
  return out;
}

// A purpose without a wire hook answers its output, whatever the request: its schema is built once.
const fixedSchemas = new Map<Purpose, Record<string, unknown>>();
function responseSchemaFor(request: ModelRequest, wire: Wire): Record<string, unknown> {
  if (purposeOf(request.purpose).wire) return responseSchema(wire.answer);
  let schema = fixedSchemas.get(request.purpose);
  if (!schema) fixedSchemas.set(request.purpose, (schema = responseSchema(wire.answer)));
  return schema;
}

/**
 * The tokens of a call's prompt, estimated (the purpose's instructions and the user message,
 * counted as the local lane counts them), no output: what an aborted call is recorded at, for a
 * caller that knows only the request.
 */
export function promptUsage(request: ModelRequest): ModelUsage {
  const instructions = purposeOf(request.purpose).instructions;
  return { inputTokens: estimateTokens(instructions) + estimateTokens(userMessage(request)), outputTokens: 0, estimated: true };
}

/** The tokens a failed call is counted at, when it may have cost any (see the header). */
export function usageOfError(error: unknown): ModelUsage | undefined {
  if (!(error instanceof Error) || !("usage" in error)) return undefined;
  return error.usage as ModelUsage;
}

function withUsage<E extends Error>(error: E, usage: ModelUsage): E & { usage: ModelUsage } {
  return Object.assign(error, { usage });
}

export function createOpenAICompatibleProvider(opts: OpenAICompatibleOptions): ModelProvider {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(`timeoutMs must be a finite number > 0, got ${String(timeoutMs)}`);
  }
  if (!opts.apiKey) throw new Error("openai-compatible provider: apiKey is required");
  if (!opts.model) throw new Error("openai-compatible provider: model is required");

  const client = new OpenAI({
    baseURL: opts.baseURL,
    apiKey: opts.apiKey,
    // Explicit nulls so the SDK does not pick up OPENAI_ORG_ID / OPENAI_PROJECT_ID / … from env.
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    maxRetries: 0, // retries are Inngest's job
    timeout: timeoutMs,
    // Keep request bodies out of the logs even if OPENAI_LOG=debug is set.
    logLevel: "warn",
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });

  return {
    name: PROVIDER,
    timeLimitMs: timeoutMs,
    async generate(request: ModelRequest): Promise<Proposal> {
      if (request.signal?.aborted) throw abortedError(request.signal, PROVIDER);

      // The SDK's own timeout only covers the wait for headers; this deadline covers the
      // whole call, body included, and is merged with the caller's signal.
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;

      const purpose = purposeOf(request.purpose);
      if (!purpose) throw new ModelSchemaError(`${PROVIDER} model: no purpose ${String(request.purpose)}`);
      const wire = wireOf(request);
      const call = client.chat.completions.create(
        {
          model: opts.model,
          messages: [
            { role: "system", content: purpose.instructions },
            { role: "user", content: userMessage(request) },
          ],
          response_format: {
            type: "json_schema",
            json_schema: { name: request.purpose, strict: true, schema: responseSchemaFor(request, wire) },
          },
        },
        { signal, maxRetries: 0, timeout: timeoutMs },
      );

      let completion: unknown;
      try {
        completion = await raceAbort(call, signal);
      } catch (error) {
        const failed = classifyCallError(error, signal, deadline, request.signal, timeoutMs);
        // Aborted or timed out while the model worked: its prompt may be billed.
        const interrupted =
          request.signal?.aborted || deadline.aborted || signal.aborted || error instanceof OpenAI.APIConnectionTimeoutError;
        throw interrupted ? withUsage(failed, promptUsage(request)) : failed;
      }
      return parseCompletion(completion, request, wire, opts.model);
    },
  };
}

/** Rejects as soon as `signal` aborts even if the SDK were still reading a body. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function classifyCallError(
  error: unknown,
  signal: AbortSignal,
  deadline: AbortSignal,
  callerSignal: AbortSignal | undefined,
  timeoutMs: number,
): Error {
  if (callerSignal?.aborted) return abortedError(callerSignal, PROVIDER);
  if (deadline.aborted || error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelUnavailableError(`${PROVIDER} model did not answer within ${timeoutMs} ms`, { cause: error });
  }
  if (signal.aborted || error instanceof OpenAI.APIUserAbortError) {
    return new ModelUnavailableError(`${PROVIDER} model call aborted`, { cause: error });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new ModelUnavailableError(`${PROVIDER} model unreachable: ${error.message}`, { cause: error });
  }
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    if (status === undefined) {
      return new ModelUnavailableError(`${PROVIDER} model call failed: ${error.message}`, { cause: error });
    }
    if (status === 408 || status === 409 || status === 429 || status >= 500) {
      return new ModelUnavailableError(`${PROVIDER} model answered HTTP ${status} (transient)`, { cause: error });
    }
    return new ModelConfigError(
      `${PROVIDER} model refused the request with HTTP ${status}: check MODEL_BASE_URL, MODEL_NAME and MODEL_API_KEY`,
      status,
      { cause: error },
    );
  }
  if (error instanceof SyntaxError) {
    // HTTP 200 with a JSON content type but a body that is not JSON.
    return new ModelOutputError(`${PROVIDER} model answered with a body that is not JSON`, { cause: error });
  }
  // Anything else (e.g. "terminated" when the connection drops mid-body) is transport.
  const message = error instanceof Error ? error.message : String(error);
  return new ModelUnavailableError(`${PROVIDER} model call failed: ${message}`, { cause: error });
}

function parseCompletion(completion: unknown, request: ModelRequest, wire: Wire, model: string): Proposal {
  const shape = CompletionSchema.safeParse(completion);
  if (!shape.success) {
    throw new ModelOutputError(`${PROVIDER} model answered with something that is not a chat completion`);
  }
  const choice = shape.data.choices[0]!;
  const content = choice.message.content ?? "";
  const usage = usageOf(completion, request, content);
  // From here on the model answered: whatever is refused, the call cost what it reports.
  const refuse = (error: ModelOutputError) => withUsage(error, usage);
  if (choice.message.refusal) {
    throw refuse(new ModelOutputError(`${PROVIDER} model refused: ${choice.message.refusal.slice(0, 200)}`));
  }
  if (!content) {
    throw refuse(new ModelOutputError(`${PROVIDER} model answered with no content (finish_reason ${choice.finish_reason ?? "none"})`));
  }

  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (error) {
    const hint = choice.finish_reason === "length" ? " (cut off: finish_reason length)" : "";
    throw refuse(new ModelOutputError(`${PROVIDER} model content is not JSON${hint}`, { cause: error }));
  }

  const schemaError = (issues: readonly z.core.$ZodIssue[]) => {
    const problems = issues.slice(0, 5).map((issue) => `${issue.path.join(".") || "answer"}: ${issue.message}`);
    return refuse(new ModelSchemaError(`${PROVIDER} ${request.purpose} answer rejected: ${problems.join("; ")}`));
  };
  const actor = ActorSchema.safeParse(json);
  if (!actor.success) throw schemaError(actor.error.issues);
  const { actor_id: actorId, ...rest } = actor.data;
  const answer = wire.answer.safeParse(rest);
  if (!answer.success) throw schemaError(answer.error.issues);
  let mapped: unknown;
  try {
    mapped = wire.toOutput(answer.data, request);
  } catch (error) {
    throw error instanceof ModelSchemaError ? refuse(error) : error;
  }
  // The purpose's own schema has the last word here as in the generate step (which checks again).
  const output = purposeOf(request.purpose).output.safeParse(mapped);
  if (!output.success) throw schemaError(output.error.issues);
  return { output: output.data, actorId, model, usage };
}

/** The tokens the completion reports, or (a server that reports none) the prompt and the answer counted. */
function usageOf(completion: unknown, request: ModelRequest, content: string): ModelUsage {
  const usage = z
    .object({ usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }) })
    .safeParse(completion);
  if (usage.success)
    return { inputTokens: usage.data.usage.prompt_tokens, outputTokens: usage.data.usage.completion_tokens, estimated: false };
  return { ...promptUsage(request), outputTokens: estimateTokens(content) };
}
