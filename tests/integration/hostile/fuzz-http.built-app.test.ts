// Fuzzing the built app over the wire (decision 0016): what only the real server sees. Requests
// are written byte by byte on a socket, so they can lie about their length (up and down),
// carry raw bytes, odd path encodings and headers Next.js itself reads (RSC, router state,
// Next-Action); server actions are called by id with generated arguments in each encoding
// React and Next.js accept; /api/inngest must answer 401 to anything unsigned; every method
// Node parses (TRACE, CONNECT, WebDAV's...) goes to every kind of path, the build's static
// files and the image optimizer among them, and a 405 must say what is allowed. For every
// input: no 5xx (a request the server never answers is no 5xx, but must write nothing), no
// "request failed" line in the app's log, and only the writes the contract allows (a
// generation the app runs on its own may propose meanwhile). PostgreSQL only.
//
// Replay a failure with the seed and path fast-check prints: FUZZ_SEED=<seed> FUZZ_PATH=<path>.
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ROOT, startAppServer, TEST_DIST_DIR, type AppServer } from "../../harness/app-server";
import { joinOrgOf, makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";
import {
  anyJson,
  apiViolations,
  applyWrites,
  auditMark,
  disguise,
  Histogram,
  hugeString,
  installAudit,
  label,
  LANE_PURPOSE,
  matchesOneOf,
  nastyString,
  rawBytes,
  Ref,
  ref,
  resolveRefs,
  rowsOf,
  snapshot,
  withoutAllowedSideWrites,
  withoutWithdrawals,
  World,
  writesSince,
  type ApiRoute,
  type RefName,
  type Write,
} from "../../support/fuzz";
import { PATHS, REQUESTS, type CookieModel, type FuzzRequest } from "../../support/fuzz-requests";
import { headerOf, rawRequest as rawRequestTo } from "../../harness/raw-http";

if (inject("dbKind") !== "postgres") {
  throw new Error("fuzz-http.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

/** In the PostgreSQL pass of `npm test`: with fuzz-routes.test.ts's 2,500 per database, 6,500 inputs per CI run. */
const RUNS = Number(process.env.FUZZ_HTTP_RUNS ?? 1500);
const BOOT_TIMEOUT = 300_000;

let t: TestDb;
let app: AppServer;
let world: World;
let revokedCookie: string;
let actionIds: Record<ActionName, string>;
const histogram = new Histogram();
/** What the lane's actions and the approvals stream did, printed at the end (not required: some 20 of each a run). */
const reached = new Map<string, number>();
const note = (what: string) => reached.set(what, (reached.get(what) ?? 0) + 1);

type ActionName =
  "signIn" | "signOut" | "signOutCheck" | "summarize" | "apply" | "discard" | "cancel" | "edit" | "submit" | "approve" | "decline";
/** The four-eyes lane's actions (0078, 0086): each held to what its route may write. */
const LANE_ACTIONS = { submit: "submit", approve: "approve", decline: "decline" } as const satisfies Partial<Record<ActionName, ApiRoute>>;
type LaneAction = keyof typeof LANE_ACTIONS;
const isLaneAction = (a: string): a is LaneAction => a in LANE_ACTIONS;
const ACTION_FILES: Record<ActionName, [string, string]> = {
  signIn: ["app/sign-in/actions.ts", "signInAction"],
  signOut: ["app/actions.ts", "signOutAction"],
  signOutCheck: ["app/actions.ts", "signOutCheck"],
  summarize: ["app/invoices/[id]/actions.ts", "summarizeAction"],
  apply: ["app/invoices/[id]/actions.ts", "applyAction"],
  discard: ["app/invoices/[id]/actions.ts", "discardAction"],
  cancel: ["app/invoices/[id]/actions.ts", "cancelAction"],
  edit: ["app/invoices/[id]/actions.ts", "editInvoiceAction"],
  submit: ["app/invoices/[id]/actions.ts", "submitAction"],
  approve: ["app/approvals/[id]/actions.ts", "approveAction"],
  decline: ["app/approvals/[id]/actions.ts", "declineAction"],
};

function readActionIds(): Record<ActionName, string> {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, TEST_DIST_DIR, "server", "server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { filename: string; exportedName: string }>;
  };
  const out = {} as Record<ActionName, string>;
  for (const [name, [file, exported]] of Object.entries(ACTION_FILES) as [ActionName, [string, string]][]) {
    const found = Object.entries(manifest.node).find(([, a]) => a.filename === file && a.exportedName === exported);
    if (!found) throw new Error(`no server action ${file}#${exported} in the build`);
    out[name] = found[0];
  }
  return out;
}

async function signInOverHttp(email: string) {
  const res = await fetch(`${app.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  // The session cookie alone: the fuzzer's tampered and garbage cookies change it, and the
  // device cookie beside it names no session.
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .filter((c) => c.startsWith("claimcheck_session="))
    .join("; ");
  const [row] = rowsOf<{ id: string }>(
    await t.db.execute(
      sql`select s.id from app_session s join app_user u on u.id = s.user_id where u.email = ${email} order by s.created_at desc limit 1`,
    ),
  );
  return { cookie, sessionId: row!.id };
}

beforeAll(async () => {
  t = await openTestDb();
  await installAudit(t.db);
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  // Calls priced, so reservations and spend are real cents and a cap bites after a few opens.
  app = await startAppServer({ databaseUrl: url.toString(), name: "fuzz", env: { MODEL_PRICE_PER_MTOK: "1000,2000" } });
  actionIds = readActionIds();
  builtFiles = staticFiles();
  const alice = await makeUser(t.db, "Alice");
  const bob = await makeUser(t.db, "Bob");
  const own = [];
  for (let i = 0; i < 4; i++) own.push((await makeInvoice(t.db, alice.id)).id);
  const other = (await makeInvoice(t.db, bob.id)).id;
  // Alice's teammates, each with an invoice of their own: Dave, a member, and Carol, an approver.
  const dave = await makeUser(t.db, "Dave");
  await joinOrgOf(t.db, dave, alice, "member");
  const daves = (await makeInvoice(t.db, dave.id)).id;
  const carol = await makeUser(t.db, "Carol");
  await joinOrgOf(t.db, carol, alice, "approver");
  const carols = (await makeInvoice(t.db, carol.id)).id;
  const a = await signInOverHttp(alice.email);
  const b = await signInOverHttp(bob.email);
  const d = await signInOverHttp(dave.email);
  const c = await signInOverHttp(carol.email);
  world = new World(
    t.db,
    { id: alice.id, email: alice.email, ...a },
    { id: bob.id, email: bob.email, ...b },
    own,
    other,
    signInOverHttp,
    PASSWORD,
    { id: dave.id, email: dave.email, invoice: daves, ...d },
    { id: carol.id, email: carol.email, invoice: carols, ...c },
  );
  // Alice's organization starts under a daily cap below one call's reservation (several dollars at
  // this price): its first open is admitted, and from then on (reserved, then spent, and the
  // fixtures' leases holding theirs) opens are refused 429 budget_exhausted until a PUT of the
  // budget lifts it (the fixtures' own opens lift it for themselves: World.open). With a cap of
  // about three reservations, 0 of 52 opens were refused: only some 6 in a run reach the check.
  await t.db.execute(
    sql`insert into org_budget (org_id, organization_daily_cents) select org_id, 100 from membership where user_id = ${alice.id}`,
  );
  // The lane reachable (0078): each organization's admin puts the lane's purpose under four_eyes
  // through the route (the fixtures put it back when a request sets it to self).
  for (const admin of [world.owner, world.other]) {
    const res = await fetch(`${app.url}/api/org/policies/${LANE_PURPOSE}`, {
      method: "PUT",
      headers: { cookie: admin.cookie, "content-type": "application/json" },
      body: JSON.stringify({ apply: "four_eyes", review_hours: 720 }),
    });
    if (res.status !== 200) throw new Error(`policy not set: ${res.status} ${await res.text()}`);
  }
  revokedCookie = (await signInOverHttp(alice.email)).cookie;
  await fetch(`${app.url}/api/session`, { method: "DELETE", headers: { cookie: revokedCookie } });
}, BOOT_TIMEOUT);
afterAll(async () => {
  console.info(
    `[fuzz-http] ${histogram.total} inputs through the built app on ${t?.kind}; ${budgetRefusals} opens refused over budget; ${creditedLate} requests with an unframed body wrote after their own check (credited to them); statuses per route (0: no answer):\n${histogram.toString()}`,
  );
  console.info(`[fuzz-http] the lane's actions and the approvals stream: ${JSON.stringify(Object.fromEntries([...reached].sort()))}`);
  await app?.stop();
  await t?.close();
});

// Requests written byte by byte to the app (tests/harness/raw-http.ts).
const rawRequest = (head: string, body: Uint8Array | null, opts?: Parameters<typeof rawRequestTo>[3]) =>
  rawRequestTo(app.url, head, body, opts);

// ---------------------------------------------------------------------------------------
// Hostile parts only the wire carries

type PathStyle = "plain" | "encoded" | "double" | "badpct" | "overlong" | "slash" | "matrix" | "query" | "dotdot" | "utf8" | "huge";
const pathStyle = fc.oneof(
  { weight: 12, arbitrary: fc.constant<PathStyle>("plain") },
  {
    weight: 3,
    arbitrary: fc.constantFrom<PathStyle>("encoded", "double", "badpct", "overlong", "slash", "matrix", "query", "dotdot", "utf8", "huge"),
  },
);

/** The id segment as written on the wire, and as the handler should see it decoded. */
function writeSegment(id: string, style: PathStyle): { wire: string; decoded: string } {
  const enc = (s: string) => encodeURIComponent((s as unknown as { toWellFormed(): string }).toWellFormed());
  const all = (s: string) => [...Buffer.from(s, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join("");
  const plain = enc(id);
  switch (style) {
    case "plain":
      return { wire: plain, decoded: id };
    case "encoded":
      return { wire: all(id), decoded: id };
    case "double":
      return { wire: all(id).replaceAll("%", "%25"), decoded: all(id) };
    case "badpct":
      return { wire: `${plain}%ZZ`, decoded: "" };
    case "overlong":
      return { wire: `${plain}%C0%AE%C0%AE`, decoded: "" };
    case "slash":
      return { wire: `${plain}/`, decoded: id };
    case "matrix":
      return { wire: `${plain};x=1`, decoded: `${id};x=1` };
    case "query":
      return { wire: `${plain}?id=${plain}&id=x`, decoded: id };
    case "dotdot":
      return { wire: `${plain}/..%2F..%2Fsession`, decoded: "" };
    case "utf8":
      return { wire: Buffer.from(`${id}é`, "utf8").toString("latin1"), decoded: `${id}é` };
    case "huge":
      return { wire: `${plain}${"a".repeat(12_000)}`, decoded: `${id}${"a".repeat(12_000)}` };
  }
}

type LengthLie = "honest" | "omit" | "short" | "long" | "huge" | "zero" | "twice" | "chunked-lie" | "chunked";
const lengthLie = fc.oneof(
  { weight: 10, arbitrary: fc.constant<LengthLie>("honest") },
  { weight: 4, arbitrary: fc.constantFrom<LengthLie>("omit", "short", "long", "huge", "zero", "twice", "chunked-lie", "chunked") },
);

// A header value as a client can put it on the wire: latin1, no line breaks.
const wireValue = (s: string) =>
  Buffer.from((s as unknown as { toWellFormed(): string }).toWellFormed(), "utf8")
    .toString("latin1")
    .replace(/[\r\n]/g, "");
// Next.js's client router state (FlightRouterState): well-formed trees, and trees broken in
// each way Next's own parser refuses (it answered 500 to all of them before proxy.ts checked).
const segment = fc.oneof(
  fc.constantFrom("", "__PAGE__", "invoices", "(group)", "@modal"),
  fc.tuple(
    fc.constantFrom("id", "x"),
    fc.string({ maxLength: 8 }),
    fc.constantFrom("d", "c", "oc", "ci(..)"),
    fc.oneof(fc.constant(null), fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })),
  ),
);
/** A router state tree at most `depth` levels deep. */
const treeOf = (depth: number): fc.Arbitrary<unknown[]> =>
  fc
    .tuple(
      segment,
      depth === 0 ? fc.constant({}) : fc.dictionary(fc.constantFrom("children", "modal", "__proto__"), treeOf(depth - 1), { maxKeys: 2 }),
      fc.option(fc.tuple(fc.constant("/invoices"), fc.constant("/invoices")), { nil: undefined }),
      fc.option(fc.constantFrom("refetch", "inside-shared-layout", "metadata-only", null), { nil: undefined }),
    )
    .map(([seg, kids, url, refresh]) =>
      refresh !== undefined ? [seg, kids, url ?? null, refresh] : url !== undefined ? [seg, kids, url] : [seg, kids],
    );
const routerTree = treeOf(3);
const brokenTree: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "%7B%22a%22",
    "not json",
    "%ZZ",
    "{}",
    "[]",
    "null",
    '""',
    "[1]",
    '["",[]]',
    '["",{},1]',
    '["",{},null,"nope"]',
    '["",{},null,null,"x"]',
    '["",{},null,null,null,null]',
    '["",{},null,null,1,"",0]',
    '[["a","b","zz",null],{}]',
    '[["a","b","d"],{}]',
    '["",{"children":1}]',
    `${'["",{"c":'.repeat(1500)}`,
    "%".repeat(100),
    "[".repeat(50_000),
  ),
  nastyString,
  routerTree.map((t) => JSON.stringify(t).slice(0, -1)),
  routerTree.map((t) => JSON.stringify([...t, "extra", 1])),
  routerTree.map((t) => JSON.stringify([t])),
);
const routerState: fc.Arbitrary<string> = fc.oneof(
  routerTree.map((t) => encodeURIComponent(JSON.stringify(t))),
  routerTree.map((t) => JSON.stringify(t)),
  brokenTree.map((b) => encodeURIComponent((b as unknown as { toWellFormed(): string }).toWellFormed())),
  brokenTree.map(wireValue),
);
const oddValue = fc.oneof(
  fc.constantFrom("1", "0", "2", "", "true", "1, 1", "/_tree", "/", "/%ZZ", "/../..", "__PAGE__"),
  nastyString.map(wireValue),
);
/** Next.js's own request headers with generated values, one or several at once. */
const routerHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    rsc: oddValue,
    "next-router-state-tree": routerState,
    "next-router-prefetch": oddValue,
    "next-router-segment-prefetch": oddValue,
    "next-hmr-refresh": oddValue,
    "next-url": oddValue,
    "next-action": fc.oneof(
      fc.constantFrom("00".repeat(21), "x", ""),
      nastyString.map(wireValue),
      fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 40, maxLength: 44 }),
    ),
    "next-test-fetch-priority": oddValue,
  },
  { requiredKeys: [] },
);

