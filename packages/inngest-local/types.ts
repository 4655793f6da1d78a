// The stand-in's data: what its API answers (runs, steps, events) and what it keeps while a
// run goes on. Shared by the registry, the executor, the routes and the GraphQL API.
import type { CompiledExpression } from "./expr";
import type { CronSchedule } from "./cron";

export type RunStatus = "running" | "completed" | "failed" | "cancelled";
export type StepStatus = "planned" | "retrying" | "sleeping" | "waiting" | "completed" | "failed";

export interface StepSummary {
  /** Hashed id, the key the SDK uses in the `steps` map. */
  id: string;
  /** The id the developer wrote (`step.run("charge", ...)`). */
  name: string;
  op: string;
  status: StepStatus;
  attempts: number;
  output?: unknown;
  error?: unknown;
  /** True when the result arrived through POST /v1/checkpoint/{runId}/async. */
  checkpointed?: boolean;
  startedAt: string;
  endedAt?: string;
  /** Metadata the SDK attached to the step (scores, `inngest.ai`, userland), as the trace shows it. */
  metadata?: MetadataEntry[];
}

/** One kind of metadata on a run or a step: `values` merged or replaced as each update says. */
export type MetadataEntry = { kind: string; scope: string; values: Record<string, unknown>; updatedAt: string };

export interface RunSummary {
  id: string;
  functionId: string;
  functionName: string;
  eventName: string;
  eventId: string;
  event: EventPayload;
  status: RunStatus;
  /** Most attempts any single request of this run needed (1 = no retries). */
  attempts: number;
  maxAttempts: number;
  steps: StepSummary[];
  output?: unknown;
  error?: unknown;
  cancelledBy?: string;
  /** The event whose `cancelOn` match cancelled the run (its id), for the dashboard's link. */
  cancelledByEvent?: string;
  /** While a request to the app is out: when the step it is running began (the SDK names a step only when it reports it). */
  inFlightSince?: string;
  /** A run cancelled while a request to the app was out: the step it was running, and what the app reported for it after the cancel (refused, not memoized). */
  interrupted?: Interrupted;
  startedAt: string;
  endedAt?: string;
  /** Run-scoped metadata (scores, experiments), shown on the trace's root span. */
  metadata?: MetadataEntry[];
}

export type Interrupted = {
  /** When the step began (the request left, or the result before it came in), and when the cancel came. */
  since: string;
  cancelledAt: string;
  /** Known when the request was for a planned step, or once the app reports the step. */
  stepId?: string;
  name?: string;
  op?: string;
  /** When the app reported the step, after the cancel, and what it said. */
  reportedAt?: string;
  output?: unknown;
  error?: unknown;
};

export type EventPayload = { name: string; id?: string; data: Record<string, unknown>; ts: number; [k: string]: unknown };

export interface InngestLocalOptions {
  port?: number;
  host?: string;
  appUrls: string[];
  log?: (line: string) => void;
  /**
   * A factor on the real server's retry schedule (15 s, 30 s, 1 min… plus up to 30 s of jitter,
   * all scaled; backoff.ts), for tests. Default: $INNGEST_LOCAL_RETRY_SCALE or 1 (the real one).
   */
  retryScale?: number;
  /** Send ctx.fn_id so the SDK checkpoints steps (its v4 default). Default true; $INNGEST_LOCAL_CHECKPOINTING=0 turns it off. */
  checkpointing?: boolean;
  /** Delay between sync attempts while an app is unreachable. Default 1000. */
  syncRetryMs?: number;
  /** Re-sync every n ms, like the dev server's polling (0 = off). Default 0. */
  pollMs?: number;
  /** Per-request timeout for calls to the app. Default 5 minutes. */
  callTimeoutMs?: number;
  /**
   * Self-hosted mode, as `inngest start --signing-key`: every call to the app is signed with
   * it, and the SDK's register and checkpoint calls must carry its hash. Needs `eventKeys`.
   */
  signingKey?: string;
  /** Self-hosted mode: the keys events must be sent with (POST /e/<key>); others get 401. */
  eventKeys?: string[];
}

export interface InngestLocal {
  url: string;
  port: number;
  mode: "dev" | "self-hosted";
  /** Self-hosted mode: the URL that logs a browser into the dashboard (it sets a cookie). */
  loginUrl?: string;
  close(): Promise<void>;
  runs(): RunSummary[];
  sync(): Promise<void>;
}


export type Memo = { data: unknown } | { error: unknown };
export type Op = { id: string; op: string; name?: string; displayName?: string; data?: unknown; error?: unknown; opts?: Record<string, unknown>; userland?: { id?: string }; metadata?: MetadataUpdate[] };
/** What the SDK sends: on a step's op (`scope` set) or to POST /v1/runs/{runId}/metadata. */
export type MetadataUpdate = { kind: string; scope?: string; op?: string; values?: Record<string, unknown> };
export type Trigger = { event: string; expr?: CompiledExpression } | { cron: CronSchedule };
export type FnEntry = {
  id: string;
  name: string;
  appUrl: string;
  /** The config as the SDK synced it (served by GET /dev and the GraphQL API). */
  raw: Record<string, unknown>;
  url: string;
  triggers: Trigger[];
  maxAttempts: number;
  cancel: { event: string; expr?: CompiledExpression; timeoutMs?: number }[];
  concurrency: { limit: number; key?: CompiledExpression; scope: string }[];
  idempotency?: CompiledExpression;
  /** batchEvents: events are gathered (per key) and one run gets up to maxSize of them, or what came within the timeout. */
  batch?: { maxSize: number; timeoutMs: number; key?: CompiledExpression; if?: CompiledExpression };
  /** Config this stand-in cannot honour: runs of the function fail with these messages. */
  problems: string[];
};
export type Request = { stepId: string; attempt: number };
export type Pending = { op: Op; kind: "step" | "sleep" | "wait" | "invoke" };
export type Run = RunSummary & {
  fn: FnEntry;
  /** The events that started the run: one, or a batch (batchEvents), `event` being the first. */
  events: EventPayload[];
  memo: Record<string, Memo>;
  stack: string[];
  stepById: Map<string, StepSummary>;
  /** Requests to the app waiting their turn: "step" asks the SDK what comes next, a hashed id runs that planned step. */
  requests: Request[];
  /** Steps, sleeps, waits and invokes the SDK reported that have no result yet, by hashed id. */
  pending: Map<string, Pending>;
  /** disable_immediate_execution: on from a parallel group until the group is done (the executor's ForceStepPlan). */
  forceStepPlan: boolean;
  /** When the current request left, or its last step result came in: where the next executed step began. */
  mark?: number;
  /** The stepId of the request to the app that is out, if one is. */
  inFlight?: string;
  version?: number;
  /** Wakes the call loop when a request is queued, or the run ends. */
  wakeDriver?: () => void;
  /** Stops the run's timers (sleeps, wait and invoke timeouts, retry backoff): used when it ends. */
  stops: Set<() => void>;
  /** The run's waitForEvent steps, by hashed id. */
  waiters: Map<string, { event: string; expr?: CompiledExpression; resolve: (e: EventPayload) => void }>;
  /** The step.invoke that started this run, which its end settles. */
  parent?: { run: Run; op: Op };
  /**
   * The run's `defer()` calls (DeferAdd ops), by hashed id: each becomes an
   * `inngest/deferred.schedule` event when the run ends, unless aborted (DeferAbort) first.
   */
  defers: Map<string, Defer>;
};
export type Defer = { fnSlug: string; input: unknown; meta?: Record<string, unknown>; name: string; status: "after_run" | "aborted" | "scheduled" };

