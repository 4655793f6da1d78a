// Hostile requests that only the built app sees whole: a path Next.js cannot decode, a broken
// multipart body on a page (the server-action path), server actions called by id with
// arguments the page never sends, and methods and paths Next.js itself answered with a 500
// (TRACE anywhere, a write to a built static file, the image optimizer). Each must be a clear
// 4xx (or, for an action, a refusal) that writes nothing; never a 500. PostgreSQL only, like
// every test of the running app.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ROOT, startAppServer, TEST_DIST_DIR, type AppServer } from "../../harness/app-server";
import { inferenceLease } from "@/db/schema";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";
import { headerOf, rawRequest } from "../../harness/raw-http";

if (inject("dbKind") !== "postgres") {
  throw new Error("hostile-http.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

const BOOT_TIMEOUT = 300_000;
let t: TestDb;
let app: AppServer;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  app = await startAppServer({ databaseUrl: url.toString(), name: "hostile" });
}, BOOT_TIMEOUT);
afterAll(async () => {
  await app?.stop();
  await t?.close();
});

async function snapshot() {
  const [row] = await t.db
    .select({
      invoices: sql<string>`(select string_agg(concat_ws(':', id, version, number, counterparty, issued_on, due_on, summary), ',' order by id) from invoice)`,
      leases: sql<number>`(select count(*) from inference_lease)`.mapWith(Number),
      events: sql<number>`(select count(*) from lease_event)`.mapWith(Number),
    })
    .from(sql`(select 1) as one`);
  return row!;
}

