// Helpers shared by the providers. Not part of the seam: import from "@/lib/model" instead.
import { ModelUnavailableError } from "./types";

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
