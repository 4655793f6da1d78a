// The settings every part of the stand-in reads, taken from the options once: the mode and
// its keys, how calls to the app are signed, retry and call timing, the log, and the timers
// that close() clears.
import type http from "node:http";
import { randomBytes } from "node:crypto";
import { retryScaleFrom } from "./backoff";
import { bearerMatches, sameSecret, signBody } from "./signing";
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
  // The dashboard's credential for a browser (self-hosted mode): printed at start as a login
  // URL that puts it in a cookie, so the signing key never has to be typed into a page.
  const dashboardToken = signingKey ? randomBytes(24).toString("base64url") : undefined;
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
    dashboardToken,
    /**
     * The control plane (inspection, dashboard, cancel, sync, invoke): open in dev mode; in
     * self-hosted mode the signing key (as itself or as the SDK's hashed bearer) or the
     * dashboard token, as a bearer or as the value of `cookie` (the dashboard's cookie).
     */
    operatorAuthorized: (req: http.IncomingMessage, cookie: string | undefined) => {
      if (!signingKey || !dashboardToken) return true;
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      if (token !== undefined && (sameSecret(token, signingKey) || sameSecret(token, dashboardToken) || bearerMatches(req.headers.authorization, [signingKey]))) return true;
      return cookie !== undefined && sameSecret(cookie, dashboardToken);
    },
    dashboardTokenOk: (token: string) => dashboardToken !== undefined && sameSecret(token, dashboardToken),
    /** Whether an event may be taken with this key: any in dev mode, one of the event keys otherwise. */
    eventKeyOk: (key: string) => !signingKey || eventKeys.some((k) => sameSecret(key, k)),
    later,
    clearTimers: clearAll,
    /** Set by close(): nothing new starts after it. */
    closed: false,
  };
}
