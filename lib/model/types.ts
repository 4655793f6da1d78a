// The one seam between Claimcheck and a language model: purpose + invoice data + actor id
// in, a proposal out. Nothing else crosses it: no cookie, no session, no secret.

import type { Purpose } from "@/lib/purposes";

export type { Purpose };

export type InvoiceForModel = {
  id: string;
  number: string;
  counterparty: string;
  currency: string; // ISO 4217, e.g. "EUR"
  totalCents: number;
  issuedOn: string; // YYYY-MM-DD
  dueOn: string; // YYYY-MM-DD
  /** `id` is the line's, for a purpose that proposes per line (categorize_lines); absent in older callers. */
  lines: { id?: string; description: string; quantity: number; unitPriceCents: number }[];
};

export type ModelRequest = {
  purpose: Purpose;
  actorId: string;
  invoice: InvoiceForModel;
  /**
   * What else the purpose reads, as plain data (lib/purposes: the organization's history for a
   * review, the chart of accounts for categories). Read as the lease's actor, like the invoice.
   */
  context?: Record<string, unknown>;
  /** Aborts the call when the lease's remaining time runs out. */
  signal?: AbortSignal;
};

/** The tokens a call used: as the model reported them, or counted by us (`estimated`). */
export type ModelUsage = { inputTokens: number; outputTokens: number; estimated: boolean };

export type Proposal = {
  /** The purpose's output, not yet validated: the generation checks it against the purpose's schema. */
  output: unknown;
  /** The actor the completion says it was made for; propose refuses a mismatch. */
  actorId: string;
  model: string;
  usage: ModelUsage;
};

export interface ModelProvider {
  readonly name: string;
  /** The longest one call can take: what a retry must still have time for (docs/decisions/0050). */
  readonly timeLimitMs: number;
  generate(request: ModelRequest): Promise<Proposal>;
}

/** The model answered, but with something we refuse to use: retrying will not help. */
export class ModelOutputError extends Error {
  override name = "ModelOutputError";
}

/** The model answered with an output that does not match the purpose's schema: `invalid_output`. */
export class ModelSchemaError extends ModelOutputError {
  override name = "ModelSchemaError";
}

/** The model could not be reached or failed transiently (timeout, 5xx): worth a retry. */
export class ModelUnavailableError extends Error {
  override name = "ModelUnavailableError";
}

export const SUMMARY_MAX_CHARS = 1200;

/**
 * The provider refused the request itself (HTTP 400/401/403/404/422…): a wrong key, model
 * name or base URL. Retrying will not fix it, so it is a ModelOutputError (non-retriable);
 * callers that want to tell "misconfigured" from "bad answer" can check this subclass.
 */
export class ModelConfigError extends ModelOutputError {
  override name = "ModelConfigError";
  constructor(
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
