import "server-only";
// The one way to write a server action (docs/decisions/0030-one-action-wrapper.md): who may
// call it, what its argument must be, and what it answers when the argument is not that. An
// action is callable by id over HTTP with any argument at all, so the argument is parsed
// before anything else, and a bad one gets the action's own refusal, never a crash.
//
//   export const applyAction = action({
//     who: "actor",                              // the actor from the session, never the form
//     input: formOf(z.object({ lease_id: id })),  // a zod schema for the raw argument
//     invalid: (form) => backTo(...),             // what a bad argument gets
//     run: async (input, { actor, db }) => ...,   // one domain call; its refusal code → words
//   });
//
// For "actor", `db` holds the session in every transaction the action runs (sessionHeld): a
// sign-out waits for the action's commit, and a session revoked before it, or run out while it
// waited on a row, writes nothing and sends the browser to sign in, as the routes answer 401.
import { headers } from "next/headers";
import type { z } from "zod";
import { getDb, type Db } from "@/db/client";
import { withRequestId } from "@/lib/log-context";
import { SessionEnded, sessionHeld } from "@/lib/sessions";
import { getActor, requireActor, sendToSignIn, type PageActor } from "./actor";

/**
 * Who may call: "actor" sends anyone else to sign in (requireActor); "anyone" also gets the
 * actor when there is one (sign-out), or null; "public" never reads the session (sign-in).
 */
type Who = "actor" | "anyone" | "public";
type ActorOf<W extends Who> = W extends "actor" ? PageActor : W extends "anyone" ? PageActor | null : null;

type Spec<W extends Who, S extends z.ZodType, R> = {
  who: W;
  /** Parses the raw argument (usually `formOf(...)` from lib/input.ts). */
  input: S;
  /** The answer to an argument the schema refused; `raw` is the argument as it came. */
  invalid: (raw: unknown, context: { actor: ActorOf<W> }) => R | Promise<R>;
  /** `db`: the database, through the actor's session for "actor" (see above). */
  run: (input: z.output<S>, context: { actor: ActorOf<W>; raw: unknown; db: Db }) => Promise<R>;
};

async function actorFor(who: Who): Promise<PageActor | null> {
  if (who === "actor") return requireActor();
  if (who === "anyone") return getActor();
  return null;
}

/** A server action taking one argument: a form's action (`<form action={...}>`), or none (a query such as signOutCheck). */
export function action<W extends Who, S extends z.ZodType, R>(spec: Spec<W, S, R>): (raw?: FormData) => Promise<R> {
  return async (raw: unknown) => withRequestId((await headers()).get("x-request-id"), () => answer(spec, raw));
}

async function answer<W extends Who, S extends z.ZodType, R>(spec: Spec<W, S, R>, raw: unknown): Promise<R> {
  // The session first: someone signed out is sent to sign in whatever they posted.
  const actor = (await actorFor(spec.who)) as ActorOf<W>;
  const parsed = spec.input.safeParse(raw);
  if (!parsed.success) return spec.invalid(raw, { actor });
  const db = await getDb();
  if (spec.who !== "actor" || !actor) return spec.run(parsed.data, { actor, raw, db });
  const held = sessionHeld(db, { actorId: actor.id, sessionId: actor.sessionId });
  try {
    return await spec.run(parsed.data, { actor, raw, db: held });
  } catch (error) {
    if (error instanceof SessionEnded) return sendToSignIn();
    throw error;
  }
}

/** The same, for `useActionState`: the previous state comes first, and is not used. */
export function stateAction<W extends Who, S extends z.ZodType, R>(spec: Spec<W, S, R>): (previous: R, raw: FormData) => Promise<R> {
  const run = action(spec);
  return async (_previous, raw) => run(raw);
}

/** A form's text field as it came (trimmed), whatever the argument was: for a refusal that must say where to go back to. */
export function rawField(raw: unknown, name: string): string | undefined {
  if (!(raw instanceof FormData)) return undefined;
  const value = raw.get(name);
  return typeof value === "string" ? value.trim() : undefined;
}