const nextHeaders = fc.oneof(
  { weight: 10, arbitrary: fc.constant<Record<string, string>>({}) },
  { weight: 3, arbitrary: routerHeaders },
  {
    weight: 4,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { rsc: "1" },
      { "next-router-prefetch": "1", rsc: "1" },
      { "next-router-segment-prefetch": "/_tree", rsc: "1" },
      { "next-action": "x" },
      { "next-action": "00".repeat(21) },
      { "next-url": "/%ZZ" },
      { "x-forwarded-host": "evil.example" },
      { "x-forwarded-proto": "javascript" },
      { "x-forwarded-for": "1.2.3.4, ::1, garbage" },
      { accept: "text/x-component" },
      { "content-encoding": "gzip" },
      { expect: "100-continue" },
      { host: "evil.example" },
      { host: "" },
      { "x-middleware-subrequest": "middleware:middleware:middleware:middleware:middleware" },
      { "x-nextjs-data": "1" },
      { "x-invoke-path": "/api/session" },
      { range: "bytes=0-1" },
    ),
  },
);

// ---------------------------------------------------------------------------------------
// Server actions

// reply-form / reply-text: React's encodeReply (the arguments' root at field "0", or the whole
// body as JSON text); mpa: a plain form post naming the action in a field; garbage: bytes
// under a multipart type; raw-form: a multipart body written by hand, so field values can be
// what FormData cannot carry (invalid UTF-8, NUL bytes, megabyte strings); reply-json: the
// arguments as any JSON at all (wrong types, lone surrogates as \ud800 escapes).
type ActionEncoding = "reply-form" | "reply-text" | "mpa" | "garbage" | "raw-form" | "reply-json";
type ActionCall = {
  kind: "action";
  action: ActionName | "unknown";
  page: "own" | "sign-in" | "invoices" | "root";
  encoding: ActionEncoding;
  prev: unknown;
  fields: Record<string, unknown>;
  rootModel: string | null; // a hostile "0" entry in place of the right one
  cookie: CookieModel;
  origin: "own" | "none" | "foreign" | "null";
  contentType: "right" | "text/plain" | "application/json" | "none" | "form";
  garbage: Uint8Array;
  /** For raw-form: each field's bytes. */
  raw: [string, Uint8Array][];
  /** For reply-json: the arguments list. */
  json: unknown[];
};

const REACT_TAGS = [
  "$undefined",
  "$@1",
  "$Q1",
  "$W1",
  "$K9",
  "$h1",
  "$T",
  "$B1",
  "$n1e400",
  "$D",
  "$Dnot-a-date",
  "$1:0:0",
  "$S",
  "$Infinity",
  "$-0",
  "$NaN",
  "$F1",
  "$R1",
  "$r1",
  "$X1",
  "$Y1",
  "$$x",
  "$",
];
const fieldValue = fc.oneof(
  {
    weight: 3,
    arbitrary: ref(
      "inv:own0",
      "inv:own2",
      "inv:free",
      "inv:other",
      "lease:open",
      "lease:proposed",
      "lease:terminal",
      "lease:other",
      "uuid:missing",
    ),
  },
  { weight: 1, arbitrary: ref("email:owner", "email:other", "password") },
  { weight: 1, arbitrary: ref("version:own0", "version:own2") },
  { weight: 2, arbitrary: nastyString.map((s) => (s as unknown as { toWellFormed(): string }).toWellFormed()) },
  { weight: 1, arbitrary: fc.constantFrom(...REACT_TAGS) },
  { weight: 1, arbitrary: fc.constantFrom("Contoso", "INV-77", "2026-10-01", "2027-01-31") },
  { weight: 1, arbitrary: fc.constantFrom("summarize_invoice", "review_invoice", "categorize_lines", "1") },
  { weight: 1, arbitrary: ref("lease:review", "lease:categorize", "line:cat0", "line:cat1", "line:foreign") },
  // The lane's: requests of each actor and of another organization, the hash last shown, comments.
  {
    weight: 1,
    arbitrary: ref("approval:own", "approval:member", "approval:approver", "approval:other", "approval:decided", "lease:submit"),
  },
  { weight: 1, arbitrary: fc.oneof(ref("hash:last"), fc.constantFrom("Looks right.", "", "   ", "x".repeat(2001))) },
);
const FIELDS = [
  "invoice_id",
  "lease_id",
  "discard",
  "next",
  "number",
  "counterparty",
  "issued_on",
  "due_on",
  "expected_version",
  "email",
  "password",
  "owner_id",
  "actor_id",
  // The edit form's rendered values (decision 0014): only a field that differs is read.
  "was_number",
  "was_counterparty",
  "was_issued_on",
  "was_due_on",
  // Which panel's button (summarize, apply), and apply's ticked lines (categorize_lines).
  "purpose",
  "lines_form",
  "line",
  // Approve's and Decline's (app/approvals/[id]/actions.ts): the request, the hash the page showed, the comment.
  "approval_id",
  "proposal_sha256",
  "comment",
];
/**
 * The fields a raw multipart body may repeat: not `line`, whose ticked values apply and submit
 * read all of (getAll), nor the lane's decision fields, whose value the check must know.
 */
