const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A malformed id is answered like a missing one, so it must never reach a uuid column. */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/**
 * An id as the database spells it (lower case), or null if it is no id. PostgreSQL reads a uuid
 * in any case, so `…/ABC…` and `…/abc…` find the same row; every id the app compares, keys a map
 * by, or signs (a cursor, a trace) goes through this first, so the same id spelled in upper case
 * is the same everywhere, never "someone else" or "not one of these".
 */
export function canonicalId(value: unknown): string | null {
  return isUuid(value) ? value.toLowerCase() : null;
}

/** A key that may be an id (a planned change's key: a line id): an id in the database's spelling, any other key as it is. */
export const canonicalKey = (key: string): string => canonicalId(key) ?? key;
