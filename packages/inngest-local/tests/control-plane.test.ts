// The stand-in's control plane (the dashboard, its JSON and GraphQL API, the send-event
// form, cancel) against a loopback attacker and a DNS-rebinding page (an outside review, 2026-12-01):
// in self-hosted mode nothing is read, sent, cancelled or re-synced without a credential
// (the signing key as a bearer, or the dashboard token printed at start, as a bearer or in
// the cookie its login URL sets); no event is taken without the event key, the dashboard's
// form included; and in both modes every route refuses a foreign Host header.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/control-plane.test.ts
import http from "node:http";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest } from "inngest";
import { serve } from "inngest/node";
import { startInngestLocal, type InngestLocal } from "../index";
import { hashSigningKey } from "../signing";
import { startSdkApp, waitFor, type SdkApp } from "../sdk-app";

type Raw = { status: number; headers: http.IncomingHttpHeaders; text: string };
/** A raw request, so a test can set Host, Origin and Cookie as an attacker would. */
function raw(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? "GET", headers: init.headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

const NONCE = `nonce-${randomBytes(12).toString("hex")}`;
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const FORM = "application/x-www-form-urlencoded";

describe("inngest-local control plane in self-hosted mode", () => {
  const signingKey = `signkey-test-${randomBytes(32).toString("hex")}`;
  const eventKey = randomBytes(16).toString("hex");
  const logs: string[] = [];
  let app: SdkApp;
  let local: InngestLocal;
  let runId = "";
  /** The event that started it, whose dashboard page shows its payload (the nonce). */
  let eventId = "";
  const bearer = () => ({ authorization: `Bearer ${signingKey}` });

  beforeAll(async () => {
    app = await startSdkApp();
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 20 / 15_000, syncRetryMs: 50, signingKey, eventKeys: [eventKey], log: (l) => logs.push(l) });
    const inngest = new Inngest({ id: "cp-app", isDev: false, baseUrl: local.url, signingKey, eventKey, logger: quiet });
    const waits = inngest.createFunction({ id: "waits", triggers: [{ event: "cp/opened" }] }, async ({ step }) => {
      await step.waitForEvent("close", { event: "cp/closed", timeout: "1h" });
      return "closed";
    });
    app.setHandler(serve({ client: inngest, functions: [waits] }));
    await waitFor("sync", () => logs.some((l) => l.startsWith('synced app "cp-app"')));
    const sent = await fetch(`${local.url}/e/${eventKey}`, { method: "POST", body: JSON.stringify({ name: "cp/opened", data: { leaseId: "L1", nonce: NONCE } }) });
    expect(sent.status).toBe(200);
    const run = (await waitFor("the run", () => local.runs().find((r) => r.eventName === "cp/opened")))!;
    runId = run.id;
    eventId = run.eventId;
    await waitFor("its wait", () => local.runs().find((r) => r.id === runId)?.steps.some((s) => s.status === "waiting"));
  });
  afterAll(async () => {
    await local?.close();
    await app?.close();
  });

  /** Every control-plane request, as an attacker on the loopback would send it (a same-origin Origin: forged). */
  const attacks = () => {
    const origin = { origin: local.url };
    const form = { ...origin, "content-type": FORM };
    return [
      ["GET", "/events", {}, undefined],
      ["GET", "/runs", {}, undefined],
      ["GET", `/runs/${runId}`, {}, undefined],
      ["GET", "/functions", {}, undefined],
      ["GET", "/", {}, undefined],
      ["GET", "/ui/runs", {}, undefined],
      ["GET", `/ui/runs/${runId}`, {}, undefined],
      ["GET", "/ui/events", {}, undefined],
      ["GET", `/ui/events/${eventId}`, {}, undefined],
      ["POST", "/v0/gql", { "content-type": "application/json" }, JSON.stringify({ query: "{ events(query: {}) { raw } }" })],
      ["POST", "/sync", {}, undefined],
      ["POST", `/runs/${runId}/cancel`, {}, undefined],
      ["POST", "/fn/cp-app-waits/invoke", {}, JSON.stringify({ data: { nonce: NONCE } })],
      ["POST", "/ui/events", form, new URLSearchParams({ name: "cp/closed", data: JSON.stringify({ leaseId: "L1", nonce: NONCE }) }).toString()],
      ["POST", `/ui/runs/${runId}/cancel`, form, ""],
      ["POST", `/ui/runs/${runId}/rerun`, form, ""],
      ["POST", "/ui/sync", form, ""],
    ] as const;
  };

  it("answers every control-plane request without a credential with 401, and leaks, sends, cancels nothing", async () => {
    const runsBefore = local.runs().length;
    const syncsBefore = logs.filter((l) => l.startsWith("synced app")).length;
    const wrong: Record<string, string>[] = [{}, { authorization: `Bearer ${signingKey.replace(/.$/, (c) => (c === "0" ? "1" : "0"))}` }, { cookie: `inngest_local_${local.port}=guess` }];
    for (const [method, path, headers, body] of attacks()) {
      for (const cred of wrong) {
        const res = await raw(`${local.url}${path}`, { method, headers: { ...headers, ...cred }, body });
        expect(res.status, `${method} ${path} ${JSON.stringify(cred)}`).toBe(401);
        expect(res.text, `${method} ${path}`).not.toContain(NONCE);
        expect(res.text, `${method} ${path}`).not.toContain(runId);
      }
    }
    expect(local.runs().length).toBe(runsBefore);
    expect(local.runs().find((r) => r.id === runId)!.status).toBe("running");
    expect(logs.filter((l) => l.startsWith("synced app")).length).toBe(syncsBefore);
    const events = (await (await fetch(`${local.url}/events`, { headers: bearer() })).json()) as { name: string }[];
    expect(events.map((e) => e.name).filter((n) => !n.startsWith("inngest/"))).toEqual(["cp/opened"]);
  });

  it("refuses a foreign Host on every route (421), credentials or not", async () => {
    const routes: [string, string][] = [...attacks().map(([m, p]) => [m, p] as [string, string]), ["GET", "/health"], ["POST", `/e/${eventKey}`], ["POST", "/fn/register"], ["POST", `/v1/checkpoint/${runId}/async`], ["GET", "/ui/login"], ["GET", "/nope"]];
    for (const host of ["evil.example", `evil.example:${local.port}`, "127.0.0.1.nip.io", `192.168.1.5:${local.port}`]) {
      for (const [method, path] of routes) {
        const res = await raw(`${local.url}${path}`, { method, headers: { host, ...bearer(), origin: `http://${host}` }, body: method === "POST" ? "{}" : undefined });
        expect(res.status, `${method} ${path} Host ${host}`).toBe(421);
        expect(res.text).not.toContain(NONCE);
      }
    }
    expect(local.runs().find((r) => r.id === runId)!.status).toBe("running");
  });

  it("with the signing key (as itself or as the SDK's hashed bearer) the JSON and GraphQL API answer", async () => {
    for (const authorization of [`Bearer ${signingKey}`, `Bearer ${hashSigningKey(signingKey)}`]) {
      const runs = await raw(`${local.url}/runs`, { headers: { authorization } });
      expect(runs.status).toBe(200);
      expect(runs.text).toContain(NONCE);
      const gql = await raw(`${local.url}/v0/gql`, { method: "POST", headers: { authorization, "content-type": "application/json" }, body: JSON.stringify({ query: "{ apps { url } }" }) });
      expect(gql.status).toBe(200);
      expect((await raw(`${local.url}/`, { headers: { authorization } })).status).toBe(200);
    }
  });

  it("the login URL printed at start sets the dashboard cookie; with it the dashboard works; a wrong token gets 401", async () => {
    expect(local.loginUrl).toMatch(new RegExp(`^${local.url}/ui/login\\?token=[A-Za-z0-9_-]{32,}$`));
    expect(logs.some((l) => l.includes(local.loginUrl!))).toBe(true);
    const token = new URL(local.loginUrl!).searchParams.get("token")!;
    expect((await raw(`${local.url}/ui/login?token=${token}x`)).status).toBe(401);
    const login = await raw(local.loginUrl!);
    expect(login.status).toBe(303);
    expect(login.headers.location).toBe("/");
    const setCookie = String(login.headers["set-cookie"]);
    expect(setCookie).toMatch(new RegExp(`^inngest_local_${local.port}=`));
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    const cookie = setCookie.split(";")[0]!;
    const page = await raw(`${local.url}/ui/runs/${runId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.text).toContain(NONCE);
    const eventPage = await raw(`${local.url}/ui/events/${eventId}`, { headers: { cookie } });
    expect(eventPage.status).toBe(200);
    expect(eventPage.text).toContain(NONCE);
    // The live script holds no data: it needs no credential, and its pages still do.
    expect((await raw(`${local.url}/ui/live.js`)).status).toBe(200);
    // The token works as a bearer too (curl).
    expect((await raw(`${local.url}/events`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    // The cookie does not stand in for the dashboard's own-origin check.
    const crossSite = await raw(`${local.url}/ui/runs/${runId}/cancel`, { method: "POST", headers: { cookie, origin: "http://127.0.0.1:1", "content-type": FORM }, body: "" });
    expect(crossSite.status).toBe(403);
    expect(local.runs().find((r) => r.id === runId)!.status).toBe("running");
  });

  it("the send-event form needs the event key as well, whatever the Origin says", async () => {
    const token = new URL(local.loginUrl!).searchParams.get("token")!;
    const cookie = `inngest_local_${local.port}=${token}`;
    const headers = { cookie, origin: local.url, "content-type": FORM };
    const eventsNow = async () => ((await (await fetch(`${local.url}/events`, { headers: bearer() })).json()) as unknown[]).length;
    const before = await eventsNow();
    const data = JSON.stringify({ leaseId: "L1", nonce: NONCE });
    for (const key of [undefined, "", "not-the-key"]) {
      const body = new URLSearchParams({ name: "cp/closed", data, ...(key === undefined ? {} : { eventKey: key }) }).toString();
      const res = await raw(`${local.url}/ui/events`, { method: "POST", headers, body });
      expect(res.status, `event key ${key}`).toBe(401);
      expect(res.text).toContain("event key");
    }
    expect(await eventsNow()).toBe(before);
    expect(local.runs().find((r) => r.id === runId)!.status).toBe("running");
    const home = await raw(`${local.url}/`, { headers: { cookie } });
    expect(home.text).toMatch(/<input type="password"[^>]* name="eventKey"/);

    const ok = await raw(`${local.url}/ui/events`, { method: "POST", headers, body: new URLSearchParams({ name: "cp/closed", data, eventKey }).toString() });
    expect(ok.status).toBe(303);
    expect(await eventsNow()).toBe(before + 1);
    await waitFor("the run to end on cp/closed", () => local.runs().find((r) => r.id === runId)?.status === "completed");
  });

  it("with the credential, cancel works from the JSON route", async () => {
    await fetch(`${local.url}/e/${eventKey}`, { method: "POST", body: JSON.stringify({ name: "cp/opened", data: { leaseId: "L2" } }) });
    const run = await waitFor("second run", () => local.runs().find((r) => r.eventName === "cp/opened" && r.id !== runId));
    const res = await raw(`${local.url}/runs/${run.id}/cancel`, { method: "POST", headers: bearer() });
    expect(res.status).toBe(200);
    expect(local.runs().find((r) => r.id === run.id)!.status).toBe("cancelled");
  });
});

describe("inngest-local control plane in dev mode", () => {
  let local: InngestLocal;
  beforeAll(async () => {
    local = await startInngestLocal({ port: 0, appUrls: ["http://127.0.0.1:9/api/inngest"], syncRetryMs: 60_000, log: () => {} });
  });
  afterAll(async () => local?.close());

  it("stays open on loopback host names, with no login URL", async () => {
    expect(local.loginUrl).toBeUndefined();
    for (const host of [`127.0.0.1:${local.port}`, `localhost:${local.port}`]) {
      expect((await raw(`${local.url}/runs`, { headers: { host } })).status).toBe(200);
      expect((await raw(`${local.url}/`, { headers: { host } })).status).toBe(200);
      expect((await raw(`${local.url}/e/any`, { method: "POST", headers: { host }, body: JSON.stringify({ name: "dev/x", data: {} }) })).status).toBe(200);
    }
  });

  it("refuses a foreign Host on every route (421)", async () => {
    const routes = [["GET", "/events"], ["GET", "/runs"], ["GET", "/functions"], ["GET", "/"], ["GET", "/ui/events"], ["GET", "/dev"], ["GET", "/health"], ["POST", "/v0/gql"], ["POST", "/sync"], ["POST", "/e/any"], ["POST", "/fn/register"], ["POST", "/runs/x/cancel"], ["POST", "/ui/events"]] as const;
    const before = ((await (await fetch(`${local.url}/events`)).json()) as unknown[]).length;
    for (const [method, path] of routes) {
      const res = await raw(`${local.url}${path}`, { method, headers: { host: "rebound.example", "content-type": "application/json" }, body: method === "POST" ? JSON.stringify({ name: "dev/x", data: {} }) : undefined });
      expect(res.status, `${method} ${path}`).toBe(421);
    }
    expect(((await (await fetch(`${local.url}/events`)).json()) as unknown[]).length).toBe(before);
  });
});
