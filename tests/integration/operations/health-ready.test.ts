// GET /api/health and GET /api/ready as the route handlers answer them, on the test database:
// no session needed, nothing written, nothing said beyond which dependency failed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as healthRoute from "@/app/api/health/route";
import * as readyRoute from "@/app/api/ready/route";
import { snapshot } from "../../support/fuzz";
import { openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
let inngest: http.Server;
let inngestUrl: string;
let healthy = true;
beforeAll(async () => {
  t = await openTestDb();
  // The Inngest server as far as readiness asks it: GET /health.
  inngest = http.createServer((req, res) => {
    res.statusCode = req.url === "/health" && healthy ? 200 : 503;
    res.end("{}");
  });
  await new Promise<void>((resolve) => inngest.listen(0, "127.0.0.1", resolve));
  inngestUrl = `http://127.0.0.1:${(inngest.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => inngest?.close(resolve));
  await t?.close();
});

async function withInngest<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.INNGEST_BASE_URL;
  process.env.INNGEST_BASE_URL = url;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.INNGEST_BASE_URL;
    else process.env.INNGEST_BASE_URL = before;
  }
}

describe("GET /api/health", () => {
  it("answers 200 {ok:true}, uncached, without a session", async () => {
    const res = healthRoute.GET();
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ ok: true });
  });
});

describe("GET /api/ready", () => {
  it("answers 200 {ok:true} when the database and the Inngest server answer, and writes nothing", async () => {
    const before = await snapshot(t.db);
    const res = await withInngest(inngestUrl, () => readyRoute.GET());
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ ok: true });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it("answers 503 naming the Inngest server when it does not answer, and nothing more", async () => {
    healthy = false;
    try {
      const res = await withInngest(inngestUrl, () => readyRoute.GET());
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ ok: false, failed: ["inngest"] });
    } finally {
      healthy = true;
    }
    // A server that is not there at all: the same answer, within the probe's limit.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const res = await withInngest(url, () => readyRoute.GET());
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ok: false, failed: ["inngest"] });
  });
});
