const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A malformed id is answered like a missing one, so it must never reach a uuid column. */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}