const RAW_FIELDS = FIELDS.filter((f) => !["line", "approval_id", "proposal_sha256", "comment"].includes(f));

const ACTION: fc.Arbitrary<ActionCall> = fc.record({
  kind: fc.constant("action" as const),
  action: fc.oneof(
    {
      weight: 12,
      arbitrary: fc.constantFrom<ActionName>(
        "summarize",
        "apply",
        "discard",
        "cancel",
        "edit",
        "signIn",
        "signOut",
        "signOutCheck",
        "submit",
        "approve",
        "decline",
      ),
    },
    { weight: 1, arbitrary: fc.constant("unknown" as const) },
  ),
  page: fc.oneof(
    { weight: 6, arbitrary: fc.constant("own" as const) },
    { weight: 1, arbitrary: fc.constantFrom("sign-in" as const, "invoices" as const, "root" as const) },
  ),
  encoding: fc.oneof(
    { weight: 6, arbitrary: fc.constant<ActionEncoding>("reply-form") },
    { weight: 3, arbitrary: fc.constantFrom<ActionEncoding>("reply-text", "mpa", "garbage", "raw-form", "reply-json") },
  ),
  prev: fc.oneof(
    fc.constant({ ok: true, message: null }),
    fc.constant({ message: null, email: "" }),
    anyJson,
    fc.constantFrom(...REACT_TAGS),
  ),
  fields: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 7 }),
  rootModel: fc.oneof(
    { weight: 8, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom(...REACT_TAGS.map((tag) => JSON.stringify([tag, "$K1"]))),
        fc.constantFrom("[", "{}", "null", '"$K1"', "[1e999]", `[${"[".repeat(5000)}${"]".repeat(5000)}]`),
      ),
    },
  ),
  cookie: fc.oneof(
    { weight: 8, arbitrary: fc.constant({ kind: "owner" as const }) },
    { weight: 2, arbitrary: fc.constantFrom({ kind: "approver" as const }, { kind: "member" as const }) },
    { weight: 1, arbitrary: fc.constantFrom({ kind: "other" as const }, { kind: "none" as const }, { kind: "revoked" as const }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("tampered" as const), at: fc.nat(), char: fc.constantFrom("A", "_", "-", "*") }),
    },
  ),
  origin: fc.oneof(
    { weight: 6, arbitrary: fc.constant("own" as const) },
    { weight: 1, arbitrary: fc.constantFrom("none" as const, "foreign" as const, "null" as const) },
  ),
  contentType: fc.oneof(
    { weight: 8, arbitrary: fc.constant("right" as const) },
    { weight: 1, arbitrary: fc.constantFrom("text/plain" as const, "application/json" as const, "none" as const, "form" as const) },
  ),
  garbage: rawBytes,
  raw: fc.array(
    fc.tuple(
      fc.constantFrom(...RAW_FIELDS),
      fc.oneof(
        rawBytes,
        hugeString.map((h) => new TextEncoder().encode(h)),
        nastyString.map((v) => new TextEncoder().encode(v)),
      ),
    ),
    { maxLength: 6 },
  ),
  json: fc.array(fc.oneof(anyJson, fc.dictionary(fc.constantFrom(...FIELDS), fc.oneof(anyJson, nastyString, hugeString), { maxKeys: 6 })), {
    maxLength: 3,
  }),
});

// Valid field sets per action, so the allowed writes happen too.
const VALID_FIELDS: Record<ActionName, fc.Arbitrary<Record<string, unknown>>> = {
  summarize: fc.record(
    { invoice_id: ref("inv:free", "inv:own0"), purpose: fc.constantFrom("summarize_invoice", "review_invoice", "categorize_lines") },
    { requiredKeys: ["invoice_id"] },
  ),
  apply: fc.oneof(
    fc.record({ lease_id: ref("lease:proposed", "lease:open", "lease:overdue", "lease:review"), invoice_id: ref("inv:own1") }),
    // Categories' Apply form: the proposed lines, a box each; one ticked (or none: invalid_lines).
    fc.record(
      { lease_id: ref("lease:categorize"), invoice_id: ref("inv:own1"), lines_form: fc.constant("1"), line: ref("line:cat0", "line:cat1") },
      { requiredKeys: ["lease_id", "invoice_id"] },
    ),
  ),
  discard: fc.record({ lease_id: ref("lease:open", "lease:proposed") }),
  cancel: fc.record({ lease_id: ref("lease:open", "lease:proposed") }),
  edit: fc.record({
    invoice_id: ref("inv:own0", "inv:own2"),
    number: fc.constantFrom("INV-1", "INV-2"),
    counterparty: fc.constantFrom("Contoso", "Fabrikam"),
    issued_on: fc.constant("2026-11-01"),
    due_on: fc.constantFrom("2026-12-01", "2027-01-31"),
    // Rendered as the invoice stood, or not: a field equal to its was_ value is not written.
    was_number: fc.constantFrom("INV-1", "INV-2", ""),
    was_counterparty: fc.constantFrom("Contoso", "Fabrikam", ""),
    was_issued_on: fc.constantFrom("2026-11-01", "11/01/2026", ""),
    was_due_on: fc.constantFrom("2026-12-01", "12/01/2026", ""),
    expected_version: ref("version:own0", "version:own2"),
  }),
  signIn: fc.record({ email: ref("email:owner", "email:other"), password: ref("password") }),
  signOut: fc.oneof(fc.constant({}), fc.record({ discard: ref("lease:proposed") })),
  signOutCheck: fc.constant({}),
  // Submit as the invoice page posts it: the lane's proposed lease (a summary's is approval_not_required).
  submit: fc.oneof(
    { weight: 3, arbitrary: fc.record({ lease_id: ref("lease:submit"), invoice_id: ref("inv:own1"), purpose: fc.constant(LANE_PURPOSE) }) },
    { weight: 1, arbitrary: fc.record({ lease_id: ref("lease:proposed", "approval:own"), invoice_id: ref("inv:own1") }) },
  ),
  // Approve and Decline as the request's page posts them: its id, the hash it showed (approve), a comment.
  approve: fc.record(
    {
      approval_id: ref("approval:member", "approval:approver", "approval:own", "approval:decided"),
      proposal_sha256: fc.oneof({ weight: 5, arbitrary: ref("hash:last") }, { weight: 1, arbitrary: fc.stringMatching(/^[0-9a-f]{64}$/) }),
      comment: fc.constantFrom("", "Looks right.", "  Checked.  "),
    },
    { requiredKeys: ["approval_id", "proposal_sha256"] },
  ),
  decline: fc.record(
    {
      approval_id: ref("approval:member", "approval:approver", "approval:own", "approval:decided"),
      comment: fc.constantFrom("Wrong account.", "  Not this one.  ", ""),
    },
    { requiredKeys: ["approval_id"] },
  ),
};
const VALID_ACTION: fc.Arbitrary<ActionCall> = fc
  .constantFrom<ActionName>(
    "summarize",
    "summarize",
    "apply",
    "apply",
    "discard",
    "cancel",
    "edit",
    "edit",
    "signIn",
    "signOut",
    "signOutCheck",
    "submit",
    "approve",
    "approve",
    "decline",
  )
  .chain((action) =>
    fc.record({
      kind: fc.constant("action" as const),
      action: fc.constant(action),
      page: fc.constant("own" as const),
      encoding: fc.constant<ActionEncoding>("reply-form"),
      prev: fc.constant(action === "signIn" ? { message: null, email: "" } : { ok: true, message: null }),
      fields: VALID_FIELDS[action],
      rootModel: fc.constant(null),
      // A decision by the owner (an admin) or their teammate the approver: each decides the other's and the member's requests.
      cookie:
        action === "approve" || action === "decline"
          ? fc.constantFrom({ kind: "owner" as const }, { kind: "approver" as const })
          : fc.constant({ kind: "owner" as const }),
      origin: fc.constant("own" as const),
      contentType: fc.constant("right" as const),
      garbage: fc.constant(new Uint8Array()),
      raw: fc.constant([]),
      json: fc.constant([]),
    }),
  );

type ApiCall = { kind: "api"; request: FuzzRequest; path: PathStyle; length: LengthLie; extra: Record<string, string> };
type PageCall = {
  kind: "page";
  method: "GET" | "HEAD" | "POST" | "OPTIONS";
  page: string;
  id: Ref | string;
  path: PathStyle;
  cookie: CookieModel;
  extra: Record<string, string>;
};
type InngestCall = {
  kind: "inngest";
  method: "GET" | "POST" | "PUT";
  signature: string | null;
  query: string;
  body: Uint8Array;
  contentType: string | null;
};
// Methods and paths Next.js itself answered with a 500 before server.mjs's gate (decision
// 0048): every method Node parses (TRACE, CONNECT, WebDAV's...) and some it does not, on any
// kind of path, the build's static files (read from its manifest) and the image optimizer.
type WireCall = {
  kind: "wire";
  method: string;
  target: WireTarget;
  form: "origin" | "absolute" | "authority" | "asterisk";
  cookie: CookieModel;
  body: "none" | "xml" | "json";
  extra: Record<string, string>;
};
type WireTarget =
  | { to: "static"; file: number; suffix: string }
  | { to: "image"; query: string }
  | { to: "api"; route: keyof typeof PATHS | "inngest"; id: Ref | string }
  | { to: "page"; page: string; id: Ref | string }
  | { to: "other"; path: string };
/**
 * GET /api/approvals/events (0087), opened and read to its first frame, then dropped as a page
 * that goes away drops it: by each actor, by no one, with headers a client may add, other methods.
 */
type StreamCall = {
  kind: "stream";
  method: string;
  cookie: CookieModel;
  /** A request made pending (of the actor's, a teammate's, another organization's) before the stream opens. */
  prime: RefName | null;
  query: string;
  extra: Record<string, string>;
};
type Call = ApiCall | PageCall | InngestCall | ActionCall | WireCall | StreamCall;

