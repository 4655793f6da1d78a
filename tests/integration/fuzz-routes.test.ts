// Fuzzing the HTTP API through its route handlers, on both databases (issue 8, §3): every
// route gets generated hostile requests (methods, path ids, cookies, content types, lying
// content lengths, Origins, bodies of wrong types, huge and empty strings, NUL and lone
// surrogates, deep and duplicate-key JSON, out-of-range numbers and dates, extra keys), mixed
// with valid ones so the writes the contract allows happen too. For every input: no 5xx, no
// success without a session, and the database changed only as the contract allows for that
// call (tests/support/fuzz.ts), checked row by row and by snapshot. What the built app alone
// sees (raw bytes on the wire, path encodings, server actions) is in fuzz-http.pg.test.ts.
//
// Replay a failure with the seed and path fast-check prints: FUZZ_SEED=<seed> FUZZ_PATH=<path>.
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as sessionRoute from "@/app/api/session/route";
import * as invoicesRoute from "@/app/api/invoices/route";
import * as invoiceRoute from "@/app/api/invoices/[id]/route";
import * as leasesRoute from "@/app/api/leases/route";
import * as leaseRoute from "@/app/api/leases/[id]/route";
import * as applyRoute from "@/app/api/leases/[id]/apply/route";
import * as cancelRoute from "@/app/api/leases/[id]/cancel/route";
import * as eventsRoute from "@/app/api/leases/[id]/events/route";
import { cookieFrom } from "../support/api";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../support/db";
import {
  anyJson,
  apiViolations,
  auditMark,
  EXTRA_KEYS,
  Histogram,
  installAudit,
  label,
  nastyDate,
  nastyNumber,
  nastyString,
  rawBytes,
  rawJson,
  Ref,
  ref,
  resolveRefs,
  rowsOf,
  snapshot,
  World,
  writesSince,
  type ApiRoute,
} from "../support/fuzz";

/** Inputs per database: with the PGlite and PostgreSQL passes and fuzz-http.pg.test.ts, over 5,000 per `npm test`. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1600);

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const HANDLERS: Record<ApiRoute, Record<string, Handler | undefined>> = {
  session: sessionRoute as never,
  invoices: invoicesRoute as never,
  invoice: invoiceRoute as never,
  leases: leasesRoute as never,
  lease: leaseRoute as never,
  apply: applyRoute as never,
  cancel: cancelRoute as never,
  events: eventsRoute as never,
};
const PATHS: Record<ApiRoute, (id: string) => string> = {
  session: () => "/api/session",
  invoices: () => "/api/invoices",
  invoice: (id) => `/api/invoices/${id}`,
  leases: () => "/api/leases",
  lease: (id) => `/api/leases/${id}`,
  apply: (id) => `/api/leases/${id}/apply`,
  cancel: (id) => `/api/leases/${id}/cancel`,
  events: (id) => `/api/leases/${id}/events`,
};
const ORIGIN = "http://127.0.0.1:3000";

// ---------------------------------------------------------------------------------------
// The model of a hostile request

type Body = { kind: "none" } | { kind: "json"; value: unknown } | { kind: "raw"; text: string } | { kind: "bytes"; bytes: Uint8Array };
type CookieModel =
  | { kind: "owner" | "other" | "none" | "revoked" | "both" }
  | { kind: "tampered"; at: number; char: string }
  | { kind: "garbage"; value: string };
type FuzzRequest = {
  route: ApiRoute;
  method: string;
  id: Ref | string;
  cookie: CookieModel;
  contentType: string | null;
  contentLength: "omit" | "true" | "zero" | "short" | "long" | "huge" | "nan" | "negative" | "list";
  origin: "none" | "own" | "foreign" | "null" | "garbage" | "port" | "upper";
  body: Body;
};

const ascii = fc.string({ unit: "grapheme-ascii", maxLength: 40 });
const leaseId = fc.oneof(
  { weight: 8, arbitrary: ref("lease:open", "lease:proposed", "lease:overdue", "lease:terminal", "lease:other", "uuid:missing") },
  { weight: 2, arbitrary: fc.oneof(fc.uuid(), nastyString, ref("inv:own0")) },
);
const invoiceId = fc.oneof(
  { weight: 8, arbitrary: ref("inv:own0", "inv:own2", "inv:other", "uuid:missing", "lease:open") },
  { weight: 2, arbitrary: fc.oneof(fc.uuid(), nastyString) },
);

const cookie: fc.Arbitrary<CookieModel> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ kind: "owner" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "other" as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: "none" as const }, { kind: "revoked" as const }, { kind: "both" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tampered" as const), at: fc.nat(), char: fc.constantFrom("A", "_", "-", "*", "~", "0", "%", "=") }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("garbage" as const), value: ascii.map((s) => s.replace(/[;,]/g, "")) }) },
);

const contentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  { weight: 3, arbitrary: fc.constant(null) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "Application/JSON",
      "application/json;",
      "application/json; charset=iso-8859-1",
      "text/plain",
      "text/plain;charset=UTF-8",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonp",
      "application/vnd.api+json",
      "",
      " ",
      "*/*",
      "application/json, text/plain",
      "json",
    ),
  },
);

