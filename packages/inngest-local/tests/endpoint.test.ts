// Durable endpoints (`client.endpoint`) in sync mode, as packages/inngest-local takes them: the
// endpoint runs its steps inside its own HTTP request, creates the run with its first
// checkpoint (POST /v1/checkpoint) and reports each step and the end to
// /v1/checkpoint/{runId}/steps. An endpoint that would go async (a sleep: the real server then
// calls it back) is refused, and its run fails saying why. A real endpoint built with the
// pinned SDK (inngest/node's endpoint server), on a loopback port.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/endpoint.test.ts
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest, step } from "inngest";
import { createEndpointServer, endpointAdapter } from "inngest/node";
import { startInngestLocal, type InngestLocal } from "../index";
import { waitFor } from "../sdk-app";

describe("inngest-local durable endpoints (sync mode)", () => {
  let local: InngestLocal;
  let server: http.Server;
  let base: string;
  const logs: string[] = [];
  const ran: string[] = [];

  beforeAll(async () => {
    local = await startInngestLocal({ port: 0, appUrls: [], log: (l) => logs.push(l) });
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    const client = new Inngest({ id: "endpoint-app", isDev: true, baseUrl: local.url, endpointAdapter, logger: quiet });
    const handler = client.endpoint(async (req: Request) => {
      const path = new URL(req.url).pathname;
      if (path === "/sleepy") {
        await step.sleep("nap", "1s");
        return Response.json("woke");
      }
      const a = await step.run("a", () => {
        ran.push("a");
        return 20;
      });
      const b = await step.run("b", () => {
        ran.push("b");
        return a + 1;
      });
      return Response.json({ total: b }, { status: 202 });
    });
    server = createEndpointServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await local?.close();
  });

  it("a request runs the steps at once and answers; the run, created by the endpoint's checkpoint, is completed with each step", async () => {
    const res = await fetch(`${base}/sum`);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ total: 21 });
    expect(ran).toEqual(["a", "b"]);
    const run = await waitFor("the endpoint's run to end", () => local.runs().find((r) => r.functionId === "durable-endpoint-sum" && r.status !== "running"));
    expect(run.status).toBe("completed");
    expect(run.steps.map((s) => [s.name, s.status, s.output])).toEqual([
      ["a", "completed", 20],
      ["b", "completed", 21],
    ]);
    expect(run.functionName).toBe("GET /sum");
    expect(logs.some((l) => l.includes(`run ${run.id} is a durable endpoint's`))).toBe(true);
  });

  it("an endpoint that would go async (a sleep) is refused: the request fails, and the run fails saying why", async () => {
    const res = await fetch(`${base}/sleepy`);
    expect(res.status).toBeGreaterThanOrEqual(500);
    const run = await waitFor("the sleepy run", () => local.runs().find((r) => r.functionId === "durable-endpoint-sleepy"));
    expect(run.status).toBe("failed");
    expect((run.error as { message: string }).message).toMatch(/does not support durable endpoints that go async \(the "Sleep" op of step "nap"\)/);
  });

  it("the output of a run that went async (GET /v1/http/runs/:id/output) is a 404 naming durable endpoints in async mode", async () => {
    const res = await fetch(`${local.url}/v1/http/runs/01NORUN/output?token=x`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toMatch(/durable endpoints in async mode/);
  });
});
