import { describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { checkReadiness, inngestServerUrl } from "@/lib/readiness";

const answeringDb = async () => ({ execute: async () => [{ "?column?": 1 }] }) as unknown as Db;
const health = (status: number) => (async () => new Response("{}", { status })) as typeof fetch;

describe("inngestServerUrl", () => {
  it("is the SDK's server: INNGEST_BASE_URL, else the dev server outside production, else Cloud (null)", () => {
    expect(inngestServerUrl({ NODE_ENV: "production", INNGEST_BASE_URL: "http://inngest:8288" })).toBe("http://inngest:8288");
    expect(inngestServerUrl({ NODE_ENV: "development", INNGEST_DEV: "http://127.0.0.1:9999" })).toBe("http://127.0.0.1:9999");
    expect(inngestServerUrl({ NODE_ENV: "development", INNGEST_DEV: "1" })).toBe("http://127.0.0.1:8288");
    expect(inngestServerUrl({ NODE_ENV: "production", INNGEST_DEV: "http://127.0.0.1:9999" })).toBeNull();
    expect(inngestServerUrl({ NODE_ENV: "production" })).toBeNull();
  });
});

describe("checkReadiness", () => {
  it("is ready when the database answers a query and the Inngest server its health route", async () => {
    const asked: string[] = [];
    const fetch = (async (url: URL) => {
      asked.push(String(url));
      return new Response("{}", { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    expect((await checkReadiness({ db: answeringDb, inngestUrl: "http://inngest:8288/", fetch })).readiness).toEqual({ ok: true });
    expect(asked).toEqual(["http://inngest:8288/health"]);
  });

  it("names what failed: a database that throws, an Inngest server that answers 500", async () => {
    const db = async () => ({ execute: async () => Promise.reject(new Error("connect ECONNREFUSED")) }) as unknown as Db;
    const result = await checkReadiness({ db, inngestUrl: "http://inngest:8288", fetch: health(500) });
    expect(result.readiness).toEqual({ ok: false, failed: ["database", "inngest"] });
    expect(result.why).toEqual({ database: "connect ECONNREFUSED", inngest: "answered 500" });
  });

  it("does not wait past its limit for a database or a server that never answers", async () => {
    const never = () => new Promise<never>(() => {});
    const hanging = (async (_url: URL, init: RequestInit) =>
      new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(new Error("aborted"))))) as unknown as typeof fetch;
    const started = Date.now();
    const result = await checkReadiness({ db: never, inngestUrl: "http://inngest:8288", fetch: hanging, timeoutMs: 100 });
    expect(result.readiness).toEqual({ ok: false, failed: ["database", "inngest"] });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("does not watch Inngest Cloud", async () => {
    const fetch = (async () => {
      throw new Error("not asked");
    }) as unknown as typeof globalThis.fetch;
    expect((await checkReadiness({ db: answeringDb, inngestUrl: null, fetch })).readiness).toEqual({ ok: true });
  });
});