const contentLength = fc.oneof(
  { weight: 10, arbitrary: fc.constant("omit" as const) },
  { weight: 3, arbitrary: fc.constantFrom("true" as const, "zero" as const, "short" as const, "long" as const, "huge" as const, "nan" as const, "negative" as const, "list" as const) },
);

const origin = fc.oneof(
  { weight: 10, arbitrary: fc.constant("none" as const) },
  { weight: 3, arbitrary: fc.constant("own" as const) },
  { weight: 3, arbitrary: fc.constantFrom("foreign" as const, "null" as const, "garbage" as const, "port" as const, "upper" as const) },
);

/** A body for a route whose fields are `fields`, each with its own valid and hostile values. */
function jsonBody(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Body> {
  const record = fc.record(fields, { requiredKeys: [] });
  const extras = fc.dictionary(fc.constantFrom(...EXTRA_KEYS), fc.oneof(anyJson, ref("inv:own0", "lease:open", "uuid:missing")), { maxKeys: 3 });
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(record, extras).map(([r, e]) => ({ kind: "json" as const, value: { ...e, ...r } })) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: "json" as const, value })) },
    { weight: 3, arbitrary: rawJson(Object.keys(fields)).map((text) => ({ kind: "raw" as const, text })) },
    { weight: 1, arbitrary: rawBytes.map((bytes) => ({ kind: "bytes" as const, bytes })) },
    { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
  );
}
const some = <T>(valid: fc.Arbitrary<T>, ...hostile: fc.Arbitrary<unknown>[]) =>
  fc.oneof({ weight: 4, arbitrary: valid as fc.Arbitrary<unknown> }, { weight: 3, arbitrary: fc.oneof(...hostile) });

const SIGN_IN = jsonBody({
  email: some(ref("email:owner", "email:other"), nastyString, anyJson, fc.emailAddress()),
  password: some(ref("password"), nastyString, anyJson, fc.constant("wrong password")),
});
const PATCH = jsonBody({
  number: some(fc.constantFrom("INV-9", " INV-10 ", "A"), nastyString, anyJson),
  counterparty: some(fc.constantFrom("Contoso", " Fabrikam  "), nastyString, anyJson),
  issued_on: some(fc.constantFrom("2026-10-01", "2026-11-01"), nastyDate, anyJson),
  due_on: some(fc.constantFrom("2026-12-31", "2027-01-15", "1900-01-01", "2199-12-31"), nastyDate, anyJson),
  expected_version: some(ref("version:own0", "version:own2"), nastyNumber, anyJson),
});
const OPEN = jsonBody({
  invoice_id: some(ref("inv:free", "inv:own0", "inv:own1", "inv:other", "uuid:missing"), fc.uuid(), nastyString, anyJson),
  purpose: some(fc.constant("summarize_invoice"), fc.constantFrom("SUMMARIZE_INVOICE", "summarize_invoice ", "translate"), nastyString, anyJson),
});
const ANY_BODY = jsonBody({ reason: anyJson });

const ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/**
 * Requests for one route: half hostile in every part at once, half a valid request of the
 * owner with at most its body or id hostile, so the writes the contract allows happen too.
 */
function request(
  route: ApiRoute,
  methods: string[],
  id: fc.Arbitrary<Ref | string>,
  body: fc.Arbitrary<Body>,
  valid: { id: fc.Arbitrary<Ref | string>; body: fc.Arbitrary<Body> },
): fc.Arbitrary<FuzzRequest> {
  const hostile = fc.record({
    route: fc.constant(route),
    method: fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...methods) }, { weight: 1, arbitrary: fc.constantFrom(...ALL_METHODS) }),
    id,
    cookie,
    contentType,
    contentLength,
    origin,
    body,
  });
  const near = fc.record({
    route: fc.constant(route),
    method: fc.constantFrom(...methods),
    id: fc.oneof({ weight: 4, arbitrary: valid.id }, { weight: 1, arbitrary: id }),
    cookie: fc.oneof({ weight: 6, arbitrary: fc.constant({ kind: "owner" as const }) }, { weight: 1, arbitrary: cookie }),
    contentType: fc.constant("application/json"),
    contentLength: fc.constantFrom("omit" as const, "true" as const),
    origin: fc.constantFrom("none" as const, "own" as const),
    body: fc.oneof({ weight: 3, arbitrary: valid.body }, { weight: 1, arbitrary: body }),
  });
  return fc.oneof(hostile, near);
}

const json = <T>(value: fc.Arbitrary<T>): fc.Arbitrary<Body> => value.map((v) => ({ kind: "json" as const, value: v }));
const NO_ID = fc.constant("");
const OWN_LEASE = ref("lease:open", "lease:proposed", "lease:proposed", "lease:overdue", "lease:terminal");

