// The Dev Server's GraphQL API (`POST /v0/gql`), the part the SDK's own test helpers and
// this stand-in's dashboard read: events and the event stream, functions and apps, runs with
// their trace (the run timeline) and each span's output. Field and type names follow
// `inngest-cli dev`'s schema (pkg/coreapi in inngest/inngest); a small subset, executed by
// the `graphql` reference implementation rather than by parsing queries by hand.
import { createHash } from "node:crypto";
import { buildSchema, graphql, type GraphQLSchema } from "graphql";
import type { EventPayload, MetadataEntry, RunSummary, StepSummary } from "./types";

export type FnInfo = {
  id: string;
  name: string;
  appUrl: string;
  /** The config as synced. */
  raw: Record<string, unknown>;
  url: string;
  triggers: ({ event: string; if?: string } | { cron: string; next?: string })[];
  maxAttempts: number;
  concurrency: number;
  problems: string[];
};
export type AppInfo = { id: string; url: string; name: string; syncedAt?: string; sdk?: string; framework?: string; functionIds: string[]; pending: boolean };
export type EventInfo = { internalId: string; event: EventPayload; receivedAt: string; runs: string[] };

/** What the API and the dashboard read; server.ts provides it. */
export interface LocalState {
  mode: "dev" | "self-hosted";
  functions(): FnInfo[];
  apps(): AppInfo[];
  /** Oldest first. */
  runs(): RunSummary[];
  run(id: string): RunSummary | undefined;
  /** Newest first. */
  events(): EventInfo[];
}

export const CRON_EVENT = "inngest/scheduled.timer";

