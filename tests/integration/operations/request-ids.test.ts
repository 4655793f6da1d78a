// Every log line written while a route handles a request carries the request's id, under
// `next dev` too, where no server.mjs enters it: the route wrappers (app/_lib/http.ts) take the
// `X-Request-Id` proxy.ts set on the request, or make one when it is missing or not plain, and
// keep an id already in force (server.mjs's, under `npm start`).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authedRoute, json, publicRoute } from "@/app/_lib/http";
import { logContext, withLogContext } from "@/lib/log-context";
import { signInCookie } from "../../support/api";
import { makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(async () => {
  await t?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const contextOf = async (res: Response) => (await res.json()) as Record<string, unknown>;
const request = (headers: Record<string, string> = {}) => new Request("http://127.0.0.1:3000/api/probe", { headers });

describe("the request id on a route's log lines", () => {
  const open = publicRoute(async () => json(logContext()));

  it("is the X-Request-Id the proxy set", async () => {
    expect(await contextOf(await open(request({ "x-request-id": "req-0123.abc:9" })))).toEqual({ request_id: "req-0123.abc:9" });
  });

  it("is made anew when the header is missing or not plain", async () => {
    const missing = await contextOf(await open(request()));
    const odd = await contextOf(await open(request({ "x-request-id": 'two words"{}' })));
    expect(missing.request_id).toMatch(UUID);
    expect(odd.request_id).toMatch(UUID);
    expect(odd.request_id).not.toBe(missing.request_id);
  });

  it("stays the one already in force (server.mjs's)", async () => {
    const res = await withLogContext({ request_id: "from-server-mjs" }, () => open(request({ "x-request-id": "other" })));
    expect(await contextOf(res)).toEqual({ request_id: "from-server-mjs" });
  });

  it("is there in a signed-in route's handler too", async () => {
    const user = await makeUser(t.db, "Reqid");
    const cookie = await signInCookie(user.email);
    const route = authedRoute(async () => json(logContext()));
    const res = await route(request({ cookie, "x-request-id": "signed-in-1" }), { params: Promise.resolve({}) });
    expect(res.status).toBe(200);
    expect(await contextOf(res)).toEqual({ request_id: "signed-in-1" });
  });
});