const REQUESTS = fc.oneof(
  {
    weight: 3,
    arbitrary: request("session", ["POST", "POST", "GET", "DELETE"], NO_ID, SIGN_IN, {
      id: NO_ID,
      body: json(fc.record({ email: ref("email:owner", "email:other"), password: ref("password") })),
    }),
  },
  { weight: 1, arbitrary: request("invoices", ["GET"], NO_ID, ANY_BODY, { id: NO_ID, body: fc.constant({ kind: "none" as const }) }) },
  {
    weight: 4,
    arbitrary: request("invoice", ["GET", "PATCH", "PATCH", "PATCH"], invoiceId, PATCH, {
      id: ref("inv:own0", "inv:own2"),
      body: json(
        fc.record(
          {
            number: fc.constantFrom("INV-9", " INV-10 "),
            counterparty: fc.constantFrom("Contoso", " Fabrikam  "),
            issued_on: fc.constantFrom("2026-10-01", "2026-11-01"),
            due_on: fc.constantFrom("2026-12-31", "2027-01-15"),
            expected_version: ref("version:own0", "version:own2"),
          },
          { requiredKeys: ["counterparty"] },
        ),
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: request("leases", ["POST"], NO_ID, OPEN, {
      id: NO_ID,
      body: json(fc.record({ invoice_id: ref("inv:free", "inv:free", "inv:own0"), purpose: fc.constant("summarize_invoice") })),
    }),
  },
  { weight: 2, arbitrary: request("lease", ["GET"], leaseId, ANY_BODY, { id: OWN_LEASE, body: fc.constant({ kind: "none" as const }) }) },
  { weight: 3, arbitrary: request("apply", ["POST"], leaseId, ANY_BODY, { id: OWN_LEASE, body: fc.constant({ kind: "none" as const }) }) },
  { weight: 3, arbitrary: request("cancel", ["POST"], leaseId, ANY_BODY, { id: OWN_LEASE, body: fc.constant({ kind: "none" as const }) }) },
  { weight: 1, arbitrary: request("events", ["GET"], leaseId, ANY_BODY, { id: OWN_LEASE, body: fc.constant({ kind: "none" as const }) }) },
);

// ---------------------------------------------------------------------------------------
// Sending one, straight to the route handler

let t: TestDb;
let world: World;
let revokedCookie: string;
const histogram = new Histogram();

async function signInThroughRoute(email: string) {
  const res = await sessionRoute.POST(
    new Request(`${ORIGIN}/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: PASSWORD }) }),
  );
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const [row] = rowsOf<{ id: string }>(
    await t.db.execute(sql`select s.id from app_session s join app_user u on u.id = s.user_id where u.email = ${email} order by s.created_at desc limit 1`),
  );
  return { cookie: cookieFrom(res.headers), sessionId: row!.id };
}

beforeAll(async () => {
  t = await openTestDb();
  await installAudit(t.db);
  const alice = await makeUser(t.db, "Alice");
  const bob = await makeUser(t.db, "Bob");
  const own = [];
  for (let i = 0; i < 4; i++) own.push((await makeInvoice(t.db, alice.id)).id);
  const other = (await makeInvoice(t.db, bob.id)).id;
  const a = await signInThroughRoute(alice.email);
  const b = await signInThroughRoute(bob.email);
  world = new World(t.db, { id: alice.id, email: alice.email, ...a }, { id: bob.id, email: bob.email, ...b }, own, other, signInThroughRoute, PASSWORD);
  // A cookie whose session was signed out.
  revokedCookie = (await signInThroughRoute(alice.email)).cookie;
  await sessionRoute.DELETE(new Request(`${ORIGIN}/api/session`, { method: "DELETE", headers: { cookie: revokedCookie } }), { params: Promise.resolve({}) });
});
afterAll(async () => {
  console.info(`[fuzz-routes] ${histogram.total} inputs on ${t?.kind}; statuses per route:\n${histogram.toString()}`);
  await t?.close();
});

function cookieHeader(c: CookieModel): { header: string | null; actor: { id: string; sessionId: string } | null } {
  const owner = world.owner;
  switch (c.kind) {
    case "owner":
      return { header: owner.cookie, actor: { id: owner.id, sessionId: owner.sessionId } };
    case "other":
      return { header: world.other.cookie, actor: { id: world.other.id, sessionId: world.other.sessionId } };
    case "none":
      return { header: null, actor: null };
    case "revoked":
      return { header: revokedCookie, actor: null };
    case "both":
      // Two session cookies: the first one counts (RFC 6265 order), so the owner's.
      return { header: `${owner.cookie}; ${world.other.cookie}`, actor: { id: owner.id, sessionId: owner.sessionId } };
    case "tampered": {
      const [name, value = ""] = owner.cookie.split(/=(.*)/s);
      const i = c.at % Math.max(1, value.length);
      const changed = value.slice(0, i) + (value[i] === c.char ? "B" : c.char) + value.slice(i + 1);
      return { header: `${name}=${changed}`, actor: null };
    }
    case "garbage":
      return { header: `claimcheck_session=${c.value}`, actor: null };
  }
}

const encodeSegment = (s: string) => encodeURIComponent((s as unknown as { toWellFormed(): string }).toWellFormed());

type Sent = { status: number; answer: any; input: any; param: string; actor: { id: string; sessionId: string } | null; emailUser: string | null };
type Prepared = { handler: Handler; req: Request; param: string; input: any; actor: Sent["actor"]; emailUser: string | null };

/** Resolves the request's references (making fixtures as needed) and builds it; null for a method the route lacks. */
async function prepare(r: FuzzRequest): Promise<Prepared | null> {
  const handler = HANDLERS[r.route][r.method];
  await world.liveSessions();
  if (r.route === "session" && r.method === "POST") await t.db.execute(sql`delete from rate_limit`);
  const lookup = (name: Parameters<World["lookup"]>[0]) => world.lookup(name);
  const param = String(await resolveRefs(r.id, lookup));
  const body = r.body.kind === "json" ? { ...r.body, value: await resolveRefs(r.body.value, lookup) } : r.body;
  if (!handler) return null; // Next.js answers 405 for a method the route does not export.

  const { header, actor } = cookieHeader(r.cookie);
  const headers = new Headers();
  if (header) headers.set("cookie", header);
  if (r.contentType !== null) headers.set("content-type", r.contentType);
  const origins = { own: ORIGIN, foreign: "https://evil.example", null: "null", garbage: "::not a url::", port: "http://127.0.0.1:3001", upper: "HTTP://127.0.0.1:3000" };
  if (r.origin !== "none") headers.set("origin", origins[r.origin]);
  const bytes =
    body.kind === "json"
      ? new TextEncoder().encode(JSON.stringify(body.value) ?? "")
      : body.kind === "raw"
        ? new TextEncoder().encode(body.text)
        : body.kind === "bytes"
          ? body.bytes
          : null;
  const hasBody = bytes !== null && r.method !== "GET" && r.method !== "HEAD";
  const n = hasBody ? bytes.byteLength : 0;
  const lengths = { true: n, zero: 0, short: Math.max(0, n - 1), long: n + 1, huge: 99_999_999_999, nan: "abc", negative: -1, list: `${n}, ${n}` };
  if (r.contentLength !== "omit") headers.set("content-length", String(lengths[r.contentLength]));

  const req = new Request(`${ORIGIN}${PATHS[r.route](encodeSegment(param))}`, {
    method: r.method,
    headers,
    body: hasBody ? (bytes as Uint8Array<ArrayBuffer>) : undefined,
  });
  let input: any;
  try {
    input = hasBody ? JSON.parse(new TextDecoder().decode(bytes)) : undefined;
  } catch {
    input = undefined;
  }
  const email = typeof input?.email === "string" ? input.email.trim().toLowerCase() : null;
  const emailUser = email === world.owner.email ? world.owner.id : email === world.other.email ? world.other.id : null;
  return { handler, req, param, input, actor, emailUser };
}

async function fire(p: Prepared): Promise<{ status: number; answer: any }> {
  try {
    const res = await p.handler(p.req, { params: Promise.resolve({ id: p.param }) });
    if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
      // The first chunk, then go away as a client would.
      const reader = res.body!.getReader();
      await reader.read();
      await reader.cancel();
      return { status: res.status, answer: null };
    }
    const text = await res.text();
    try {
      return { status: res.status, answer: text ? JSON.parse(text) : null };
    } catch {
      return { status: res.status, answer: text.slice(0, 200) };
    }
  } catch (error) {
    // A handler that throws is a 500 in Next.js.
    return { status: 500, answer: String(error) };
  }
}

async function check(r: FuzzRequest) {
  const route = `${r.method} ${PATHS[r.route](":id")}`;
  const p = await prepare(r);
  if (!p) return histogram.add(route, 405);
  const mark = await auditMark(t.db);
  const before = await snapshot(t.db);
  const { status, answer } = await fire(p);
  const writes = await writesSince(t.db, mark);
  const after = await snapshot(t.db);
  histogram.add(route, status);
  const sent: Sent = { status, answer, input: p.input, param: p.param, actor: p.actor, emailUser: p.emailUser };
  const problems = apiViolations({ route: r.route, method: r.method, ...sent }, writes);
  if (r.route === "session" && r.method === "POST" && status === 200 && answer?.actor?.id !== p.emailUser) {
    problems.push(`signed in as ${answer?.actor?.id} with the email of ${p.emailUser}`);
  }
  if (writes.length === 0 && JSON.stringify(after) !== JSON.stringify(before)) problems.push("the snapshot changed with no write recorded");
  expect(problems, `${r.method} ${PATHS[r.route](p.param)} → ${status} ${JSON.stringify(answer)}; writes: ${JSON.stringify(writes.map(label))}`).toEqual([]);
}

const replay = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH } : {};

describe("fuzz: the API's route handlers", () => {
  it(`${RUNS} generated requests: never a 5xx, and only the writes the contract allows`, async () => {
    await fc.assert(fc.asyncProperty(REQUESTS, check), { numRuns: RUNS, ...replay });
  }, 600_000);
});
