// What an event is once the server has it: the shape functions receive, and which
// trigger names match it.
import type { EventPayload } from "./types";

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === "object" && !Array.isArray(v);

/**
 * An event as the server stores and sends it: `data` and `user` always objects, an `id`
 * (the sender's, else the internal one), `ts`, and the sessions of `meta` settled: the
 * layer the SDK stamps (`meta.propagated_sessions`) is folded into `meta.sessions`, where
 * the sender's own sessions win, a `null` session cuts the inherited one, and a `null`
 * `sessions` cuts them all.
 */
export function toEvent(given: Record<string, unknown>, internalId: string): EventPayload {
  const event: EventPayload = {
    ...given,
    name: String(given.name),
    data: isObject(given.data) ? given.data : {},
    user: isObject(given.user) ? given.user : {},
    id: typeof given.id === "string" && given.id ? given.id : internalId,
    ts: Number(given.ts) || Date.now(),
  };
  if (isObject(given.meta)) {
    const { sessions: manual, propagated_sessions: propagated, ...rest } = given.meta;
    const sessions: Record<string, string> = {};
    if (manual !== null) {
      for (const [k, v] of Object.entries(isObject(propagated) ? propagated : {})) if (v !== null && v !== undefined) sessions[k] = String(v);
      for (const [k, v] of Object.entries(isObject(manual) ? manual : {})) {
        if (v === null) delete sessions[k];
        else sessions[k] = String(v);
      }
    }
    const meta = Object.keys(sessions).length ? { ...rest, sessions } : rest;
    if (Object.keys(meta).length) event.meta = meta;
    else delete event.meta;
  }
  return event;
}

/** A trigger's event name matches itself, or as `prefix/*` every event under the prefix. */
export const eventMatches = (pattern: string, name: string) => pattern === name || (pattern.endsWith("/*") && name.startsWith(pattern.slice(0, -1)));