/** The dev server derives app ids from the URL (a UUID); so do we, so ids are stable across restarts. */
export function appIdOf(url: string): string {
  const h = createHash("sha1").update(`inngest-local-app:${url}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export type SpanStatus = "QUEUED" | "RUNNING" | "WAITING" | "COMPLETED" | "FAILED" | "CANCELLED";
export type Span = {
  spanID: string;
  runID: string;
  name: string;
  status: SpanStatus;
  attempts: number | null;
  duration: number | null;
  outputID: string | null;
  queuedAt: string;
  startedAt: string | null;
  endedAt: string | null;
  stepOp: "RUN" | "SLEEP" | "WAIT_FOR_EVENT" | "INVOKE" | null;
  stepType: string;
  stepID: string | null;
  isRoot: boolean;
  parentSpanID: string | null;
  childrenSpans: Span[];
  /** Scores, experiments, AI usage and userland metadata: the run's on the root, each step's on its span. */
  metadata: MetadataEntry[];
  /** For the dashboard: the step as stored. */
  step?: StepSummary;
};

const RUN_STATUS = { running: "RUNNING", completed: "COMPLETED", failed: "FAILED", cancelled: "CANCELLED" } as const;
const STEP_OP: Record<string, Span["stepOp"]> = { StepRun: "RUN", StepFailed: "RUN", StepError: "RUN", StepPlanned: "RUN", Sleep: "SLEEP", WaitForEvent: "WAIT_FOR_EVENT", InvokeFunction: "INVOKE" };

function stepStatus(s: StepSummary, run: RunSummary): SpanStatus {
  if (s.status === "completed") return "COMPLETED";
  if (s.status === "failed") return "FAILED";
  if (run.status === "cancelled") return "CANCELLED";
  if (run.status !== "running") return "FAILED";
  if (s.status === "sleeping" || s.status === "waiting") return "WAITING";
  return s.status === "planned" && !s.attempts ? "QUEUED" : "RUNNING";
}
const ms = (a?: string, b?: string) => (a && b ? Math.max(0, Date.parse(b) - Date.parse(a)) : null);

/** Output ids name what they point at, so runTraceSpanOutputByID needs no second index. */
export const outputIdOf = (runId: string, stepId?: string) => (stepId ? `${runId}.${stepId}` : runId);

/** The run as a trace: a root span for the run, one child per step, in the order they started. */
export function traceOf(run: RunSummary): Span {
  const rootId = `run-${run.id}`;
  const children: Span[] = run.steps.map((s): Span => {
    const status = stepStatus(s, run);
    const done = status === "COMPLETED" || status === "FAILED";
    return {
      spanID: `${run.id}-${s.id}`,
      runID: run.id,
      name: s.name,
      status,
      // The dev server counts a span's attempts from 0: the index of its latest attempt.
      attempts: Math.max(0, s.attempts - 1),
      duration: ms(s.startedAt, s.endedAt),
      outputID: done && s.op !== "Sleep" ? outputIdOf(run.id, s.id) : null,
      queuedAt: s.startedAt,
      startedAt: s.startedAt,
      endedAt: s.endedAt ?? null,
      stepOp: STEP_OP[s.op] ?? "RUN",
      stepType: STEP_OP[s.op] ?? "RUN",
      stepID: s.id,
      isRoot: false,
      parentSpanID: rootId,
      childrenSpans: [],
      metadata: s.metadata ?? [],
      step: s,
    };
  });
  // The dev server ends a finished run's trace with a FINALIZATION span whose output is the
  // function's result (or error); the SDK's helpers read a run's output through it.
  if (run.status === "completed" || run.status === "failed") {
    const last = run.steps.reduce((t, s) => (s.endedAt && s.endedAt > t ? s.endedAt : t), run.startedAt);
    children.push({
      spanID: `${run.id}-finalization`,
      runID: run.id,
      name: "Finalization",
      status: run.status === "completed" ? "COMPLETED" : "FAILED",
      attempts: Math.max(0, run.attempts - 1),
      duration: ms(last, run.endedAt),
      outputID: outputIdOf(run.id),
      queuedAt: last,
      startedAt: last,
      endedAt: run.endedAt ?? null,
      stepOp: null,
      stepType: "FINALIZATION",
      stepID: null,
      isRoot: false,
      parentSpanID: rootId,
      childrenSpans: [],
      metadata: [],
    });
  }
  return {
    spanID: rootId,
    runID: run.id,
    name: run.functionName,
    status: RUN_STATUS[run.status],
    attempts: Math.max(0, run.attempts - 1),
    duration: ms(run.startedAt, run.endedAt),
    outputID: run.status === "completed" || run.status === "failed" ? outputIdOf(run.id) : null,
    queuedAt: run.startedAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt ?? null,
    stepOp: null,
    stepType: "",
    stepID: null,
    isRoot: true,
    parentSpanID: null,
    childrenSpans: children,
    metadata: run.metadata ?? [],
  };
}

const SDL = /* GraphQL */ `
  scalar Time
  scalar ULID
  scalar UUID
  scalar Bytes
  "JSON as it is (an object stays an object), as the dev server's Unknown scalar."
  scalar Unknown
  scalar SpanMetadataKind
  scalar SpanMetadataScope
  "An object of values, as JSON (the dev server's SpanMetadataValues)."
  scalar SpanMetadataValues

  type Query {
    apps: [App!]!
    app(id: UUID!): App
    functions: [Function!]
    functionBySlug(query: FunctionQuery!): Function
    stream(query: StreamQuery!): [StreamItem!]!
    event(query: EventQuery!): Event
    events(query: EventsQuery!): [Event!]
    eventV2(id: ULID!): EventV2!
    functionRun(query: FunctionRunQuery!): FunctionRun
    runs(first: Int! = 100, after: String, filter: RunsFilterV2): RunsV2Connection!
    run(runID: String!): FunctionRunV2
    runTrace(runID: String!): RunTraceSpan!
    runTrigger(runID: String!): RunTraceTrigger!
    runTraceSpanOutputByID(outputID: String!): RunTraceSpanOutput!
  }

  input EventQuery { workspaceId: ID = "local", eventId: ID! }
  input EventsQuery { workspaceId: ID = "local", lastEventId: ID }
  input FunctionQuery { workspaceId: ID = "local", functionSlug: String! }
  input FunctionRunQuery { workspaceId: ID = "local", functionRunId: ID! }
  input StreamQuery { after: ID, before: ID, limit: Int! = 20, includeInternalEvents: Boolean }
  input RunsFilterV2 { from: Time, until: Time, status: [FunctionRunStatus!], functionIDs: [String!], appIDs: [UUID!] }

  enum StreamType { EVENT CRON }
  enum FunctionRunStatus { COMPLETED FAILED CANCELLED RUNNING QUEUED }
  enum FunctionTriggerTypes { EVENT CRON }
  enum AppMethod { SERVE CONNECT }
  enum RunTraceSpanStatus { FAILED QUEUED RUNNING COMPLETED WAITING CANCELLED }
  enum StepOp { INVOKE RUN SLEEP WAIT_FOR_EVENT AI_GATEWAY }

  type App {
    id: ID!
    externalID: String!
    name: String!
    sdkLanguage: String!
    sdkVersion: String!
    framework: String
    url: String
    checksum: String
    error: String
    functions: [Function!]!
    method: AppMethod!
    connected: Boolean!
    functionCount: Int!
    autodiscovered: Boolean!
  }
  type FunctionTrigger { type: FunctionTriggerTypes!, value: String!, condition: String, nextRun: Time }
  type Function {
    id: String!
    name: String!
    slug: String!
    config: String!
    concurrency: Int!
    triggers: [FunctionTrigger!]
    url: String!
    appID: String!
    app: App!
  }
  type StreamItem { id: ID!, trigger: String!, type: StreamType!, createdAt: Time!, runs: [FunctionRun], inBatch: Boolean! }
  type Event {
    id: ULID!
    externalID: String
    name: String
    createdAt: Time
    payload: String
    raw: String
    totalRuns: Int
    functionRuns: [FunctionRun!]
  }
  type EventV2 {
    id: ULID!
    idempotencyKey: String
    name: String!
    occurredAt: Time!
    receivedAt: Time!
    raw: String!
    runs: [FunctionRunV2!]!
    version: String
  }
  type FunctionRun {
    id: ID!
    functionID: String!
    function: Function
    event: Event
    eventID: ID!
    status: FunctionRunStatus
    startedAt: Time
    finishedAt: Time
    output: String
    cron: String
  }
  type FunctionRunV2 {
    id: ULID!
    appID: UUID!
    app: App!
    functionID: String!
    function: Function!
    traceID: String!
    queuedAt: Time!
    startedAt: Time
    endedAt: Time
    status: FunctionRunStatus!
    triggerIDs: [ULID!]!
    eventName: String
    isBatch: Boolean!
    cronSchedule: String
    output: Bytes
    trace(preview: Boolean): RunTraceSpan
    hasAI: Boolean!
  }
  type PageInfo { hasNextPage: Boolean!, hasPreviousPage: Boolean!, startCursor: String, endCursor: String }
  type FunctionRunV2Edge { node: FunctionRunV2!, cursor: String! }
  type RunsV2Connection { edges: [FunctionRunV2Edge!]!, pageInfo: PageInfo!, totalCount: Int! }
  type RunTraceSpan {
    appID: UUID!
    functionID: String!
    runID: ULID!
    spanID: String!
    traceID: String!
    name: String!
    status: RunTraceSpanStatus!
    attempts: Int
    duration: Int
    outputID: String
    queuedAt: Time!
    startedAt: Time
    endedAt: Time
    childrenSpans: [RunTraceSpan!]!
    stepOp: StepOp
    stepType: String!
    stepID: String
    isRoot: Boolean!
    parentSpanID: String
    isUserland: Boolean!
    metadata: [SpanMetadata!]!
  }
  type SpanMetadata { scope: SpanMetadataScope!, kind: SpanMetadataKind!, values: SpanMetadataValues!, updatedAt: Time! }
  type StepError { message: String!, name: String, stack: String, cause: Unknown }
  type RunTraceSpanOutput { input: Bytes, data: Bytes, error: StepError }
  type RunTraceTrigger { eventName: String, IDs: [ULID!]!, payloads: [Bytes!]!, timestamp: Time!, isBatch: Boolean!, cron: String }
`;

let schema: GraphQLSchema | undefined;
const json = (v: unknown) => JSON.stringify(v === undefined ? null : v);
const stepError = (e: unknown) => {
  const o = (e && typeof e === "object" ? e : { message: String(e) }) as Record<string, unknown>;
  return { name: o.name == null ? "Error" : String(o.name), message: String(o.message ?? json(e)), stack: o.stack == null ? null : String(o.stack), cause: o.cause === undefined ? null : o.cause };
};

/** Resolvers as plain objects: graphql-js's default resolver reads properties and calls functions. */
function rootFor(state: LocalState) {
  const fnById = () => new Map(state.functions().map((f) => [f.id, f]));
  const appByUrl = () => new Map(state.apps().map((a) => [a.url, a]));
  const findEvent = (id: string) => state.events().find((e) => e.internalId === id || e.event.id === id);

  const app = (a: AppInfo) => {
    const [lang, version] = (a.sdk ?? "js:unknown").split(":");
    return {
      id: a.id,
      externalID: a.name,
      name: a.name,
      sdkLanguage: lang ?? "js",
      sdkVersion: (version ?? "").replace(/^v/, ""),
      framework: a.framework ?? null,
      url: a.url,
      checksum: null,
      error: a.pending ? "app not reachable yet" : null,
      functions: () => state.functions().filter((f) => f.appUrl === a.url).map(fn),
      method: "SERVE",
      connected: !a.pending,
      functionCount: a.functionIds.length,
      autodiscovered: false,
    };
  };
  const appOf = (url: string) => {
    const a = appByUrl().get(url);
    return app(a ?? { id: appIdOf(url), url, name: "app", functionIds: [], pending: true });
  };
  const fn = (f: FnInfo) => ({
    id: f.id,
    name: f.name,
    slug: f.id,
    config: json(f.raw),
    concurrency: f.concurrency,
    triggers: f.triggers.map((t) => ("cron" in t ? { type: "CRON", value: t.cron, condition: null, nextRun: t.next ?? null } : { type: "EVENT", value: t.event, condition: t.if ?? null, nextRun: null })),
    url: f.url,
    appID: appIdOf(f.appUrl),
    app: () => appOf(f.appUrl),
  });
  const fnOf = (id: string) => {
    const f = fnById().get(id);
    return f ? fn(f) : { id, name: id, slug: id, config: "{}", concurrency: 0, triggers: [], url: "", appID: "", app: () => appOf("") };
  };
  const cronOf = (r: RunSummary) => (r.eventName === CRON_EVENT ? String((r.event.data as { cron?: unknown }).cron ?? "") : null);
  const output = (r: RunSummary) => (r.status === "completed" ? json(r.output) : r.status === "failed" ? json(r.error) : null);
  const runV1 = (r: RunSummary) => ({
    id: r.id,
    functionID: r.functionId,
    function: () => fnOf(r.functionId),
    event: () => (findEvent(r.eventId) ? event(findEvent(r.eventId)!) : null),
    eventID: r.eventId,
    status: RUN_STATUS[r.status],
    startedAt: r.startedAt,
    finishedAt: r.endedAt ?? null,
    output: output(r),
    cron: cronOf(r),
  });
  const runV2 = (r: RunSummary) => {
    const f = fnById().get(r.functionId);
    return {
      id: r.id,
      appID: appIdOf(f?.appUrl ?? ""),
      app: () => appOf(f?.appUrl ?? ""),
      functionID: r.functionId,
      function: () => fnOf(r.functionId),
      traceID: r.id,
      queuedAt: r.startedAt,
      startedAt: r.startedAt,
      endedAt: r.endedAt ?? null,
      status: RUN_STATUS[r.status],
      triggerIDs: [r.eventId],
      eventName: r.eventName,
      isBatch: false,
      cronSchedule: cronOf(r),
      output: output(r),
      trace: () => span(traceOf(r), f?.appUrl ?? ""),
      hasAI: false,
    };
  };
  const span = (s: Span, appUrl: string, functionID = ""): Record<string, unknown> => ({
    ...s,
    step: undefined,
    appID: appIdOf(appUrl),
    functionID: functionID || state.run(s.runID)?.functionId || "",
    traceID: s.runID,
    isUserland: false,
    childrenSpans: s.childrenSpans.map((c) => span(c, appUrl, functionID)),
  });
  const event = (e: EventInfo) => ({
    id: e.internalId,
    externalID: e.event.id ?? null,
    name: e.event.name,
    createdAt: e.receivedAt,
    payload: json(e.event.data),
    raw: json(e.event),
    totalRuns: e.runs.length,
    functionRuns: () => e.runs.flatMap((id) => (state.run(id) ? [runV1(state.run(id)!)] : [])),
  });
  const internal = (name: string) => name.startsWith("inngest/");

  return {
    apps: () => state.apps().map(app),
    app: ({ id }: { id: string }) => {
      const a = state.apps().find((x) => x.id === id);
      return a ? app(a) : null;
    },
    functions: () => state.functions().map(fn),
    functionBySlug: ({ query }: { query: { functionSlug: string } }) => {
      const f = fnById().get(query.functionSlug);
      return f ? fn(f) : null;
    },
    stream: ({ query }: { query: { limit: number; includeInternalEvents?: boolean | null; before?: string | null; after?: string | null } }) => {
      const items = [
        ...state
          .events()
          .filter((e) => query.includeInternalEvents || !internal(e.event.name))
          .map((e) => ({ id: e.internalId, trigger: e.event.name, type: "EVENT", createdAt: e.receivedAt, runs: () => e.runs.flatMap((id) => (state.run(id) ? [runV1(state.run(id)!)] : [])), inBatch: false })),
        // Scheduled runs have no event of their own in the stream; the dev server lists them as CRON items.
        ...state
          .runs()
          .filter((r) => r.eventName === CRON_EVENT && !state.events().some((e) => e.internalId === r.eventId))
          .map((r) => ({ id: r.eventId, trigger: cronOf(r) ?? "", type: "CRON", createdAt: r.startedAt, runs: () => [runV1(r)], inBatch: false })),
      ]
        .filter((i) => (!query.before || i.id < query.before) && (!query.after || i.id > query.after))
        .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      return items.slice(0, Math.max(0, Math.min(query.limit, 1000)));
    },
    event: ({ query }: { query: { eventId: string } }) => {
      const e = findEvent(query.eventId);
      return e ? event(e) : null;
    },
    events: ({ query }: { query: { lastEventId?: string | null } }) => {
      const all = state.events();
      const from = query.lastEventId ? all.findIndex((e) => e.internalId === query.lastEventId) + 1 : 0;
      return all.slice(from, from + 50).map(event);
    },
    eventV2: ({ id }: { id: string }) => {
      const e = findEvent(id);
      if (!e) throw new Error(`event not found: ${id}`);
      return {
        id: e.internalId,
        idempotencyKey: e.event.id ?? null,
        name: e.event.name,
        occurredAt: new Date(e.event.ts).toISOString(),
        receivedAt: e.receivedAt,
        raw: json(e.event),
        runs: () => e.runs.flatMap((rid) => (state.run(rid) ? [runV2(state.run(rid)!)] : [])),
        version: typeof e.event.v === "string" ? e.event.v : null,
      };
    },
    functionRun: ({ query }: { query: { functionRunId: string } }) => {
      const r = state.run(query.functionRunId);
      return r ? runV1(r) : null;
    },
    runs: ({ first, after, filter }: { first: number; after?: string | null; filter?: { from?: string; until?: string; status?: string[]; functionIDs?: string[]; appIDs?: string[] } | null }) => {
      const fns = fnById();
      const all = [...state.runs()].reverse().filter((r) => {
        if (filter?.status?.length && !filter.status.includes(RUN_STATUS[r.status])) return false;
        if (filter?.functionIDs?.length && !filter.functionIDs.includes(r.functionId)) return false;
        if (filter?.appIDs?.length && !filter.appIDs.includes(appIdOf(fns.get(r.functionId)?.appUrl ?? ""))) return false;
        if (filter?.from && r.startedAt < new Date(filter.from).toISOString()) return false;
        if (filter?.until && r.startedAt > new Date(filter.until).toISOString()) return false;
        return true;
      });
      const start = after ? all.findIndex((r) => r.id === after) + 1 : 0;
      const page = all.slice(start, start + Math.max(0, Math.min(first, 1000)));
      return {
        edges: page.map((r) => ({ node: runV2(r), cursor: r.id })),
        pageInfo: { hasNextPage: start + page.length < all.length, hasPreviousPage: start > 0, startCursor: page[0]?.id ?? null, endCursor: page.at(-1)?.id ?? null },
        totalCount: all.length,
      };
    },
    run: ({ runID }: { runID: string }) => {
      const r = state.run(runID);
      return r ? runV2(r) : null;
    },
    runTrace: ({ runID }: { runID: string }) => {
      const r = state.run(runID);
      if (!r) throw new Error(`run not found: ${runID}`);
      return span(traceOf(r), fnById().get(r.functionId)?.appUrl ?? "", r.functionId);
    },
    runTrigger: ({ runID }: { runID: string }) => {
      const r = state.run(runID);
      if (!r) throw new Error(`run not found: ${runID}`);
      return { eventName: r.eventName, IDs: [r.eventId], payloads: [json(r.event)], timestamp: new Date(r.event.ts).toISOString(), isBatch: false, cron: cronOf(r) };
    },
    runTraceSpanOutputByID: ({ outputID }: { outputID: string }) => {
      const [runId, stepId] = outputID.split(".");
      const r = state.run(runId ?? "");
      const s = stepId ? r?.steps.find((x) => x.id === stepId) : undefined;
      if (!r || (stepId && !s)) throw new Error(`output not found: ${outputID}`);
      const input = json(r.event.data);
      if (s) return s.status === "failed" ? { input, data: null, error: stepError(s.error) } : { input, data: json(s.output), error: null };
      return r.status === "failed" ? { input, data: null, error: stepError(r.error) } : { input, data: json(r.output), error: null };
    },
  };
}

export type GqlRequest = { query?: unknown; variables?: unknown; operationName?: unknown };

/** Executes one GraphQL request; errors come back in `errors`, as any GraphQL server answers. */
export async function executeGql(state: LocalState, body: GqlRequest): Promise<{ data?: unknown; errors?: { message: string }[] }> {
  if (typeof body?.query !== "string") return { errors: [{ message: "expected a JSON body with a string `query`" }] };
  schema ??= buildSchema(SDL);
  const result = await graphql({
    schema,
    source: body.query,
    rootValue: rootFor(state),
    variableValues: body.variables && typeof body.variables === "object" ? (body.variables as Record<string, unknown>) : undefined,
    operationName: typeof body.operationName === "string" ? body.operationName : undefined,
  });
  return { ...(result.data !== undefined ? { data: result.data } : {}), ...(result.errors ? { errors: result.errors.map((e) => ({ message: e.message, path: e.path })) } : {}) };
}
