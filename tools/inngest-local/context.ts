// The settings every part of the stand-in reads, taken from the options once: the mode and
// its keys, how calls to the app are signed, retry and call timing, the log, and the timers
// that close() clears.
import type http from "node:http";
import { retryScaleFrom } from "./backoff";
import { bearerMatches, signBody } from "./signing";
import { createTimers } from "./util";
import type { InngestLocalOptions } from "./types";

export type Context = ReturnType<typeof createContext>;

export function createContext(opts: InngestLocalOptions) {
  const log = opts.log ?? ((line: string) => console.log(`[inngest-local] ${line}`));
  const signingKey = opts.signingKey || undefined;
  const eventKeys = (opts.eventKeys ?? []).filter(Boolean);
  if (Boolean(signingKey) !== eventKeys.length > 0) {
    throw new Error("self-hosted mode needs both a signing key and at least one event key (as `inngest start` does)");
  }
  // `inngest start` takes the bare hex; the SDK's form adds a `signkey-<env>-` prefix. Both work.
  if (signingKey && !/^(?:signkey-\w+-)?(?:[0-9a-f]{2})+$/i.test(signingKey)) {
    throw new Error("the signing key must be hex (an even number of digits), optionally as signkey-<env>-<hex>");
  }
  const { later, clearAll } = createTimers();
  return {
    opts,
    log,
    mode: signingKey ? ("self-hosted" as const) : ("dev" as const),
    signingKey,
    eventKeys,
    /** The factor on the real server's retry schedule (backoff.ts): 1 unless a test shrinks it. */
    retryScale: opts.retryScale ?? retryScaleFrom(process.env.INNGEST_LOCAL_RETRY_SCALE),
    checkpointing: opts.checkpointing ?? process.env.INNGEST_LOCAL_CHECKPOINTING !== "0",
    syncRetryMs: opts.syncRetryMs ?? 1000,
    callTimeoutMs: opts.callTimeoutMs ?? 5 * 60_000,
    /** Headers of a call to the app: signed in self-hosted mode, over exactly this body text. */
    appHeaders: (bodyText: string): Record<string, string> => ({
      "content-type": "application/json",
      "x-inngest-server-kind": signingKey ? "cloud" : "dev",
      ...(signingKey ? { "x-inngest-signature": signBody(bodyText, signingKey) } : {}),
    }),
    /** The SDK's own calls to us (register, checkpoints): its bearer of the hashed signing key. */
    sdkAuthorized: (req: http.IncomingMessage) => !signingKey || bearerMatches(req.headers.authorization, [signingKey]),
    later,
    clearTimers: clearAll,
    /** Set by close(): nothing new starts after it. */
    closed: false,
  };
}