const API: fc.Arbitrary<ApiCall> = fc.record({
  kind: fc.constant("api" as const),
  request: REQUESTS,
  path: pathStyle,
  length: lengthLie,
  extra: nextHeaders,
});
const PAGE: fc.Arbitrary<PageCall> = fc.record({
  kind: fc.constant("page" as const),
  method: fc.oneof(
    { weight: 6, arbitrary: fc.constant("GET" as const) },
    { weight: 1, arbitrary: fc.constantFrom("HEAD" as const, "POST" as const, "OPTIONS" as const) },
  ),
  page: fc.constantFrom("/invoices/:id", "/invoices/:id", "/invoices", "/sign-in", "/", "/sign-in/reset", "/nowhere/:id"),
  id: fc.oneof(
    ref("inv:own0", "inv:other", "uuid:missing"),
    fc.tuple(fc.constant("lease:open" as const), disguise).map(([n, d]) => new Ref(n, d)),
    nastyString,
  ),
  path: pathStyle,
  cookie: fc.oneof(
    { weight: 6, arbitrary: fc.constant({ kind: "owner" as const }) },
    { weight: 1, arbitrary: fc.constantFrom({ kind: "other" as const }, { kind: "none" as const }, { kind: "revoked" as const }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("tampered" as const), at: fc.nat(), char: fc.constantFrom("A", "_", "-", "*") }),
    },
  ),
  extra: nextHeaders,
});
const INNGEST: fc.Arbitrary<InngestCall> = fc.record({
  kind: fc.constant("inngest" as const),
  method: fc.constantFrom("GET" as const, "POST" as const, "PUT" as const),
  signature: fc.oneof(
    fc.constant(null),
    fc.constantFrom("", "t=0&s=00", `t=${Math.floor(Date.now() / 1000)}&s=${"ab".repeat(32)}`, "s=x", "t=abc&s=", "garbage"),
  ),
  query: fc.constantFrom("", "?fnId=claimcheck-generate-lease-proposal&stepId=step", "?fnId=x", "?deployId=1", "?probe=trust", "?fnId=%ZZ"),
  body: fc.oneof(
    fc.constant(
      new TextEncoder().encode(
        JSON.stringify({ event: { name: "lease/opened", data: {} }, events: [], steps: {}, ctx: { run_id: "r", attempt: 0 } }),
      ),
    ),
    rawBytes,
  ),
  contentType: fc.constantFrom("application/json", null, "text/plain"),
});

// What the app serves, those Node's parser takes and the app does not, and some it refuses itself.
const SERVED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
// The API's own writes are the API inputs' to fuzz (their writes held to the contract there):
// here an API path gets only the methods that write nothing.
const wireMethods = (writes: boolean) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom("TRACE", "CONNECT", "OPTIONS", "HEAD") },
    { weight: 4, arbitrary: fc.constantFrom(...http.METHODS.filter((m) => !SERVED_METHODS.includes(m))) },
    { weight: 2, arbitrary: fc.constantFrom(...SERVED_METHODS.filter((m) => writes || ["GET", "HEAD", "OPTIONS"].includes(m))) },
    { weight: 1, arbitrary: fc.constantFrom("TRACK", "get", "Trace", "FOO", "DEBUG", "PROPFIND2", "M-SEARCHX", "BREW") },
  );
const imageParam = (name: string, values: fc.Arbitrary<string>) =>
  fc.option(
    values.map((v) => `${name}=${v}`),
    { nil: undefined, freq: 4 },
  );
const IMAGE_QUERY: fc.Arbitrary<string> = fc
  .tuple(
    imageParam(
      "url",
      fc.oneof(
        fc
          .constantFrom(
            "/invoices",
            "/sign-in",
            "/icon.svg",
            "/favicon.ico",
            "/api/session",
            "/_next/image?url=/icon.svg&w=16&q=1",
            "http://127.0.0.1:1/x.png",
            "//evil.example/x.png",
            "data:image/png;base64,AAAA",
            "/%ZZ",
            "",
          )
          .map(encodeURIComponent),
        nastyString.map((v) => encodeURIComponent((v as unknown as { toWellFormed(): string }).toWellFormed())),
      ),
    ),
    imageParam("w", fc.constantFrom("16", "64", "0", "-1", "3840", "99999", "abc", "64.5")),
    imageParam("q", fc.constantFrom("75", "1", "0", "101", "x")),
    fc.option(fc.constantFrom("dpl=x", "url=/sign-in", "w=32"), { nil: undefined, freq: 5 }),
  )
  .map((parts) => {
    const q = parts.filter((p) => p !== undefined).join("&");
    return q ? `?${q}` : "";
  });
const WIRE_TARGET: fc.Arbitrary<WireTarget> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      to: fc.constant("static" as const),
      file: fc.nat(),
      suffix: fc.constantFrom("", "", "", "?v=1", "x", "/", "%00", "/../../../package.json", ".map"),
    }),
  },
  { weight: 3, arbitrary: fc.record({ to: fc.constant("image" as const), query: IMAGE_QUERY }) },
  {
    weight: 3,
    arbitrary: fc.record({
      to: fc.constant("api" as const),
      route: fc.constantFrom<keyof typeof PATHS | "inngest">(...(Object.keys(PATHS) as (keyof typeof PATHS)[]), "inngest"),
      id: fc.oneof(ref("inv:own0", "lease:open", "lease:other", "uuid:missing"), nastyString),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      to: fc.constant("page" as const),
      page: fc.constantFrom("/", "/invoices", "/invoices/:id", "/sign-in", "/sign-in/reset", "/sign-out", "/favicon.ico", "/icon.svg"),
      id: ref("inv:own0", "inv:other"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      to: fc.constant("other" as const),
      path: fc.constantFrom(
        "/nowhere",
        "/api/nowhere",
        "/_next/data/x.json",
        "/_next/webpack-hmr",
        "/_next/static",
        "/_next/",
        "/__nextjs_original-stack-frame",
        "//",
        "/_next/image/x",
      ),
    }),
  },
);
const WIRE: fc.Arbitrary<WireCall> = WIRE_TARGET.chain((target) =>
  fc.record({
    kind: fc.constant("wire" as const),
    method: wireMethods(target.to !== "api"),
    target: fc.constant(target),
    form: fc.oneof(
      { weight: 8, arbitrary: fc.constant("origin" as const) },
      { weight: 1, arbitrary: fc.constantFrom("absolute" as const, "authority" as const, "asterisk" as const) },
    ),
    cookie: fc.oneof(
      { weight: 3, arbitrary: fc.constant({ kind: "owner" as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
    ),
    body: fc.constantFrom("none" as const, "none" as const, "xml" as const, "json" as const),
    extra: nextHeaders,
  }),
);

/** Headers a client of an event stream may send, or a hostile one. */
const STREAM_HEADERS: fc.Arbitrary<Record<string, string>> = fc.oneof(
  nastyString.map((v) => ({ "last-event-id": wireValue(v) })),
  fc.constantFrom<Record<string, string>>(
    { accept: "text/event-stream", "cache-control": "no-cache" },
    { accept: "application/json" },
    { "last-event-id": "0" },
    { origin: "https://evil.example", "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" },
    { connection: "upgrade", upgrade: "websocket" },
    { "accept-encoding": "gzip, br" },
    { range: "bytes=0-10" },
    { "if-none-match": "*" },
    { "content-type": "application/json" },
  ),
);
const STREAM: fc.Arbitrary<StreamCall> = fc.record({
  kind: fc.constant("stream" as const),
  method: fc.oneof(
    { weight: 8, arbitrary: fc.constant("GET") },
    { weight: 1, arbitrary: fc.constantFrom("HEAD", "POST", "PUT", "DELETE", "OPTIONS") },
  ),
  cookie: fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom<CookieModel>({ kind: "owner" }, { kind: "approver" }, { kind: "member" }, { kind: "other" }),
    },
    { weight: 1, arbitrary: fc.constantFrom<CookieModel>({ kind: "none" }, { kind: "revoked" }, { kind: "both" }) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.record({ kind: fc.constant("tampered" as const), at: fc.nat(), char: fc.constantFrom("A", "_", "-", "*") }),
        fc.record({ kind: fc.constant("garbage" as const), value: fc.constantFrom("", "x", "Fe26.2**", "%ZZ") }),
      ),
    },
  ),
  prime: fc.option(fc.constantFrom<RefName>("approval:own", "approval:member", "approval:approver", "approval:other"), {
    nil: null,
    freq: 3,
  }),
  query: fc.constantFrom("", "", "", "?x=1", "?events_before=abc", "?fingerprint=0000000000000000", "?%ZZ"),
  extra: fc.oneof({ weight: 2, arbitrary: nextHeaders }, { weight: 1, arbitrary: STREAM_HEADERS }),
});

const CALLS: fc.Arbitrary<Call> = fc.oneof(
  { weight: 10, arbitrary: API },
  { weight: 5, arbitrary: ACTION },
  { weight: 4, arbitrary: VALID_ACTION },
  { weight: 2, arbitrary: PAGE },
  { weight: 1, arbitrary: INNGEST },
  { weight: 2, arbitrary: WIRE },
  { weight: 2, arbitrary: STREAM },
);

// ---------------------------------------------------------------------------------------
// Sending and checking

function cookieOf(c: CookieModel): { header: string | null; actor: { id: string; sessionId: string } | null } {
  const owner = world.owner;
  switch (c.kind) {
    case "owner":
      return { header: owner.cookie, actor: { id: owner.id, sessionId: owner.sessionId } };
    case "other":
      return { header: world.other.cookie, actor: { id: world.other.id, sessionId: world.other.sessionId } };
    case "member":
      return { header: world.member.cookie, actor: { id: world.member.id, sessionId: world.member.sessionId } };
    case "approver":
      return { header: world.approver.cookie, actor: { id: world.approver.id, sessionId: world.approver.sessionId } };
    case "both":
      return { header: `${owner.cookie}; ${world.other.cookie}`, actor: { id: owner.id, sessionId: owner.sessionId } };
    case "none":
      return { header: null, actor: null };
    case "revoked":
      return { header: revokedCookie, actor: null };
    case "tampered": {
      const [name, value = ""] = owner.cookie.split(/=(.*)/s);
      const i = c.at % Math.max(1, value.length);
      return { header: `${name}=${value.slice(0, i)}${value[i] === c.char ? "B" : c.char}${value.slice(i + 1)}`, actor: null };
    }
    case "garbage":
      return { header: `claimcheck_session=${c.value}`, actor: null };
  }
}

