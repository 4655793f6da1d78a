// An OpenAI-compatible model server for the benchmark: answers POST /v1/chat/completions
// after `delayMs` with a summary naming the actor it was asked for, and records when each
// request arrived, when it was answered, and when its client dropped it before the answer
// (the connection closed). The last is what "cancel → the model request dropped" measures.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

export type ModelCall = { actorId: string; receivedAt: number; answeredAt?: number; droppedAt?: number };

export type SlowModel = {
  baseURL: string;
  calls: ModelCall[];
  setDelay(ms: number): void;
  /** Resolves with the first call (from `from` on) asking for `actorId`. */
  callFor(actorId: string, from: number, timeoutMs?: number): Promise<ModelCall>;
  close(): Promise<void>;
};

export async function startSlowModel(): Promise<SlowModel> {
  let delayMs = 0;
  const calls: ModelCall[] = [];
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    void readJson(req).then((json) => {
      const call: ModelCall = { actorId: actorIdOf(json), receivedAt: performance.now() };
      calls.push(call);
      for (const wake of waiters) wake();
      res.on("close", () => {
        if (!res.writableFinished) call.droppedAt = performance.now();
      });
      const answer = () => {
        if (res.destroyed) return;
        call.answeredAt = performance.now();
        const content = JSON.stringify({ summary: "Bench summary: the invoice reads as expected.", actor_id: call.actorId });
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "chatcmpl-bench",
            object: "chat.completion",
            created: 1_790_000_000,
            model: (json as { model?: string } | undefined)?.model ?? "bench-model",
            choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop", logprobs: null }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      };
      if (delayMs <= 0) return answer();
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    calls,
    setDelay(ms) {
      delayMs = ms;
    },
    async callFor(actorId, from, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = calls.slice(from).find((c) => c.actorId === actorId);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no model call for actor ${actorId} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, 200);
          function done() {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          }
          waiters.add(done);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

/** `actor_id` in the JSON of the last user message, as the app's prompt carries it. */
function actorIdOf(json: unknown): string {
  const messages = (json as { messages?: { role?: string; content?: unknown }[] } | undefined)?.messages ?? [];
  for (const m of [...messages].reverse()) {
    if (m.role !== "user" || typeof m.content !== "string") continue;
    try {
      const inner = JSON.parse(m.content) as { actor_id?: unknown };
      if (typeof inner.actor_id === "string") return inner.actor_id;
    } catch {
      // not JSON
    }
  }
  return "";
}
