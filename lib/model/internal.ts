// Helpers shared by the providers. Not part of the seam: import from "@/lib/model" instead.
import { ModelUnavailableError, type ModelRequest } from "./types";

/**
 * The error every provider rejects with when `request.signal` aborts (the lease's time ran
 * out, or the caller gave up): a ModelUnavailableError, i.e. retriable, carrying the
 * signal's reason as `cause`.
 */
export function abortedError(signal: AbortSignal, provider: string): ModelUnavailableError {
  const reason: unknown = signal.reason;
  const detail = reason instanceof Error ? `: ${reason.name}` : "";
  return new ModelUnavailableError(`${provider} model call aborted${detail}`, { cause: reason });
}

/** Resolves after `ms`, or rejects with `abortedError` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined, provider: string): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortedError(signal, provider));
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal!, provider));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** `cents` as a plain decimal string in major units: 1234567 → "12345.67", -5 → "-0.05". */
export function centsToDecimal(cents: number): string {
  const rounded = Math.round(cents);
  const sign = rounded < 0 ? "-" : "";
  const abs = Math.abs(rounded);
  const major = Math.floor(abs / 100);
  const minor = String(abs % 100).padStart(2, "0");
  return `${sign}${major}.${minor}`;
}

/** A line's amount in cents (quantity may in principle be fractional: round to the cent). */
export function lineAmountCents(line: { quantity: number; unitPriceCents: number }): number {
  return Math.round(line.quantity * line.unitPriceCents);
}

/**
 * The user message of a call: the actor id, the invoice's own data (amounts as decimal strings)
 * and the purpose's context, nothing else. Fields are copied one by one (never spread), so
 * whatever else a caller's object carries cannot reach the model.
 */
export function userMessage(request: Pick<ModelRequest, "actorId" | "invoice" | "context">): string {
  const { invoice } = request;
  return JSON.stringify({
    actor_id: request.actorId,
    invoice: {
      id: invoice.id,
      number: invoice.number,
      counterparty: invoice.counterparty,
      currency: invoice.currency,
      total: centsToDecimal(invoice.totalCents),
      issued_on: invoice.issuedOn,
      due_on: invoice.dueOn,
      lines: invoice.lines.map((line, index) => ({
        line: index + 1,
        description: line.description,
        quantity: line.quantity,
        unit_price: centsToDecimal(line.unitPriceCents),
        amount: centsToDecimal(lineAmountCents(line)),
      })),
    },
    ...(request.context ? { context: request.context } : {}),
  });
}

/**
 * Tokens in a text, counted the way providers' rule of thumb does (about four characters a
 * token, at least one for any text): what the local lane bills, and what an aborted call's
 * prompt is counted at when the model never said.
 */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4));
}