const lookup = (name: Parameters<World["lookup"]>[0]) => world.lookup(name);
const hostHeader = () => new URL(app.url).host;
const originValue = (o: string) =>
  ({
    own: app.url,
    foreign: "https://evil.example",
    null: "null",
    garbage: "::not a url::",
    port: "http://127.0.0.1:1",
    upper: app.url.toUpperCase(),
  })[o];

function headLines(method: string, target: string, headers: Record<string, string | null | undefined>): string {
  const lines = [`${method} ${target} HTTP/1.1`];
  const merged: Record<string, string | null | undefined> = { host: hostHeader(), connection: "close", ...headers };
  for (const [k, v] of Object.entries(merged)) if (v !== null && v !== undefined) lines.push(`${k}: ${v}`);
  return lines.join("\r\n");
}

function lengthHeaders(lie: LengthLie, n: number): { headers: Record<string, string>; halfClose: boolean; chunked: boolean } {
  switch (lie) {
    case "honest":
      return { headers: { "content-length": String(n) }, halfClose: false, chunked: false };
    case "omit":
      return { headers: {}, halfClose: false, chunked: false };
    case "short":
      return { headers: { "content-length": String(Math.max(0, n - 3)) }, halfClose: false, chunked: false };
    case "zero":
      return { headers: { "content-length": "0" }, halfClose: false, chunked: false };
    case "long":
      return { headers: { "content-length": String(n + 10) }, halfClose: true, chunked: false };
    case "huge":
      return { headers: { "content-length": "99999999" }, halfClose: true, chunked: false };
    case "twice":
      return { headers: { "content-length": `${n}\r\ncontent-length: ${n + 1}` }, halfClose: false, chunked: false };
    case "chunked-lie":
      return { headers: { "transfer-encoding": "chunked" }, halfClose: true, chunked: false };
    case "chunked":
      return { headers: { "transfer-encoding": "chunked" }, halfClose: false, chunked: true };
  }
}

const chunk = (bytes: Uint8Array) =>
  Buffer.concat([Buffer.from(`${bytes.byteLength.toString(16)}\r\n`), Buffer.from(bytes), Buffer.from("\r\n0\r\n\r\n")]);

type Outcome = {
  route: string;
  status: number;
  answer: string;
  problems: (writes: Write[]) => string[];
  /** The answer read may not be this request's (an unframed body): its work may still be running. */
  unfinished?: boolean;
};

async function sendApi(c: ApiCall): Promise<Outcome> {
  const r = c.request;
  // Each actor in the role the checks take them to have (a request may have demoted one), as fuzz-routes does.
  await world.repairTeam();
  await world.liveSessions();
  if (r.route === "session" && r.method === "POST") await t.db.execute(sql`delete from rate_limit`);
  const param = String(await resolveRefs(r.id, lookup));
  const body = r.body.kind === "json" ? { ...r.body, value: await resolveRefs(r.body.value, lookup) } : r.body;
  const { wire, decoded } = writeSegment(param, c.path);
  const target = `${PATHS[r.route](wire)}${r.query ?? ""}`;
  const { header, actor } = cookieOf(r.cookie);
  const bytes =
    body.kind === "json"
      ? new TextEncoder().encode(JSON.stringify(body.value) ?? "")
      : body.kind === "raw"
        ? new TextEncoder().encode(body.text)
        : body.kind === "bytes"
          ? body.bytes
          : new Uint8Array();
  const lie = lengthHeaders(c.length, bytes.byteLength);
  // Read before the request: the policies it runs under, and the approval request its id names.
  const actorOrg = actor ? ((await world.orgs()).get(actor.id) ?? null) : null;
  const fourEyes = await world.fourEyes(actorOrg);
  const approval = await world.approvalOf(decoded);
  const head = headLines(r.method, target, {
    cookie: header,
    "content-type": r.contentType,
    origin: r.origin === "none" ? null : originValue(r.origin),
    ...lie.headers,
    ...c.extra,
  });
  const started = await mark();
  const res = await rawRequest(head, lie.chunked ? chunk(bytes) : bytes, lie.halfClose ? { halfCloseMs: 200, timeoutMs: 5_000 } : {});
  let input: any;
  try {
    input = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    input = undefined;
  }
  let answer: any = null;
  try {
    answer = JSON.parse(res.body);
  } catch {
    answer = res.body.slice(0, 200);
  }
  const unframed = (c.length === "omit" || c.length === "short" || c.length === "zero") && bytes.byteLength > 0;
  const actorRole = actor ? world.role(actor.id) : null;
  const email = typeof input?.email === "string" ? input.email.trim().toLowerCase() : null;
  const emailUser = email === world.owner.email ? world.owner.id : email === world.other.email ? world.other.id : null;
  return {
    route: `${r.method} ${PATHS[r.route](":id")}`,
    status: res.status,
    answer: JSON.stringify(answer).slice(0, 300),
    ...started,
    unfinished: unframed,
    problems: (writes) => {
      if (unframed) {
        // On the wire this is a different request than the one built: no body (or a cut one)
        // followed by stray bytes, which Node answers 400, and that 400 can reach us before
        // the real request's answer. So the answer read says nothing about what was done:
        // hold the writes to what that route allows under any answer it can give.
        const labels = writes.map(label);
        const opened = labels.find((l) => l.startsWith("open:"))?.split(":")[1];
        const revoked = labels.filter((l) => l.startsWith("revoke:")).map((l) => l.split(":")[1]);
        // A submit, which takes no body, may have run as sent without one: answered with its request.
        const submitted = writes.find((w) => w.tbl === "approval_request" && w.op === "INSERT")?.new;
        const candidates = [
          { status: 200, answer: { revoked, actor: { id: emailUser } } },
          { status: 200, answer: { approval_id: submitted?.id, proposal_sha256: submitted?.proposal_sha256, lease_id: decoded } },
          { status: 201, answer: { lease_id: opened } },
          { status: 409, answer: { detail: "invoice_changed" } },
          { status: 409, answer: { detail: "lease_open" } },
          { status: 400, answer: null },
        ];
        const verdicts = candidates.map((k) =>
          apiViolations(
            {
              route: r.route,
              method: r.method,
              status: k.status,
              answer: k.answer,
              actor,
              param: decoded,
              input: c.length === "short" ? undefined : {},
              emailUser,
              actorOrg,
              actorRole,
              fourEyes,
              approval,
            },
            writes,
            { background: true },
          ),
        );
        const fits = verdicts.find((v) => v.length === 0);
        return fits ?? [...(res.status >= 500 ? [`status ${res.status}`] : []), ...verdicts.at(-1)!];
      }
      const problems = apiViolations(
        {
          route: r.route,
          method: r.method,
          status: res.status,
          answer,
          actor,
          param: decoded,
          input,
          emailUser,
          actorOrg,
          actorRole,
          retryAfter: headerOf(res.head, "retry-after"),
          fourEyes,
          approval,
        },
        writes,
        { background: true },
      );
      if (r.route === "session" && r.method === "POST" && res.status === 200 && answer?.actor?.id !== emailUser)
        problems.push(`signed in as another user`);
      // A refusal over budget wrote nothing (apiViolations allows no write) and dispatched nothing:
      // no generation run started since the request's mark (one still pending aside, which may open).
      if (r.route === "leases" && r.method === "POST" && res.status === 429 && !pending.length) {
        const dispatched = dispatches() - started.dispatched;
        if (dispatched !== 0) problems.push(`a 429 dispatched ${dispatched} generation(s)`);
      }
      return problems;
    },
  };
}

async function sendPage(c: PageCall): Promise<Outcome> {
  await world.liveSessions();
  const id = String(await resolveRefs(c.id, lookup));
  const { wire } = writeSegment(id, c.path);
  const { header } = cookieOf(c.cookie);
  const head = headLines(c.method, c.page.replace(":id", wire), {
    cookie: header,
    origin: c.method === "POST" ? app.url : null,
    ...c.extra,
  });
  const started = await mark();
  const res = await rawRequest(head, null);
  return {
    route: `${c.method} ${c.page}`,
    status: res.status,
    answer: res.body.slice(0, 200),
    ...started,
    problems: (writes) => nothingBut(writes),
  };
}

/** The build's own files, as its manifest lists them. */
function staticFiles(): string[] {
  const m = JSON.parse(fs.readFileSync(path.join(ROOT, TEST_DIST_DIR, "build-manifest.json"), "utf8")) as Record<string, unknown>;
  return [...new Set([m.polyfillFiles, m.lowPriorityFiles, m.rootMainFiles].flat() as string[])].map((f) => `/_next/${f}`);
}
let builtFiles: string[] = [];

