// Building blocks for input schemas, shared by routes and server actions: each one refuses,
// as a validation error (422, nothing written), an input that the database would otherwise
// refuse with an error of its own (a 500) or store altered.
import { z } from "zod";

// A UTF-16 surrogate half without its partner. (String.prototype.isWellFormed is ES2024.)
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Text PostgreSQL stores exactly as given: no NUL (a `text` column refuses it outright) and
 * no lone surrogate (it cannot be encoded as UTF-8 and would be stored as U+FFFD).
 */
export function isStorableText(value: string): boolean {
  return !value.includes("\u0000") && !LONE_SURROGATE.test(value);
}

/** A string that is storable text; chain .trim(), .min(), .max() as usual. */
export function text() {
  return z.string().refine(isStorableText, { message: "must not contain NUL or unpaired surrogate characters" });
}

/**
 * Dates a finance user may give an invoice. Outside this range PostgreSQL refuses some
 * (year 0000) and the rest are typing mistakes; z.iso.date() already insists on a real
 * calendar day written YYYY-MM-DD.
 */
export const MIN_DATE = "1900-01-01";
export const MAX_DATE = "2199-12-31";
export const isoDate = z.iso
  .date()
  .refine((value) => value >= MIN_DATE && value <= MAX_DATE, { message: `must be between ${MIN_DATE} and ${MAX_DATE}` });

/** The range of a PostgreSQL `integer` column: a larger number would be a 500, not a 422. */
export const INT4_MAX = 2_147_483_647;
export const positiveInt4 = z.number().int().positive().max(INT4_MAX);

/**
 * A server action's FormData argument, read into a plain object and validated by `schema`.
 * Actions are callable by id over HTTP with any arguments, so "not a FormData" is a refusal
 * like any other invalid form, never a crash.
 */
export function formOf<S extends z.ZodType>(schema: S) {
  // Anything but a FormData becomes null, which no object schema accepts.
  return z.preprocess((value) => (value instanceof FormData ? Object.fromEntries(value) : null), schema);
}
