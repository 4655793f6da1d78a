// A fake OpenAI-compatible server on loopback for tests: POST /v1/chat/completions (and
// /chat/completions). Every request is recorded (headers + raw body + parsed JSON) so tests
// can check what would have left the building; each answer is chosen by a programmable
// behaviour. A request whose client drops the connection before the answer is complete is
// marked so (`droppedAt`): how a test sees that an aborted model call really went away.
// The default answer (`echo`) fits the purpose the request's response_format names: a summary
// (as before, also for a request naming none), no findings, or every line in one account.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SUMMARY_MAX_CHARS } from "@/lib/model/types";

export type RecordedRequest = {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Raw request body. */
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  /** `actor_id` from the user message's JSON, when the prompt carries one. */
  actorId: string | undefined;
  /** The purpose the request asks for: its response_format's json_schema name, when it has one. */
  purpose: string | undefined;
  /** performance.now() when the whole request body had arrived. */
  receivedAt: number;
  /** performance.now() when the client closed the connection before the answer was complete. */
  droppedAt?: number;
};

/** The token counts a completion reports; null: a server that reports none (no `usage` field). */
export type FakeUsage = { prompt_tokens: number; completion_tokens: number } | null;

export type FakeBehaviour =
  /**
   * The default: an answer fitting the requested purpose, echoing the request's actor id —
   * `{summary}` for summarize_invoice (or a request naming no purpose), `{findings: []}` for
   * review_invoice, `{lines: [{line, category}]}` for categorize_lines (every line of the user
   * message, in FAKE_CATEGORY when the schema allows it, else in the schema's first code).
   */
  | { kind: "echo"; summary?: string; usage?: FakeUsage }
  /** Answer with this exact message content (any string, JSON or not). */
  | { kind: "content"; content: string; finishReason?: string; usage?: FakeUsage }
  /** Answer with `value` as JSON plus `actor_id` (default: the requested one). */
  | { kind: "json"; value: Record<string, unknown>; actorId?: string; usage?: FakeUsage }
  /** Answer with {summary, actor_id}: `actorId` defaults to the requested one. */
  | { kind: "answer"; summary: string; actorId?: string }
  /** Answer naming another actor than the one asked for. */
  | { kind: "other-actor"; actorId: string; summary?: string }
  /** Message content that is not JSON. */
  | { kind: "malformed" }
  /** A summary longer than SUMMARY_MAX_CHARS (`length` defaults to the limit + 1). */
  | { kind: "oversized"; length?: number }
  /** Wait `delayMs` before sending anything, then behave as `then` (default echo). */
  | { kind: "slow"; delayMs: number; then?: FakeBehaviour }
  /** Send the 200 headers and half the body at once, the rest after `delayMs`. */
  | { kind: "slow-body"; delayMs: number }
  /** An HTTP error with an OpenAI-style error body (or `body` verbatim). */
  | { kind: "status"; status: number; body?: string }
  /** HTTP 200 whose body is not JSON (`contentType` defaults to text/html). */
  | { kind: "non-json-body"; body?: string; contentType?: string }
  /** Never answer (until close()). */
  | { kind: "hang" };

export type Responder = FakeBehaviour | ((request: RecordedRequest, index: number) => FakeBehaviour | Promise<FakeBehaviour>);