async function sendWire(c: WireCall): Promise<Outcome> {
  await world.liveSessions();
  const t = c.target;
  let target: string;
  if (t.to === "static") target = `${builtFiles[t.file % builtFiles.length]}${t.suffix}`;
  else if (t.to === "image") target = `/_next/image${t.query}`;
  else if (t.to === "api")
    target = t.route === "inngest" ? "/api/inngest" : PATHS[t.route](writeSegment(String(await resolveRefs(t.id, lookup)), "plain").wire);
  else if (t.to === "page") target = t.page.replace(":id", String(await resolveRefs(t.id, lookup)));
  else target = t.path;
  const wireTarget = { origin: target, absolute: `${app.url}${target}`, authority: hostHeader(), asterisk: "*" }[c.form];
  const body = c.body === "xml" ? '<?xml version="1.0"?><propfind xmlns="DAV:"><allprop/></propfind>' : c.body === "json" ? "{}" : "";
  const { header } = cookieOf(c.cookie);
  const head = headLines(c.method, wireTarget, {
    cookie: header,
    origin: app.url,
    "content-type": c.body === "xml" ? "application/xml" : c.body === "json" ? "application/json" : null,
    "content-length": body ? String(Buffer.byteLength(body)) : null,
    ...c.extra,
  });
  const started = await mark();
  const res = await rawRequest(head, body ? new TextEncoder().encode(body) : null, { timeoutMs: 5_000 });
  const kind = t.to === "api" ? (t.route === "inngest" ? "/api/inngest" : PATHS[t.route](":id")) : t.to;
  return {
    route: `wire ${c.method} ${kind}${c.form === "origin" ? "" : ` (${c.form})`}`,
    status: res.status,
    answer: res.body.slice(0, 200),
    ...started,
    problems: (writes) => {
      const problems = nothingBut(writes);
      // A refusal of a method says what the path allows (RFC 9110 §15.5.6).
      if (res.status === 405 && !/^allow: *\S/im.test(res.head)) problems.push("405 without an Allow header");
      return problems;
    },
  };
}

async function sendInngest(c: InngestCall): Promise<Outcome> {
  const head = headLines(c.method, `/api/inngest${c.query}`, {
    "content-type": c.method === "GET" ? null : c.contentType,
    "content-length": c.method === "GET" ? null : String(c.body.byteLength),
    "x-inngest-signature": c.signature,
  });
  const started = await mark();
  const res = await rawRequest(head, c.method === "GET" ? null : c.body);
  return {
    route: `${c.method} /api/inngest (unsigned)`,
    status: res.status,
    answer: res.body.slice(0, 200),
    ...started,
    problems: (writes) => [...(res.status === 401 ? [] : [`unsigned call answered ${res.status}, not 401`]), ...nothingBut(writes)],
  };
}

/**
 * The pending requests `actor` may see on the approval pages, read here in the test's own SQL:
 * of the organization their session works in, where they are a member; others' only if their
 * role approves. The stream's frame must be their fingerprint and count, and nothing else.
 */
async function visibleTo(actor: { id: string; sessionId: string }) {
  const rows = rowsOf<{ id: string; mine: boolean }>(
    await t.db.execute(
      sql`select r.id, r.requester_id = ${actor.id} as mine from approval_request r
          join inference_lease l on l.id = r.lease_id
          join app_session s on s.id = ${actor.sessionId} and s.org_id = r.org_id
          join membership m on m.org_id = r.org_id and m.user_id = ${actor.id}
          where r.decision is null and l.status = 'proposed' and l.deadline_at > now()
            and (r.requester_id = ${actor.id} or m.role in ('admin', 'approver'))`,
    ),
  );
  const ids = rows.map((r) => r.id);
  return { fingerprint: fingerprintOf(ids), waiting: rows.filter((r) => !r.mine).length, ids };
}

/** Pending requests of organizations other than the session's: none may be in its stream's set. */
async function pendingElsewhere(sessionId: string): Promise<string[]> {
  const rows = rowsOf<{ id: string }>(
    await t.db.execute(
      sql`select r.id from approval_request r join inference_lease l on l.id = r.lease_id
          where r.decision is null and l.status = 'proposed' and l.deadline_at > now()
            and r.org_id is distinct from (select org_id from app_session where id = ${sessionId})`,
    ),
  );
  return rows.map((r) => r.id);
}

async function sendStream(c: StreamCall): Promise<Outcome> {
  await world.repairTeam();
  await world.liveSessions();
  if (c.prime) await world.lookup(c.prime);
  const { header, actor } = cookieOf(c.cookie);
  // What the actor may see, read before and after: a request the fuzzer left unframed may still land between.
  const before = actor ? await visibleTo(actor) : null;
  const elsewhere = actor ? await pendingElsewhere(actor.sessionId) : [];
  const head = headLines(c.method, `/api/approvals/events${c.query}`, { cookie: header, ...c.extra });
  const started = await mark();
  const res = await rawRequest(head, null, { firstEvent: c.method === "GET", timeoutMs: 3_000 });
  const after = actor ? await visibleTo(actor) : null;
  const who = actor ? world.nameOf(actor.id) : c.cookie.kind;
  const frame = /^event: approvals\ndata: (.*)$/m.exec(res.body)?.[1];
  note(`stream ${c.method} ${res.status} ${who}${frame ? (JSON.parse(frame).waiting > 0 ? " waiting" : " frame") : ""}`);
  return {
    route: `${c.method} /api/approvals/events`,
    status: res.status,
    answer: res.body.slice(0, 300),
    ...started,
    problems: (writes) => {
      const problems = nothingBut(writes);
      if (res.status === 405 && !/^allow: *\S/im.test(res.head)) problems.push("405 without an Allow header");
      // (OPTIONS is Next.js's own answer, the methods allowed, to anyone.)
      if (!actor && c.method !== "OPTIONS" && res.status >= 200 && res.status < 300) problems.push(`${res.status} without a live session`);
      if (res.status === 200 && c.method === "GET") {
        if (!/^content-type: text\/event-stream/im.test(res.head)) problems.push("200 that is not an event stream");
        else if (!frame) problems.push(`no approvals frame within 3 s: ${JSON.stringify(res.body.slice(0, 200))}`);
        else {
          const got = JSON.parse(frame) as { fingerprint: unknown; waiting: unknown };
          const shows = (set: typeof before) => !!set && got.fingerprint === set.fingerprint && got.waiting === set.waiting;
          if (!shows(before) && !shows(after))
            problems.push(
              `the ${who}'s stream sent ${frame}; the pending requests they may see: ${JSON.stringify(before)}, then ${JSON.stringify(after)}; other organizations' pending: ${JSON.stringify(elsewhere)}`,
            );
          // Named, not only mismatched: the set with other organizations' requests in it (any few of them).
          const some = elsewhere.length <= 8 ? subsets(elsewhere).filter((ids) => ids.length > 0) : [];
          const leaked = before && some.find((ids) => got.fingerprint === fingerprintOf([...before.ids, ...ids]));
          if (leaked) problems.push(`the ${who}'s stream counts other organizations' requests ${leaked.join(", ")}`);
        }
      }
      return problems;
    },
  };
}

const subsets = <T>(xs: T[]): T[][] => xs.reduce<T[][]>((all, x) => [...all, ...all.map((set) => [...set, x])], [[]]);

const fingerprintOf = (ids: string[]) =>
  createHash("sha256")
    .update([...ids].sort().join(","))
    .digest("hex")
    .slice(0, 16);

function nothingBut(writes: Write[]): string[] {
  const rest = withoutAllowedSideWrites(writes.map(label), { background: true });
  return rest.length ? [`writes ${JSON.stringify(rest)} where none are allowed`] : [];
}

const ACTION_PAGE: Record<ActionName, "sign-in" | "invoice" | "approval" | "any"> = {
  signIn: "sign-in",
  signOut: "any",
  signOutCheck: "any",
  summarize: "invoice",
  apply: "invoice",
  discard: "invoice",
  cancel: "invoice",
  edit: "invoice",
  submit: "invoice",
  approve: "approval",
  decline: "approval",
};