async function signedIn() {
  const user = await makeUser(t.db, "Hostile");
  const inv = await makeInvoice(t.db, user.id);
  const res = await fetch(`${app.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: user.email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  return { user, inv, cookie };
}

/** The id Next.js gave a server action in this build (server actions are callable by id). */
function actionId(file: string, name: string): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, TEST_DIST_DIR, "server", "server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { filename: string; exportedName: string }>;
  };
  const found = Object.entries(manifest.node).find(([, a]) => a.filename === file && a.exportedName === name);
  if (!found) throw new Error(`no server action ${file}#${name} in the build`);
  return found[0];
}

describe("paths Next.js cannot decode", () => {
  it("malformed percent-encoding answers 4xx, signed in or not", async () => {
    const { cookie } = await signedIn();
    for (const [method, p] of [
      ["GET", "/api/leases/%ZZ"],
      ["GET", "/api/leases/%"],
      ["GET", "/api/leases/%E0%A4%A"],
      ["GET", "/api/leases/%ZZ/events"],
      ["POST", "/api/leases/%ZZ/apply"],
      ["POST", "/api/leases/%ZZ/cancel"],
      ["GET", "/api/invoices/%ZZ"],
      ["PATCH", "/api/invoices/%ZZ"],
      ["GET", "/invoices/%ZZ"],
    ] as const) {
      for (const headers of [{}, { cookie }] as Record<string, string>[]) {
        const before = await snapshot();
        const res = await fetch(`${app.url}${p}`, {
          method,
          headers: { ...headers, ...(method === "PATCH" ? { "content-type": "application/json" } : {}) },
          body: method === "PATCH" ? JSON.stringify({ counterparty: "X" }) : undefined,
          redirect: "manual",
        });
        await res.arrayBuffer();
        expect({ method, p, status: res.status }).toEqual({ method, p, status: expect.toSatisfy((s: number) => s >= 300 && s < 500) });
        expect(await snapshot()).toEqual(before);
      }
    }
  });
});

describe("broken bodies posted to a page", () => {
  it("garbage multipart, with and without a Next-Action header, answers 4xx and writes nothing", async () => {
    const { inv, cookie } = await signedIn();
    const edit = actionId("app/invoices/[id]/actions.ts", "editInvoiceAction");
    const bodies = [
      "garbage",
      '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated',
      "--x\r\nContent-Disposition: form-data\r\n\r\n\r\n--x--\r\n",
      "--x--",
    ];
    for (const body of bodies) {
      for (const extra of [{}, { "next-action": edit }, { "next-action": "00".repeat(21) }] as Record<string, string>[]) {
        const before = await snapshot();
        const res = await fetch(`${app.url}/invoices/${inv.id}`, {
          method: "POST",
          headers: { cookie, origin: app.url, "content-type": "multipart/form-data; boundary=x", ...extra },
          body,
          redirect: "manual",
        });
        await res.arrayBuffer();
        expect({ body, extra, status: res.status }).toEqual({ body, extra, status: expect.toSatisfy((s: number) => s >= 400 && s < 500) });
        expect(await snapshot()).toEqual(before);
      }
    }
  });
});

describe("server actions called by id with arguments the page never sends", () => {
  async function callAction(id: string, page: string, cookie: string, args: unknown[]) {
    const res = await fetch(`${app.url}${page}`, {
      method: "POST",
      headers: { cookie, origin: app.url, "next-action": id, "content-type": "text/plain;charset=UTF-8", accept: "text/x-component" },
      body: JSON.stringify(args),
      redirect: "manual",
    });
    return { status: res.status, text: await res.text() };
  }

  it("the edit action with one argument, or none, or strings, is refused and writes nothing", async () => {
    const { inv, cookie } = await signedIn();
    const edit = actionId("app/invoices/[id]/actions.ts", "editInvoiceAction");
    for (const args of [[], [{}], ["x"], [null, null], [{ invoice_id: inv.id, number: "X" }], [{}, { invoice_id: inv.id }], [{}, "x"]]) {
      const before = await snapshot();
      const res = await callAction(edit, `/invoices/${inv.id}`, cookie, args);
      expect({ args, status: res.status }).toEqual({ args, status: expect.toSatisfy((s: number) => s < 500) });
      expect(res.text).not.toMatch(/Changes saved/);
      expect(await snapshot()).toEqual(before);
    }
  });

  it("every invoice action refuses a missing or foreign argument", async () => {
    const { inv, cookie } = await signedIn();
    for (const name of ["summarizeAction", "applyAction", "discardAction"]) {
      const id = actionId("app/invoices/[id]/actions.ts", name);
      for (const args of [[], [null], ["x"], [{ invoice_id: inv.id }], [[inv.id]]]) {
        const before = await snapshot();
        const res = await callAction(id, `/invoices/${inv.id}`, cookie, args);
        expect({ name, args, status: res.status }).toEqual({ name, args, status: expect.toSatisfy((s: number) => s < 500) });
        expect(await snapshot()).toEqual(before);
      }
    }
  });
});

async function readFirstChunk(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  return new TextDecoder().decode(value).slice(0, 400);
}

describe("event streams through the running server", () => {
  it("20 per session, the 21st is 429 with Retry-After, and a client that goes away frees its slot", async () => {
    const { user, inv, cookie } = await signedIn();
    // A lease waiting for review with a far deadline, written directly: no generation runs for
    // it, so nothing can close it (and so end its streams) while the cap is being counted.
    // Opened through the API, its run could end it mid-count under a loaded full run.
    const [lease] = await t.db
      .insert(inferenceLease)
      .values({
        actorId: user.id,
        invoiceId: inv.id,
        purpose: "summarize_invoice",
        status: "proposed",
        deadlineAt: sql`now() + interval '10 minutes'`,
        proposal: { summary: "Waiting for review.", model: "test" },
      })
      .returning({ id: inferenceLease.id });
    const leaseId = lease!.id;
    const clients: AbortController[] = [];
    const held: Response[] = [];
    const openStream = async () => {
      const client = new AbortController();
      clients.push(client);
      const res = await fetch(`${app.url}/api/leases/${leaseId}/events`, { headers: { cookie }, signal: client.signal });
      if (res.status !== 200) await res.arrayBuffer();
      // Held to the end: undici closes the connection of a response that is garbage
      // collected unread, which frees its slot on the server mid-count.
      held.push(res);
      return { res, client };
    };
    try {
      const first = await openStream();
      expect(first.res.status).toBe(200);
      for (let i = 1; i < 20; i++) expect((await openStream()).res.status).toBe(200);
      const refused = await openStream();
      const said = refused.res.status === 200 ? await readFirstChunk(refused.res) : "";
      expect(refused.res.status, `the 21st stream opened and said: ${said}`).toBe(429);
      expect(Number(refused.res.headers.get("retry-after"))).toBeGreaterThan(0);
      first.client.abort();
      // The server learns of the closed connection a moment later.
      let status = 429;
      while (status === 429) {
        await new Promise((r) => setTimeout(r, 100));
        const next = await openStream();
        status = next.res.status;
      }
      expect(status).toBe(200);
    } finally {
      for (const c of clients) c.abort();
    }
  });
});

describe("methods and paths Next.js answered with a 500 before our code ran", () => {
  // Every method Node's parser takes, CONNECT included, and two it does not (its own 400).
  const METHODS = [...http.METHODS, "TRACK", "FOO"];
  const UNPARSED = new Set(["TRACK", "FOO"]);
  const PAGE_ALLOWS = "GET, HEAD, OPTIONS, POST";
  const STATIC_ALLOWS = "GET, HEAD, OPTIONS";
  // CONNECT names no path: it is told every method the server serves somewhere.
  const SERVER_ALLOWS = "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT";

  function send(method: string, target: string, headers: Record<string, string> = {}) {
    const lines = [`${method} ${target} HTTP/1.1`, `host: ${new URL(app.url).host}`, "connection: close"];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    // CONNECT names an authority, not a path (RFC 9110 §9.3.6), as a proxy client sends it.
    return rawRequest(
      app.url,
      method === "CONNECT" ? lines.join("\r\n").replace(target, new URL(app.url).host) : lines.join("\r\n"),
      null,
      { timeoutMs: 5000 },
    );
  }

  /** The build's own files, as its manifest lists them. */
  function staticFiles(): string[] {
    const m = JSON.parse(fs.readFileSync(path.join(ROOT, TEST_DIST_DIR, "build-manifest.json"), "utf8")) as Record<string, unknown>;
    const files = [m.polyfillFiles, m.lowPriorityFiles, m.rootMainFiles].flat() as string[];
    expect(files.length).toBeGreaterThan(3);
    return [...new Set(files)].map((f) => `/_next/${f}`);
  }

  /** The app's routes as the build knows them: route handlers and pages, `[id]` filled in. */
  function routes(id: string): { handlers: string[]; pages: string[] } {
    const m = JSON.parse(fs.readFileSync(path.join(ROOT, TEST_DIST_DIR, "app-path-routes-manifest.json"), "utf8")) as Record<
      string,
      string
    >;
    const fill = (p: string) => p.replace(/\[[^\]]+\]/g, id);
    const entries = Object.entries(m).filter(([, p]) => !p.startsWith("/_"));
    return {
      handlers: entries.filter(([k]) => k.endsWith("/route")).map(([, p]) => fill(p)),
      pages: entries.filter(([k]) => k.endsWith("/page")).map(([, p]) => fill(p)),
    };
  }

  /** A method outside the path's Allow: 405 naming what it allows, or Node's own 400 for a method it does not parse. */
  function expectRefused(method: string, target: string, res: { status: number; head: string }, allows: string) {
    if (UNPARSED.has(method)) {
      expect({ method, target, status: res.status }).toEqual({ method, target, status: 400 });
      return;
    }
    const allow = method === "CONNECT" ? SERVER_ALLOWS : allows;
    expect({ method, target, status: res.status, allow: headerOf(res.head, "allow") }).toEqual({ method, target, status: 405, allow });
  }

  it("TRACE, CONNECT and every method the app never serves answer 405 with the path's Allow, on every kind of path", async () => {
    const { inv, cookie } = await signedIn();
    const [file] = staticFiles();
    const { handlers, pages } = routes(inv.id);
    const served = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
    const before = await snapshot();
    // TRACE first: it was a 500 on every path (undici's Request refuses it inside Next.js).
    const methods = ["TRACE", "CONNECT", ...METHODS.filter((m) => !served.has(m) && m !== "TRACE" && m !== "CONNECT")];
    for (const method of methods) {
      for (const target of ["/", ...pages, "/nowhere", "/api/nowhere", ...handlers, file!, "/_next/image?url=%2Finvoices&w=64&q=75"]) {
        for (const headers of [{}, { cookie }] as Record<string, string>[]) {
          const res = await send(method, target, headers);
          expect({ method, target, status: res.status }).toEqual({
            method,
            target,
            status: expect.toSatisfy((s: number) => s >= 400 && s < 500),
          });
          if (!UNPARSED.has(method)) expect({ method, target, status: res.status }).toEqual({ method, target, status: 405 });
          if (method === "CONNECT") expect(headerOf(res.head, "allow")).toBe(SERVER_ALLOWS);
        }
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it("a request target that is no path is 400 (`GET *` was a 500), and OPTIONS * is 204 with the server's methods", async () => {
    for (const target of ["*", "foo", new URL(app.url).host, "http:", "?x=1"]) {
      for (const method of ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"]) {
        const res = await send(method, target);
        if (method === "OPTIONS" && target === "*") {
          expect({ status: res.status, allow: headerOf(res.head, "allow") }).toEqual({ status: 204, allow: SERVER_ALLOWS });
        } else {
          expect({ method, target, status: res.status }).toEqual({ method, target, status: 400 });
        }
      }
    }
  });

  it("a write, OPTIONS or any other method on a built static file is 405 with Allow: GET, HEAD, OPTIONS; OPTIONS is 204", async () => {
    const files = staticFiles();
    for (const file of [...files, "/_next/static/chunks/not-there.js"]) {
      for (const method of METHODS) {
        const res = await send(method, file);
        if (method === "GET" || method === "HEAD") {
          expect({ method, file, status: res.status }).toEqual({ method, file, status: file.includes("not-there") ? 404 : 200 });
        } else if (method === "OPTIONS") {
          expect({ method, file, status: res.status, allow: headerOf(res.head, "allow") }).toEqual({
            method,
            file,
            status: 204,
            allow: STATIC_ALLOWS,
          });
        } else {
          expectRefused(method, file, res, STATIC_ALLOWS);
        }
      }
    }
  });

  it("the image optimizer (the app shows no next/image) answers 4xx to any query, signed in or not", async () => {
    const { cookie } = await signedIn();
    const queries = [
      "?url=%2Finvoices&w=64&q=75",
      "?url=%2Fsign-in&w=64&q=75",
      "?url=%2Ficon.svg&w=64&q=75",
      "?url=%2Fapi%2Fsession&w=16&q=1",
      "?url=http%3A%2F%2F127.0.0.1%3A1%2F&w=64&q=75",
      "?url=%2F_next%2Fimage%3Furl%3D%252Finvoices&w=64&q=75",
      "?url=%2Finvoices&w=0&q=0",
      "?url=&w=&q=",
      "?url=%ZZ&w=64&q=75",
      "",
      "?w=64",
    ];
    const before = await snapshot();
    for (const q of queries) {
      for (const headers of [{}, { cookie }, { cookie, accept: "image/avif,image/webp" }] as Record<string, string>[]) {
        for (const method of ["GET", "HEAD"]) {
          const res = await send(method, `/_next/image${q}`, headers);
          expect({ method, q, status: res.status }).toEqual({ method, q, status: expect.toSatisfy((s: number) => s === 400 || s === 404) });
        }
      }
      for (const method of METHODS.filter((m) => m !== "GET" && m !== "HEAD" && m !== "OPTIONS")) {
        expectRefused(method, `/_next/image${q}`, await send(method, `/_next/image${q}`), STATIC_ALLOWS);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  // server.mjs's gate lists each route handler's methods by hand: a route missing there (or a
  // method) would be refused as a page's, with a page's Allow. Each route's methods are read from
  // its own file, so a new route or method without its line in the gate fails here.
  it("every route handler's Allow, on OPTIONS and on a 405, is the methods its route file exports (server.mjs's gate knows them all)", async () => {
    const { inv, cookie } = await signedIn();
    const m = JSON.parse(fs.readFileSync(path.join(ROOT, TEST_DIST_DIR, "app-path-routes-manifest.json"), "utf8")) as Record<
      string,
      string
    >;
    const handlers = Object.entries(m).filter(([k, p]) => k.endsWith("/route") && p.startsWith("/api/"));
    // The routes of the purposes and the spend among them, by name.
    for (const p of ["/api/purposes", "/api/org/budget", "/api/usage", "/api/leases/[id]/changes"])
      expect(handlers.map(([, route]) => route)).toContain(p);
    for (const [key, route] of handlers) {
      const source = fs.readFileSync(path.join(ROOT, "app", `${key}.ts`), "utf8");
      const exported = [...source.matchAll(/^export (?:const|async function|function) (GET|POST|PUT|PATCH|DELETE)\b/gm)].map((x) => x[1]!);
      const allow = [...new Set([...exported, "OPTIONS", ...(exported.includes("GET") ? ["HEAD"] : [])])].sort().join(", ");
      const target = route.replace(/\[[^\]]+\]/g, inv.id);
      const options = await send("OPTIONS", target, { cookie });
      expect({ route, status: options.status, allow: headerOf(options.head, "allow") }).toEqual({ route, status: 204, allow });
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"].filter((x) => !exported.includes(x))) {
        expectRefused(method, target, await send(method, target, { cookie, origin: app.url }), allow);
      }
    }
  });

  it("every route handler and page: OPTIONS is 204 with its Allow, HEAD is no 5xx, and a method it lacks is 405 with that Allow", async () => {
    const { inv, cookie } = await signedIn();
    const { handlers, pages } = routes(inv.id);
    const before = await snapshot();
    for (const target of [...handlers, ...pages, "/nowhere"]) {
      const isHandler = handlers.includes(target);
      const options = await send("OPTIONS", target, { cookie });
      expect({ target, status: options.status }).toEqual({ target, status: 204 });
      // A route handler's Allow is Next.js's own answer, from the methods the route exports.
      const allows = headerOf(options.head, "allow");
      if (!isHandler) expect({ target, allows }).toEqual({ target, allows: PAGE_ALLOWS });
      const allowed = new Set(allows!.split(", "));
      expect({ target, allows: allowed.has("OPTIONS") }).toEqual({ target, allows: true });
      for (const headers of [{}, { cookie }] as Record<string, string>[]) {
        const head = await send("HEAD", target, headers);
        expect({ target, headers, status: head.status }).toEqual({
          target,
          headers,
          status: expect.toSatisfy((s: number) => s >= 200 && s < 500),
        });
      }
      for (const method of METHODS.filter((m) => !allowed.has(m))) {
        expectRefused(method, target, await send(method, target, { cookie }), allows!);
      }
      // And what it allows reaches the route (a method the gate in server.mjs listed wrongly
      // would be Next.js's own 405). Bodiless, so nothing is written; DELETE /api/session last.
      for (const method of [...allowed].filter((m) => m !== "OPTIONS" && !(m === "DELETE" && target === "/api/session"))) {
        const res = await send(method, target, { cookie, origin: app.url });
        expect({ method, target, status: res.status }).toEqual({
          method,
          target,
          status: expect.toSatisfy((s: number) => s !== 405 && s < 500),
        });
      }
    }
    const signOut = await send("DELETE", "/api/session", { cookie, origin: app.url });
    expect(signOut.status).toBe(200);
    expect(await snapshot()).toEqual(before);
  });
});