export type FakeOpenAI = {
  /** e.g. "http://127.0.0.1:54321/v1" */
  baseURL: string;
  requests: RecordedRequest[];
  /** Sets the behaviour for every following request. */
  respondWith(responder: Responder): void;
  /** The first request (already in or still to come) that `match` accepts. */
  nextRequest(match: (request: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /** Resolves with `droppedAt` once the client has dropped `request`'s connection. */
  dropped(request: RecordedRequest, timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
};

export const FAKE_SUMMARY = "Fake summary: invoice looks fine.";
/** The account echo puts every line in for categorize_lines (the chart's "Other expenses"). */
export const FAKE_CATEGORY = "7900";
/** What the fake reports a completion used, unless a behaviour says otherwise. */
export const FAKE_USAGE = { prompt_tokens: 1, completion_tokens: 1 } as const;

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  let responder: Responder = { kind: "echo" };
  const timers = new Set<NodeJS.Timeout>();
  /** Called on every change: a request recorded or dropped. */
  const watchers = new Set<() => void>();
  const changed = () => {
    for (const watch of [...watchers]) watch();
  };
  /** Resolves with `probe()`'s first truthy value, checked now and on every change. */
  function when<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = probe();
        if (value === undefined) return;
        watchers.delete(check);
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        watchers.delete(check);
        reject(new Error(`fake model: no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      watchers.add(check);
      check();
    });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let recorded: RecordedRequest | undefined;
    res.on("close", () => {
      // Closed before the last byte of the answer went out: the client went away.
      if (res.writableFinished || !recorded) return;
      recorded.droppedAt = performance.now();
      changed();
    });
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const json = parseJson(body);
      recorded = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body,
        json,
        actorId: actorIdOf(json),
        purpose: purposeOf(json),
        receivedAt: performance.now(),
      };
      const index = requests.push(recorded) - 1;
      const request = recorded;
      changed();

      const path = (req.url ?? "").split("?")[0];
      if (req.method !== "POST" || (path !== "/v1/chat/completions" && path !== "/chat/completions")) {
        sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error" } });
        return;
      }
      void (async () => {
        const behaviour = typeof responder === "function" ? await responder(request, index) : responder;
        await respond(res, behaviour, request);
      })().catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: "fake_error" } });
      });
    });
  });

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  async function respond(res: ServerResponse, behaviour: FakeBehaviour, request: RecordedRequest): Promise<void> {
    if (res.destroyed) return;
    const model = modelOf(request.json);
    switch (behaviour.kind) {
      case "echo":
        return sendCompletion(res, model, JSON.stringify({ ...echoAnswer(request, behaviour.summary), actor_id: request.actorId ?? "" }), {
          usage: behaviour.usage,
        });
      case "content":
        return sendCompletion(res, model, behaviour.content, { finishReason: behaviour.finishReason, usage: behaviour.usage });
      case "json":
        return sendCompletion(res, model, JSON.stringify({ ...behaviour.value, actor_id: behaviour.actorId ?? request.actorId ?? "" }), {
          usage: behaviour.usage,
        });
      case "answer":
        return sendCompletion(
          res,
          model,
          JSON.stringify({ summary: behaviour.summary, actor_id: behaviour.actorId ?? request.actorId ?? "" }),
        );
      case "other-actor":
        return sendCompletion(res, model, JSON.stringify({ summary: behaviour.summary ?? FAKE_SUMMARY, actor_id: behaviour.actorId }));
      case "malformed":
        return sendCompletion(res, model, '{"summary": "unterminated');
      case "oversized":
        return sendCompletion(
          res,
          model,
          JSON.stringify({ summary: "x".repeat(behaviour.length ?? SUMMARY_MAX_CHARS + 1), actor_id: request.actorId ?? "" }),
        );
      case "slow":
        await wait(behaviour.delayMs);
        return respond(res, behaviour.then ?? { kind: "echo" }, request);
      case "slow-body": {
        const text = completionBody(model, JSON.stringify({ summary: FAKE_SUMMARY, actor_id: request.actorId ?? "" }));
        const half = Math.floor(text.length / 2);
        res.writeHead(200, { "content-type": "application/json" });
        res.write(text.slice(0, half));
        await wait(behaviour.delayMs);
        if (!res.destroyed) res.end(text.slice(half));
        return;
      }
      case "status":
        if (behaviour.body !== undefined) {
          res.writeHead(behaviour.status, { "content-type": "application/json" }).end(behaviour.body);
          return;
        }
        return sendJson(res, behaviour.status, {
          error: { message: `fake error ${behaviour.status}`, type: "fake_error", code: null, param: null },
        });
      case "non-json-body":
        res
          .writeHead(200, { "content-type": behaviour.contentType ?? "text/html" })
          .end(behaviour.body ?? "<html><body>502 Bad Gateway (but with a 200)</body></html>");
        return;
      case "hang":
        return;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    respondWith(next) {
      responder = next;
    },
    nextRequest(match, timeoutMs = 15_000) {
      return when("matching request", () => requests.find(match), timeoutMs);
    },
    dropped(request, timeoutMs = 15_000) {
      return when("dropped connection", () => request.droppedAt, timeoutMs);
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

type CompletionOptions = { finishReason?: string | undefined; usage?: FakeUsage | undefined };

function sendCompletion(res: ServerResponse, model: string, content: string, options: CompletionOptions = {}): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(200, { "content-type": "application/json" }).end(completionBody(model, content, options));
}

function completionBody(model: string, content: string, { finishReason = "stop", usage = FAKE_USAGE }: CompletionOptions = {}): string {
  return JSON.stringify({
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1_790_000_000,
    model,
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: finishReason, logprobs: null }],
    ...(usage === null ? {} : { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
  });
}

/** The default answer's fields (without actor_id) for the purpose the request names. */
function echoAnswer(request: RecordedRequest, summary: string | undefined): Record<string, unknown> {
  if (request.purpose === "review_invoice") return { findings: [] };
  if (request.purpose === "categorize_lines") {
    const codes = categoryCodesOf(request.json);
    const category = !codes || codes.includes(FAKE_CATEGORY) ? FAKE_CATEGORY : codes[0];
    return { lines: userLinesOf(request.json).map((line) => ({ line, category })) };
  }
  return { summary: summary ?? FAKE_SUMMARY };
}

/** The json_schema name of the request's response_format. */
function purposeOf(json: unknown): string | undefined {
  if (!isRecord(json) || !isRecord(json.response_format) || !isRecord(json.response_format.json_schema)) return undefined;
  const name = json.response_format.json_schema.name;
  return typeof name === "string" ? name : undefined;
}

/** The account codes the categorize_lines schema allows (`lines.items.category.enum`), when it lists them. */
function categoryCodesOf(json: unknown): string[] | undefined {
  const schema =
    isRecord(json) && isRecord(json.response_format) && isRecord(json.response_format.json_schema)
      ? json.response_format.json_schema.schema
      : undefined;
  const lines = isRecord(schema) && isRecord(schema.properties) ? schema.properties.lines : undefined;
  const items = isRecord(lines) ? lines.items : undefined;
  const category = isRecord(items) && isRecord(items.properties) ? items.properties.category : undefined;
  const codes = isRecord(category) ? category.enum : undefined;
  return Array.isArray(codes) && codes.length > 0 && codes.every((c) => typeof c === "string") ? (codes as string[]) : undefined;
}

/** The line numbers of the invoice in the last user message. */
function userLinesOf(json: unknown): number[] {
  const inner = userJsonOf(json);
  const invoice = isRecord(inner) ? inner.invoice : undefined;
  const lines = isRecord(invoice) && Array.isArray(invoice.lines) ? invoice.lines : [];
  return lines.flatMap((line) => (isRecord(line) && typeof line.line === "number" ? [line.line] : []));
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function modelOf(json: unknown): string {
  const model = isRecord(json) ? json.model : undefined;
  return typeof model === "string" ? model : "fake-model";
}

/** The actor id the prompt carries: `actor_id` in the JSON of the last user message. */
function actorIdOf(json: unknown): string | undefined {
  const inner = userJsonOf(json);
  return isRecord(inner) && typeof inner.actor_id === "string" ? inner.actor_id : undefined;
}

/** The JSON of the last user message carrying an `actor_id`. */
function userJsonOf(json: unknown): Record<string, unknown> | undefined {
  if (!isRecord(json) || !Array.isArray(json.messages)) return undefined;
  for (const message of [...json.messages].reverse()) {
    if (!isRecord(message) || message.role !== "user" || typeof message.content !== "string") continue;
    const inner = parseJson(message.content);
    if (isRecord(inner) && typeof inner.actor_id === "string") return inner;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
