// What every log line written inside a unit of work carries: the request's `request_id`
// (server.mjs enters it around each request it hands to Next.js), a lease's `lease_id` (the
// Inngest functions enter it around a run). AsyncLocalStorage, so the fields follow the work
// through every await without being passed down. Held on globalThis under a registered symbol:
// server.mjs (plain JavaScript, outside the bundle) and the bundled app share one store.
import { AsyncLocalStorage } from "node:async_hooks";

type Context = Record<string, string | number | boolean | null>;

const KEY = Symbol.for("claimcheck.log-context");
const holder = globalThis as typeof globalThis & { [KEY]?: AsyncLocalStorage<Context> };
const storage = (holder[KEY] ??= new AsyncLocalStorage<Context>());

/** The fields of the work under way (empty outside any). */
export function logContext(): Context {
  return storage.getStore() ?? {};
}

/** Runs `fn` with `fields` added to every line it logs, on top of the fields already in force. */
export function withLogContext<T>(fields: Context, fn: () => T): T {
  return storage.run({ ...logContext(), ...fields }, fn);
}

/**
 * A client's `X-Request-Id`, if it is one we may repeat in our logs and answers: 1 to 128
 * characters of letters, digits and `-_.:`, no spaces or anything a log reader would parse.
 * Else null, and the server makes its own.
 */
export function saneRequestId(value: string | null | undefined): string | null {
  return typeof value === "string" && /^[A-Za-z0-9._:-]{1,128}$/.test(value) ? value : null;
}