async function sendAction(c: ActionCall): Promise<Outcome> {
  await world.repairTeam();
  await world.liveSessions();
  if (c.action === "signIn") await t.db.execute(sql`delete from rate_limit`);
  const fields = (await resolveRefs(c.fields, lookup)) as Record<string, unknown>;
  const { header, actor } = cookieOf(c.cookie);
  const own = c.action === "unknown" ? "invoice" : ACTION_PAGE[c.action];
  // A decision is posted from the request's page (/approvals/:id), or the queue's when the id is not one.
  const approvalPage = /^[0-9a-f-]{36}$/i.test(String(fields.approval_id ?? "").trim())
    ? `/approvals/${String(fields.approval_id).trim()}`
    : "/approvals";
  const pages = {
    "sign-in": "/sign-in",
    invoices: "/invoices",
    root: "/",
    own: own === "sign-in" ? "/sign-in" : own === "approval" ? approvalPage : `/invoices/${world.ownInvoices[0]}`,
  };
  const page = pages[c.page];
  const id = c.action === "unknown" ? "7f".repeat(21) : actionIds[c.action];
  const takesState = c.action === "signIn" || c.action === "edit";
  const noArgs = c.action === "signOutCheck";
  const args = noArgs ? [] : takesState ? [c.prev, "$K1"] : ["$K1"];

  let body: Uint8Array;
  let contentType: string | null;
  const headers: Record<string, string> = { accept: "text/x-component" };
  if (c.encoding === "reply-text") {
    body = new TextEncoder().encode(JSON.stringify(noArgs ? [] : takesState ? [c.prev, fields] : [fields]));
    contentType = "text/plain;charset=UTF-8";
    headers["next-action"] = id;
  } else if (c.encoding === "reply-json") {
    // JSON.stringify writes a lone surrogate as a \udXXX escape, so it reaches the decoder.
    body = new TextEncoder().encode(JSON.stringify(c.json));
    contentType = "text/plain;charset=UTF-8";
    headers["next-action"] = id;
  } else if (c.encoding === "raw-form") {
    const boundary = "----fuzzraw";
    const part = (name: string, value: Uint8Array) => [
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`, "latin1"),
      Buffer.from(value),
      Buffer.from("\r\n", "latin1"),
    ];
    // The form's entries before the root, as React's encodeReply writes them: the server decodes
    // the root as it arrives, and a `$K1` read before its `_1_` entries is an empty FormData.
    body = Buffer.concat([
      ...c.raw.flatMap(([k, v]) => part(`_1_${k}`, v)),
      ...Object.entries(fields).flatMap(([k, v]) => part(`_1_${k}`, new TextEncoder().encode(String(v)))),
      ...part("0", new TextEncoder().encode(c.rootModel ?? JSON.stringify(args))),
      Buffer.from(`--${boundary}--\r\n`, "latin1"),
    ]);
    contentType = `multipart/form-data; boundary=${boundary}`;
    headers["next-action"] = id;
  } else if (c.encoding === "garbage") {
    body = c.garbage;
    contentType = "multipart/form-data; boundary=----x";
    headers["next-action"] = id;
  } else {
    const form = new FormData();
    if (c.encoding === "reply-form") {
      // Entries first, root last (above): sent the other way round, every action got an empty form
      // and refused it, so no action the fuzzer sent this way ever wrote.
      for (const [k, v] of Object.entries(fields)) form.append(`_1_${k}`, String(v));
      form.append("0", c.rootModel ?? JSON.stringify(args));
      headers["next-action"] = id;
    } else {
      form.append(`$ACTION_ID_${id}`, "");
      for (const [k, v] of Object.entries(fields)) form.append(k, String(v));
    }
    const encoded = new Response(form);
    contentType = encoded.headers.get("content-type");
    body = new Uint8Array(await encoded.arrayBuffer());
  }
  const types = {
    right: contentType,
    "text/plain": "text/plain",
    "application/json": "application/json",
    none: null,
    form: "application/x-www-form-urlencoded",
  };
  const head = headLines("POST", page, {
    cookie: header,
    origin: c.origin === "none" ? null : originValue(c.origin),
    "content-type": types[c.contentType],
    "content-length": String(body.byteLength),
    ...headers,
  });
  const lane = actor && isLaneAction(c.action) ? await laneCall(c.action, fields, actor, c) : null;
  const started = await mark();
  const res = await rawRequest(head, body);
  const a = actor?.id ?? "no-actor";
  const s = actor?.sessionId ?? "no-session";
  const str = (v: unknown) => (typeof v === "string" ? v.trim().toLowerCase() : "");
  const email = str(fields.email);
  const emailUser = email === world.owner.email ? world.owner.id : email === world.other.email ? world.other.id : "no-user";
  return {
    route: `action ${c.action}${c.page === "own" ? "" : ` on /${c.page}`}`,
    status: res.status,
    answer: res.body.slice(0, 300),
    ...started,
    problems: (writes) => {
      if (lane) return laneProblems(lane, writes, res.status);
      const labels = withoutAllowedSideWrites(writes.map(label), { background: true, rateLimit: c.action === "signIn" });
      const problems = res.status >= 500 ? [`status ${res.status}`] : [];
      let allowed: string[][] = [[]];
      const opened = labels.find((l) => l.startsWith("open:"))?.split(":")[1];
      if (c.action === "signIn") allowed = [[], [`session:${emailUser}`]];
      else if (actor && c.action === "summarize") {
        // The panel's purpose, trimmed (none: the summary's); another is refused before open.
        const purpose = typeof fields.purpose === "string" ? fields.purpose.trim() : "summarize_invoice";
        allowed = [[], [`open:${opened}:${str(fields.invoice_id)}:${a}:${s}:${purpose}`, `event:opened:${opened}`]];
      } else if (actor && (c.action === "apply" || c.action === "discard" || c.action === "cancel")) {
        const l = str(fields.lease_id);
        if (c.action === "apply") {
          // The ticked lines, read from a form (a JSON body has none): the `line` field, if it is short enough.
          const form = c.encoding === "reply-form" || c.encoding === "mpa" || c.encoding === "raw-form";
          const ticked = typeof fields.line === "string" && fields.line.length <= 100 ? [fields.line] : [];
          const linesForm = typeof fields.lines_form === "string" && fields.lines_form.length > 0 && fields.lines_form.length <= 10;
          const applied = applyWrites(l, a, writes, form && linesForm ? ticked : undefined, null);
          problems.push(...applied.problems);
          const rest = labels.filter((x) => !applied.carried.includes(x));
          labels.splice(0, labels.length, ...rest);
          allowed = [
            [],
            [`event:apply_refused:${l}`],
            [`fence:${l}:${a}:*`, `event:invoice_changed:${l}`],
            [`unusable:${l}:${a}`, `event:proposal_unusable:${l}`],
            applied.expected,
          ];
        } else allowed = [[], [`event:cancel_refused:${l}`], [`cancel:${l}:${a}`, `event:cancelled:${l}`]];
      } else if (actor && c.action === "edit") {
        const inv = str(fields.invoice_id);
        // An edit withdraws the leases in flight on that invoice, with their events (decision 0013).
        const rest = withoutWithdrawals(labels, inv);
        labels.splice(0, labels.length, ...rest);
        allowed = [[], [`edit:${inv}:${a}`], [`bump:${inv}:${a}`]];
      } else if (actor && c.action === "signOut") {
        const revoked = labels.filter((l) => l.startsWith(`revoke:`)).map((l) => l.split(":")[1]!);
        allowed = [[], [`signout:${s}:${a}`, ...revoked.flatMap((l) => [`revoke:${l}:${a}:${s}`, `event:revoked:${l}`])]];
      }
      if (!matchesOneOf(labels, allowed))
        problems.push(`writes ${JSON.stringify(labels)} where the contract allows ${JSON.stringify(allowed)}`);
      return problems;
    },
  };
}

/**
 * A lane action as its route (apiViolations' submit, approve, decline): the path's id is the
 * form's `lease_id` or `approval_id` (trimmed, as the action's schema takes it), the body what
 * the action passes on (submit: the ticked lines, read from a form when `lines_form` is there;
 * approve: the hash, trimmed; a blank comment is none), with the policies, the request the id
 * names and the actor's role read before it. Null: an action the classifier has no route for.
 */
async function laneCall(action: LaneAction, fields: Record<string, unknown>, actor: { id: string; sessionId: string }, c: ActionCall) {
  const value = (k: string) => (fields[k] === undefined ? undefined : String(fields[k]));
  const form = c.encoding === "reply-form" || c.encoding === "mpa" || c.encoding === "raw-form";
  const param = (value(action === "submit" ? "lease_id" : "approval_id") ?? "").trim();
  const actorOrg = (await world.orgs()).get(actor.id) ?? null;
  const context = {
    route: LANE_ACTIONS[action],
    method: "POST",
    actor,
    param,
    actorOrg,
    actorRole: world.role(actor.id),
    fourEyes: await world.fourEyes(actorOrg),
    approval: await world.approvalOf(param),
  };
  let inputs: unknown[];
  if (action === "submit") {
    const line = value("line");
    const ticked = line !== undefined && line.length <= 100 ? [line] : [];
    const linesForm = value("lines_form");
    // A raw multipart body may carry a `lines_form` of its own bytes: either reading is allowed then.
    const rawLinesForm = c.encoding === "raw-form" && linesForm === undefined && c.raw.some(([k]) => k === "lines_form");
    inputs = !form ? [{}] : rawLinesForm ? [{}, { lines: ticked }] : [linesForm ? { lines: ticked } : {}];
  } else {
    inputs = [{ proposal_sha256: value("proposal_sha256")?.trim(), comment: value("comment")?.trim() || undefined }];
  }
  return { action, context, inputs };
}

/**
 * What a lane action wrote, held to its route's contract under each answer the route could have
 * given (the action answers with a redirect, not the route's JSON): a request made, a decision
 * (with the invoice written, if an approval), a close by the fence, or nothing.
 */
function laneProblems(lane: NonNullable<Awaited<ReturnType<typeof laneCall>>>, writes: Write[], status: number): string[] {
  const made = writes.find((w) => w.tbl === "approval_request" && w.op === "INSERT")?.new;
  const decided = writes.find((w) => w.tbl === "approval_request" && w.op === "UPDATE")?.old;
  const { context } = lane;
  const id = context.param.toLowerCase();
  const answers =
    lane.action === "submit"
      ? [
          { status: 200, answer: { approval_id: made?.id, proposal_sha256: made?.proposal_sha256, lease_id: context.param } },
          { status: 409, answer: { detail: "invoice_changed" } },
          { status: 409, answer: { detail: "proposal_unusable" } },
          { status: 400, answer: null },
        ]
      : [
          { status: 200, answer: { approval_id: id, lease_id: context.approval?.lease_id ?? decided?.lease_id } },
          { status: 409, answer: { detail: "invoice_changed" } },
          { status: 400, answer: null },
        ];
  const verdicts = answers.flatMap((k) =>
    lane.inputs.map((input) => apiViolations({ ...context, ...k, input }, writes, { background: true })),
  );
  const labels = writes.map(label);
  const who = world.nameOf(context.actor.id);
  const whose = world.nameOf(context.approval?.requester_id ?? made?.requester_id);
  const did = made
    ? "submitted"
    : decided
      ? `${labels.some((l) => l.startsWith("decide:") && l.includes(":approved:")) ? "approved" : "declined"} ${whose}'s`
      : labels.some((l) => l.startsWith("fence:"))
        ? "fenced"
        : "wrote nothing";
  note(`action ${lane.action} by ${who}: ${did}`);
  const fits = verdicts.find((v) => v.length === 0);
  // None fits: what the answer that wrote something would allow, or the refusal's nothing.
  return [...(status >= 500 ? [`status ${status}`] : []), ...(fits ?? (made || decided ? verdicts[0]! : verdicts.at(-1)!))];
}

/** The audit position, the snapshot and the app log's length just before a request goes out. */
async function mark() {
  return { audit: await auditMark(t.db), before: await snapshot(t.db), logAt: app.appLogs().length, dispatched: dispatches() };
}

/** The generation runs the stand-in has started, one per lease/opened event the app sent. */
const dispatches = () => app.inngest.runs().filter((r) => r.eventName === "lease/opened").length;
/** Opens answered 429 budget_exhausted (each checked to have written and dispatched nothing). */
let budgetRefusals = 0;

// Our own route layer's line for a caught failure, and Next.js's for an uncaught one. (The
// Inngest SDK logs each unsigned call it refuses; that is the 401 working.)
const FAILED_LOG = /"msg":"request failed"|⨯/;
// Next.js 16.4 logs a request that Node's parser cut off (a second, unframed body on the same
// connection; an empty Host) as "⨯ uncaughtException: Error: aborted". The client has Node's
// 400 by then, nothing is written (both still checked), and the server goes on; a known
// Next.js log line, not a failure of ours.
const ABORTED_LOG = /⨯ uncaughtException: +Error: aborted\s*$/;

/**
 * Waits until the audit table has stopped growing (two equal readings 25 ms apart, at most
 * 3 s): the server may still be finishing a request's work after the client has its answer
 * (a streamed action result, a client that gave up), and those writes belong to that request,
 * not to the next input. Under a loaded CI machine, leaving this out misattributed them.
 */
async function settled(): Promise<void> {
  const until = Date.now() + 3_000;
  let last = await auditMark(t.db);
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const now = await auditMark(t.db);
    if (now === last) return;
    last = now;
  }
}

// ---------------------------------------------------------------------------------------
// Whose write is it?
//
// A request is finished when its answer is read: our route handlers and server actions write
// before they answer, and settled() waits for the audit table to stop growing after it. One
// kind of input breaks that: an unframed body (no length, or a short or zero one, with bytes
// sent). Node parses the stray bytes as a second request and answers it 400 on the same
// connection, maybe before the real request has run, so the real request can still write
// after we have moved on. Such a request stays *pending* for PENDING_MS: a later input's writes
// may be split between that input and the pending requests, each part held to what its own
// request allows (the pending one under any answer it could have given). A pending request
// whose writes are found is done. This only ever credits a write to a request that was
// allowed to make it, so a wrong write is still a failure; what it gives up is telling which
// of two requests made an allowed one.

const PENDING_MS = 15_000;
type Pending = { route: string; until: number; problems: (writes: Write[]) => string[] };
let pending: Pending[] = [];
/** How many times a pending request's writes were found after its own check (reported at the end). */
let creditedLate = 0;

/**
 * Splits `writes` between the current request and the pending ones so that every part is
 * allowed; returns the pending requests that took a part, or null when no split fits.
 */
function attribute(writes: Write[], current: (w: Write[]) => string[], candidates: Pending[]): Pending[] | null {
  if (current(writes).length === 0) return [];
  if (!candidates.length || writes.length > 12) return null;
  // Each write goes to the current request (0) or to pending request i (i + 1).
  const owners = candidates.length + 1;
  const total = owners ** writes.length;
  if (total > 200_000) return null;
  for (let code = 1; code < total; code++) {
    const parts: Write[][] = Array.from({ length: owners }, () => []);
    for (let i = 0, c = code; i < writes.length; i++, c = Math.floor(c / owners)) parts[c % owners]!.push(writes[i]!);
    if (current(parts[0]!).length) continue;
    if (candidates.every((p, i) => !parts[i + 1]!.length || p.problems(parts[i + 1]!).length === 0)) {
      return candidates.filter((_, i) => parts[i + 1]!.length > 0);
    }
  }
  return null;
}

async function check(call: Call) {
  const sent = await (call.kind === "api"
    ? sendApi(call)
    : call.kind === "page"
      ? sendPage(call)
      : call.kind === "inngest"
        ? sendInngest(call)
        : call.kind === "wire"
          ? sendWire(call)
          : call.kind === "stream"
            ? sendStream(call)
            : sendAction(call));
  const { audit, before, logAt } = sent as Outcome & Awaited<ReturnType<typeof mark>>;
  await settled();
  // The snapshot first, then the writes: a background write (a generation the app runs on
  // its own) that lands between the two is then in the writes too, where it is allowed.
  const after = await snapshot(t.db);
  const writes = await writesSince(t.db, audit);
  histogram.add(sent.route, sent.status);
  if (sent.route === "POST /api/leases" && sent.status === 429) budgetRefusals++;
  pending = pending.filter((p) => p.until > Date.now());
  const took = attribute(writes, sent.problems, pending);
  const problems = took ? [] : sent.problems(writes);
  if (took?.length) {
    creditedLate += took.length;
    pending = pending.filter((p) => !took.includes(p));
  }
  if (sent.unfinished) pending.push({ route: sent.route, until: Date.now() + PENDING_MS, problems: sent.problems });
  if (sent.status >= 500) problems.push(`status ${sent.status}`);
  if (writes.length === 0 && JSON.stringify(after) !== JSON.stringify(before)) problems.push("the snapshot changed with no write recorded");
  // A failure the client never saw (it went away first) still shows in the log.
  const logged = app
    .appLogs()
    .slice(logAt)
    .filter((line) => FAILED_LOG.test(line) && !ABORTED_LOG.test(line));
  if (logged.length) problems.push(`the app logged: ${logged.join(" | ").slice(0, 600)}`);
  const previous = recent.map((r) => `${r.route} → ${r.status} (${r.at})`).join("; ");
  recent.push({
    route: `${sent.route} ${JSON.stringify(call).slice(0, 600)}`,
    status: sent.status,
    at: new Date().toISOString().slice(11, 23),
  });
  if (recent.length > 3) recent.shift();
  expect(
    problems,
    `${sent.route} → ${sent.status} ${sent.answer}; writes: ${JSON.stringify(writes.map(label))}; pending: ${JSON.stringify(pending.map((p) => p.route))}; the calls before: ${previous}`,
  ).toEqual([]);
  return sent.status;
}

/** The last few calls, named in a failure: a write that lands late shows whose it was. */
const recent: { route: string; status: number; at: string }[] = [];

const replay = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH } : {};

