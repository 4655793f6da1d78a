// The built app behind server.mjs: GET /api/health and GET /api/ready as a balancer sees them,
// and the request id every answer carries and every log line written while serving it names.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAppServer, type AppServer } from "../../harness/app-server";
import { openTestDb, type TestDb } from "../../support/db";

const BOOT_TIMEOUT = 300_000;
let t: TestDb;
let app: AppServer;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  app = await startAppServer({ databaseUrl: url.toString(), name: "probes" });
}, BOOT_TIMEOUT);
afterAll(async () => {
  await app?.stop();
  await t?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(new URL(path, app.url), { headers, redirect: "manual" });

describe("probes", () => {
  it("GET /api/health and GET /api/ready answer 200 {ok:true} without a session", async () => {
    for (const path of ["/api/health", "/api/ready"]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(await res.json(), path).toEqual({ ok: true });
    }
  });
});

describe("request ids", () => {
  it("every answer carries one: a client's own when short and plain, else a new one", async () => {
    expect((await get("/api/health", { "x-request-id": "client-id_1.2:3" })).headers.get("x-request-id")).toBe("client-id_1.2:3");
    for (const given of ['a"b', "x".repeat(200), "with space"]) {
      const id = (await get("/api/health", { "x-request-id": given })).headers.get("x-request-id");
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
    // Pages and refusals too.
    expect((await get("/sign-in")).headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect((await get("/api/invoices")).headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
  // Last: the Inngest server does not come back.
  it("GET /api/ready is 503 naming the Inngest server once it is gone, and the log line names the request", async () => {
    await app.inngest.close();
    const res = await get("/api/ready", { "x-request-id": "probe-ready-1" });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ok: false, failed: ["inngest"] });
    expect(res.headers.get("x-request-id")).toBe("probe-ready-1");
    const line = app.appLogs().find((l) => l.includes('"msg":"not ready"'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: "warn", request_id: "probe-ready-1", failed: ["inngest"] });
  });
});