// Inputs the fuzzer found answering 5xx, kept as fixed cases.
describe("found by fuzzing", () => {
  it("a POST or PUT to /api/inngest whose body is not JSON is 401 like any unsigned call (was 500: the SDK parsed it before checking the signature)", async () => {
    for (const method of ["PUT", "POST"] as const) {
      for (const body of [Uint8Array.from([0]), new TextEncoder().encode("{"), new TextEncoder().encode("not json")]) {
        for (const signature of [null, "", `t=${Math.floor(Date.now() / 1000)}&s=${"ab".repeat(32)}`]) {
          await check({ kind: "inngest", method, signature, query: "", body, contentType: "application/json" });
        }
      }
    }
  });

  it("a server action whose multipart root field is not JSON is refused, not a 500 (React's decoder threw a SyntaxError)", async () => {
    for (const rootModel of ["[", "{", "not json", ""]) {
      await check({
        kind: "action",
        action: "summarize",
        page: "own",
        encoding: "reply-form",
        prev: {},
        fields: { invoice_id: new Ref("inv:free") },
        rootModel,
        cookie: { kind: "owner" },
        origin: "own",
        contentType: "right",
        garbage: new Uint8Array(),
        raw: [],
        json: [],
      });
    }
  });

  // Next.js (16.4.6) throws "The router state header was sent but could not be parsed" on an
  // RSC request whose Next-Router-State-Tree does not parse: a 500, before any code of ours
  // runs. proxy.ts refuses it first (lib/request-guards.ts; it sees the header because of
  // skipProxyUrlNormalize in next.config.ts), and a well-formed one still renders.
  it("a Next-Router-State-Tree header that does not parse is 400 (was a 500 from Next.js), and a well-formed one still renders", async () => {
    for (const method of ["GET", "HEAD"] as const) {
      for (const page of ["/invoices/:id", "/nowhere/:id", "/sign-in"]) {
        for (const state of [
          "%7B%22a%22",
          "not json",
          "%ZZ",
          encodeURIComponent("{}"),
          encodeURIComponent('["",{},null,null,null,"x",1]'),
          encodeURIComponent('[["id","x","nope",null],{}]'),
        ]) {
          const status = await check({
            kind: "page",
            method,
            page,
            id: new Ref("inv:own0"),
            path: "plain",
            cookie: { kind: "owner" },
            extra: { rsc: "1", "next-router-state-tree": state },
          });
          expect(status, `${method} ${page} with ${state}`).toBe(400);
        }
        const fine = encodeURIComponent(JSON.stringify(["", { children: ["__PAGE__", {}, null, null] }, null, null]));
        const status = await check({
          kind: "page",
          method,
          page,
          id: new Ref("inv:own0"),
          path: "plain",
          cookie: { kind: "owner" },
          extra: { rsc: "1", "next-router-state-tree": fine },
        });
        // Not refused by the guard (what the page then answers, 200, 307 or 404, is checked by check()).
        expect(status, `${method} ${page} with a well-formed tree`).not.toBe(400);
      }
    }
  });

  // With the image optimizer off (decision 0048), Next.js renders its not-found page for
  // /_next/image, and for /_next/static itself: proxy.ts's matcher left both out, so a broken
  // router state header there was Next's 500 again. The matcher now skips only /_next/static/.
  it("a broken Next-Router-State-Tree on /_next/image or /_next/static is 400, not a 500", async () => {
    for (const method of ["GET", "HEAD"]) {
      for (const target of [
        { to: "image" as const, query: "?url=%2Finvoices&w=64&q=75" },
        { to: "image" as const, query: "" },
        { to: "other" as const, path: "/_next/static" },
      ]) {
        for (const state of ["x", "%ZZ", encodeURIComponent("[1]")]) {
          const call: WireCall = {
            kind: "wire",
            method,
            target,
            form: "origin",
            cookie: { kind: "owner" },
            body: "none",
            extra: { rsc: "1", "next-router-state-tree": state },
          };
          expect(await check(call), `${method} ${JSON.stringify(target)} with ${state}`).toBe(400);
        }
      }
    }
  });
});

describe("fuzz: the built app over the wire", () => {
  it(`${RUNS} generated requests, server actions included: never a 5xx, and only the writes the contract allows`, async () => {
    await fc.assert(
      fc.asyncProperty(CALLS, async (call) => void (await check(call))),
      { numRuns: RUNS, ...replay },
    );
    // Opens refused over a cap are each held to write and dispatch nothing (above); how many a run
    // reaches is printed, not required: some 6 opens a run reach the check, 2-3 were refused, and a
    // run with none must not fail CI (the model test requires the 429: lease-model.test.ts).
  }, 900_000);
});
