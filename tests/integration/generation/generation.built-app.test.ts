// Generation end to end: the built app under `next start`, its real /api/inngest route
// driven by the local Inngest stand-in, on a PostgreSQL database of this file's own. Every
// scenario goes through the HTTP API as a client would, and checks the database too.
//
// PostgreSQL only: the running app is a second process, and PGlite allows one process per
// data folder, so an in-memory PGlite database cannot be shared with it. vitest.config.ts
// leaves `*.built-app.test.ts` out of the PGlite pass and says so; CI runs both passes.
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { inferenceLease } from "@/db/schema";
import { canonicalBody, signBody, type RunSummary } from "@claimcheck/inngest-local";
import { startAppServer, TEST_SESSION_PASSWORD, type AppServer } from "../../harness/app-server";
import * as rows from "../../support/db";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";
import { startFakeOpenAI, type FakeOpenAI } from "../../harness/fake-openai";
import { opened } from "../../harness/step-data";

if (inject("dbKind") !== "postgres") {
  throw new Error("generation.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

const GENERATE = "claimcheck-generate-lease-proposal";
const GENERATE_FAILURE = "claimcheck-generate-lease-proposal-failure";
const SWEEP = "claimcheck-expire-overdue-leases";
const BOOT_TIMEOUT = 300_000; // a cold `next build` takes a minute or two here

let t: TestDb;
let databaseUrl: string;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  databaseUrl = url.toString();
}, BOOT_TIMEOUT);
afterAll(() => t?.close());

// ---------------------------------------------------------------------------------------
// Helpers

type Res = { status: number; body: any; headers: Headers };

async function http(app: AppServer, method: string, path: string, opts: { cookie?: string; json?: unknown } = {}): Promise<Res> {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers,
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

async function signIn(app: AppServer, email: string): Promise<string> {
  const res = await http(app, "POST", "/api/session", { json: { email, password: PASSWORD } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

/** A new user with a signed-in session and an invoice of their own. */
async function actorWithInvoice(
  app: AppServer,
  counterparty: string,
  lines?: { description: string; quantity: number; unitPriceCents: number }[],
) {
  const user = await makeUser(t.db, "Generator");
  const inv = await makeInvoice(t.db, user.id, {
    counterparty,
    ...(lines ? { totalCents: lines.reduce((s, l) => s + l.quantity * l.unitPriceCents, 0) } : {}),
  });
  const cookie = await signIn(app, user.email);
  return { user, inv, cookie };
}

async function openLease(app: AppServer, cookie: string, invoiceId: string): Promise<string> {
  const res = await http(app, "POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.status).toBe("open");
  return res.body.lease_id as string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
): Promise<T> {
  const started = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    }
    await sleep(50);
  }
}

const leaseRow = (id: string) => rows.leaseRow(t.db, id);
const invoiceRow = (id: string) => rows.invoiceRow(t.db, id);
const events = (leaseId: string) => rows.leaseEvents(t.db, leaseId);
const kinds = (leaseId: string) => rows.eventKinds(t.db, leaseId);

function runsFor(app: AppServer, fnId: string, leaseId?: string): RunSummary[] {
  return app.inngest.runs().filter((r) => {
    if (r.functionId !== fnId) return false;
    if (!leaseId) return true;
    const data = r.event.data as { leaseId?: string; event?: { data?: { leaseId?: string } } };
    return data.leaseId === leaseId || data.event?.data?.leaseId === leaseId;
  });
}

function onlyRun(app: AppServer, fnId: string, leaseId: string): RunSummary {
  const runs = runsFor(app, fnId, leaseId);
  expect(runs, `runs of ${fnId} for lease ${leaseId}`).toHaveLength(1);
  return runs[0]!;
}

async function runEnded(app: AppServer, fnId: string, leaseId: string, timeoutMs?: number): Promise<RunSummary> {
  return waitFor(
    `a finished run of ${fnId} for lease ${leaseId}`,
    () => runsFor(app, fnId, leaseId).find((r) => r.status !== "running"),
    timeoutMs,
  );
}

/**
 * Waits until the run's generate step is inside the (slow, in-app) model call: the run has
 * started, and its one read before the model takes milliseconds against the model's seconds.
 * A close that landed before the model call would leave no late completion, which the tests
 * that use this then look for.
 */
async function generating(app: AppServer, leaseId: string) {
  await waitFor("the run to start", () => runsFor(app, GENERATE, leaseId).length > 0 || undefined);
  await sleep(500);
}

async function sendEvent(app: AppServer, event: { name: string; id?: string; data: Record<string, unknown> }) {
  const res = await fetch(`${app.inngestUrl}/e/${app.eventKey}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify([event]),
  });
  expect(res.status).toBe(200);
}

function money(cents: number, currency: string) {
  return new Intl.NumberFormat("en-US", { style: "currency", currency, minimumFractionDigits: 2 }).format(cents / 100);
}

// ---------------------------------------------------------------------------------------

describe("with the local model", () => {
  let app: AppServer;
  beforeAll(async () => {
    app = await startAppServer({ databaseUrl, model: { provider: "local" } });
  }, BOOT_TIMEOUT);
  afterAll(() => app?.stop());

  it("open → proposed within seconds, with a summary naming that invoice's counterparty and total", async () => {
    const { user, inv, cookie } = await actorWithInvoice(app, "Zephyr Metals GmbH");
    const other = await makeInvoice(t.db, user.id, { counterparty: "Quillfeather Stationers" });
    const before = await invoiceRow(inv.id);

    const started = Date.now();
    const leaseId = await openLease(app, cookie, inv.id);
    const lease = await waitFor(
      "the lease to be proposed",
      async () => {
        const res = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
        return res.body.status === "proposed" ? res.body : undefined;
      },
      10_000,
    );
    const elapsed = Date.now() - started;

    expect(elapsed).toBeLessThan(10_000);
    expect(lease.proposal.summary).toContain("Zephyr Metals GmbH");
    expect(lease.proposal.summary).toContain(money(inv.totalCents, inv.currency));
    expect(lease.proposal.summary).not.toContain(other.counterparty);
    expect(lease.proposal.model).toBe("local-summary-v1");
    expect(lease.events.map((e: { kind: string }) => e.kind)).toEqual(["opened", "proposed"]);

    // The database agrees, and the invoice itself waits for apply.
    const row = await leaseRow(leaseId);
    expect(row.status).toBe("proposed");
    expect(row.actorId).toBe(user.id);
    expect(row.proposal).toEqual(lease.proposal);
    expect(await kinds(leaseId)).toEqual(["opened", "proposed"]);
    const after = await invoiceRow(inv.id);
    expect(after.summary).toBeNull();
    expect(after.version).toBe(before.version);

    const run = await runEnded(app, GENERATE, leaseId);
    expect(run.status).toBe("completed");
    expect(await opened(run.output)).toEqual({ leaseId, outcome: "proposed" });
    expect(run.steps.map((s) => s.name)).toEqual(["generate", "propose"]);
    expect(run.eventId).toBe(`lease-opened-${leaseId}`);

    // The run nonce went to the Inngest server with the event, and to no client: not the
    // API, not the page (its RSC payload included), not the event stream's first frame.
    expect(row.runNonce).toMatch(/^[0-9a-f]{64}$/);
    expect((await opened<{ runNonce: string }>(run.event.data)).runNonce).toBe(row.runNonce);
    const seen = [
      JSON.stringify((await http(app, "GET", `/api/leases/${leaseId}`, { cookie })).body),
      JSON.stringify((await http(app, "GET", `/api/invoices/${inv.id}`, { cookie })).body),
      await (await fetch(`${app.url}/invoices/${inv.id}`, { headers: { cookie } })).text(),
      await (await fetch(`${app.url}/invoices/${inv.id}`, { headers: { cookie, rsc: "1" } })).text(),
    ];
    for (const text of seen) expect(text).not.toContain(row.runNonce);
  });

  it("the Inngest server keeps only ciphertext: no run nonce, invoice field or summary in its events, steps or outputs", async () => {
    const { inv, cookie } = await actorWithInvoice(app, "Obsidian Quarry Holdings");
    const leaseId = await openLease(app, cookie, inv.id);
    await waitFor("the lease to be proposed", async () => (await leaseRow(leaseId)).status === "proposed");
    const run = await runEnded(app, GENERATE, leaseId);
    const row = await leaseRow(leaseId);
    const summary = (row.proposal as { summary: string }).summary;
    expect(summary).toContain("Obsidian Quarry Holdings");

    // Everything the server keeps of this lifecycle, by every way it can be read.
    const auth = { authorization: `Bearer ${app.signingKey}` };
    const stored = [
      await (await fetch(`${app.inngestUrl}/events`, { headers: auth })).text(),
      await (await fetch(`${app.inngestUrl}/runs`, { headers: auth })).text(),
      await (await fetch(`${app.inngestUrl}/ui/runs/${run.id}`, { headers: auth })).text(),
      await (await fetch(`${app.inngestUrl}/ui/events`, { headers: auth })).text(),
      JSON.stringify(app.inngest.runs()),
    ].join("\n");
    const secrets = {
      runNonce: row.runNonce,
      summary,
      counterparty: inv.counterparty,
      number: inv.number,
      total: money(inv.totalCents, inv.currency),
      line: "Consulting, November",
    };
    for (const [what, text] of Object.entries(secrets)) expect(stored, what).not.toContain(text);
    expect(stored).toContain("__ENCRYPTED__");
    // What stays plain, on purpose (docs/decisions/0049): the lease id cancelOn matches, the event's name.
    expect(run.event.data.leaseId).toBe(leaseId);
    expect(run.event.name).toBe("lease/opened");

    // And it is that data, sealed: the key opens the nonce, the summary and the outcome.
    expect((await opened<{ runNonce: string }>(run.event.data)).runNonce).toBe(row.runNonce);
    const generate = run.steps.find((s) => s.name === "generate")!;
    expect(await opened(generate.output)).toMatchObject({ ok: true, output: { summary } });
    expect(await opened(run.output)).toEqual({ leaseId, outcome: "proposed" });
  });

  it("no answer names a lease_event id: not the API, not the invoice page (its RSC payload, where events are listed, included), not the stream", async () => {
    // Event ids far from every other number on the page, so one that leaks is found by its digits.
    await t.db.execute(sql`select setval('lease_event_id_seq', greatest(987650000, (select coalesce(max(id), 0) from lease_event)))`);
    const { inv, cookie } = await actorWithInvoice(app, "Counter Hidden Ltd");
    const leaseId = await openLease(app, cookie, inv.id);
    await waitFor("the lease to be proposed", async () => (await leaseRow(leaseId)).status === "proposed");
    // More than a page, so the panel's lease carries a cursor too.
    await t.db.execute(sql`insert into lease_event (lease_id, kind, detail)
      select ${leaseId}, 'apply_refused', '{"code": "lease_proposed"}'::jsonb from generate_series(1, 60)`);
    const stream = await fetch(`${app.url}/api/leases/${leaseId}/events`, { headers: { cookie } });
    const reader = stream.body!.getReader();
    let frame = "";
    while (!frame.includes("event: lease")) frame += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const lease = (await http(app, "GET", `/api/leases/${leaseId}`, { cookie })).body;
    expect(lease.events_before).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const seen = {
      lease: JSON.stringify(lease),
      invoice: JSON.stringify((await http(app, "GET", `/api/invoices/${inv.id}`, { cookie })).body),
      page: await (await fetch(`${app.url}/invoices/${inv.id}`, { headers: { cookie } })).text(),
      rsc: await (await fetch(`${app.url}/invoices/${inv.id}`, { headers: { cookie, rsc: "1" } })).text(),
      stream: frame,
    };
    expect(seen.rsc).toContain("Counter Hidden Ltd");
    for (const [where, text] of Object.entries(seen))
      expect({ where, leak: /98765\d{4}/.exec(text)?.[0] ?? null }).toEqual({ where, leak: null });
  });

  it("a duplicated lease/opened event has one effect", async () => {
    const { inv, cookie } = await actorWithInvoice(app, "Duplicate Delivery Ltd");
    const leaseId = await openLease(app, cookie, inv.id);
    await waitFor("the lease to be proposed", async () => (await leaseRow(leaseId)).status === "proposed");
    const proposal = (await leaseRow(leaseId)).proposal;
    const sent = app.inngest.runs().find((r) => r.eventId === `lease-opened-${leaseId}`)!.event;

    // The same event id again, twice: the executor deduplicates it.
    await sendEvent(app, { name: "lease/opened", id: `lease-opened-${leaseId}`, data: sent.data });
    await sendEvent(app, { name: "lease/opened", id: `lease-opened-${leaseId}`, data: sent.data });
    // And a copy under another id (a delivery no executor would catch): the lease guards itself.
    await sendEvent(app, { name: "lease/opened", id: `replayed-${leaseId}`, data: sent.data });

    const runs = await waitFor("both runs to finish", () => {
      const r = runsFor(app, GENERATE, leaseId);
      return r.length === 2 && r.every((x) => x.status !== "running") ? r : undefined;
    });
    expect(runs.map((r) => r.eventId).sort()).toEqual([`lease-opened-${leaseId}`, `replayed-${leaseId}`].sort());
    const replay = runs.find((r) => r.eventId === `replayed-${leaseId}`)!;
    expect(await opened(replay.output)).toEqual({ leaseId, outcome: "stopped", reason: "not_open", status: "proposed" });
    expect(replay.steps.map((s) => s.name)).toEqual(["generate"]); // stopped at its read: no second model call, no propose

    const row = await leaseRow(leaseId);
    expect(row.status).toBe("proposed");
    expect(row.proposal).toEqual(proposal);
    expect(await kinds(leaseId)).toEqual(["opened", "proposed"]);
    const res = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(res.body.status).toBe("proposed");
    expect(res.body.events.map((e: { kind: string }) => e.kind)).toEqual(["opened", "proposed"]);
  });

  it("a forged, unsigned call to /api/inngest gets 401 and writes nothing (nor does a wrongly signed or stale one)", async () => {
    const { user, inv, cookie } = await actorWithInvoice(app, "Forgery Target plc");
    // An open lease with no run of its own: whatever happens to it is the forger's doing.
    const [seeded] = await t.db
      .insert(inferenceLease)
      .values({
        actorId: user.id,
        invoiceId: inv.id,
        purpose: "summarize_invoice",
        status: "open",
        deadlineAt: sql`now() + interval '60 seconds'`,
      })
      .returning();
    const leaseId = seeded!.id;

    // The 2026-11-30 attack on a production build: the generate function called directly, with memoized results
    // (keyed by the sha1 of the step ids) that make it propose the attacker's text.
    const sha1 = (s: string) => createHash("sha1").update(s).digest("hex");
    const event = {
      name: "lease/opened",
      id: `lease-opened-${leaseId}`,
      ts: Date.now(),
      data: { leaseId, actorId: user.id, invoiceId: inv.id, purpose: "summarize_invoice" },
    };
    const forged = {
      event,
      events: [event],
      steps: {
        [sha1("load-lease")]: {
          data: {
            ok: true,
            actorId: user.id,
            purpose: "summarize_invoice",
            deadlineAt: seeded!.deadlineAt.toISOString(),
            remainingMs: 60_000,
          },
        },
        [sha1("generate")]: { data: { ok: true, actorId: user.id, summary: "FORGED: pay IBAN XX00 1234 5678", model: "forged" } },
      },
      ctx: {
        run_id: "01FORGEDRUN",
        attempt: 0,
        max_attempts: 4,
        disable_immediate_execution: false,
        use_api: false,
        stack: { stack: [sha1("load-lease"), sha1("generate")], current: 1 },
      },
    };
    const bodyText = canonicalBody(forged);
    const otherKey = `signkey-test-${"ab".repeat(32)}`;
    const stale = new Date(Date.now() - 10 * 60_000);
    const headerSets: Record<string, string>[] = [
      {},
      { "x-inngest-signature": "t=1&s=00" },
      { "x-inngest-signature": signBody(bodyText, otherKey) },
      { "x-inngest-signature": signBody(bodyText, app.signingKey, stale) },
    ];
    for (const fnId of [GENERATE, GENERATE_FAILURE]) {
      for (const extra of headerSets) {
        const res = await fetch(`${app.serveUrl}?fnId=${fnId}&stepId=step`, {
          method: "POST",
          headers: { "content-type": "application/json", ...extra },
          body: bodyText,
        });
        expect(res.status, `${fnId} with ${JSON.stringify(extra)}`).toBe(401);
        expect(await res.text()).not.toContain("FORGED");
      }
    }
    expect(await leaseRow(leaseId)).toEqual(seeded);
    expect(await events(leaseId)).toEqual([]);
    expect((await invoiceRow(inv.id)).summary).toBeNull();
    expect(runsFor(app, GENERATE, leaseId)).toHaveLength(0);

    // Nor can an unsigned PUT re-register the app (under a forged host), nor a GET read its setup.
    const put = await fetch(app.serveUrl, { method: "PUT", headers: { "x-forwarded-host": "evil.example" } });
    expect(put.status).toBe(401);
    expect(app.inngestLogs().some((l) => l.includes("evil.example"))).toBe(false);
    const get = await fetch(app.serveUrl);
    expect(get.status).toBe(401);
    const introspection = await get.text();
    for (const secret of ["generate-lease-proposal", "function_count", "has_signing_key", "mode", "claimcheck"]) {
      expect(introspection).not.toContain(secret);
    }
    // And the API still tells alice where her lease stands: open, untouched.
    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.body).toMatchObject({ status: "open", proposal: null, events: [] });
  });

  it("events need the event key: the stand-in answers 401 without it and starts nothing", async () => {
    const { user, inv } = await actorWithInvoice(app, "Keyless Sender GmbH");
    const data = { leaseId: "6f1c1a52-6d55-4a0e-9a43-3f2f2b8f1a01", actorId: user.id, invoiceId: inv.id, purpose: "summarize_invoice" };
    for (const key of ["test-key", `${app.eventKey}x`, ""]) {
      const res = await fetch(`${app.inngestUrl}/e/${key}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify([{ name: "lease/opened", data }]),
      });
      expect(res.status, `key "${key}"`).toBe(key === "" ? 404 : 401);
    }
    expect(runsFor(app, GENERATE, data.leaseId)).toHaveLength(0);
  });

  it("a lease/opened that fails its schema but carries the lease's nonce: run_mismatch, the lease unchanged", async () => {
    const { user, inv } = await actorWithInvoice(app, "Misshapen Events AG");
    // An open lease with no run of its own, so only the sent event's run can touch it.
    const [seeded] = await t.db
      .insert(inferenceLease)
      .values({
        actorId: user.id,
        invoiceId: inv.id,
        purpose: "summarize_invoice",
        status: "open",
        deadlineAt: sql`now() + interval '60 seconds'`,
      })
      .returning();
    const leaseId = seeded!.id;
    const before = await leaseRow(leaseId);
    // Whoever holds the nonce (read from the server's event store) still cannot close the lease
    // by sending it with data the app never sends: purpose is not a string.
    await sendEvent(app, {
      name: "lease/opened",
      id: `misshapen-${leaseId}`,
      data: { leaseId, actorId: user.id, invoiceId: inv.id, purpose: 7, runNonce: seeded!.runNonce },
    });

    const run = await runEnded(app, GENERATE, leaseId);
    expect(run.status).toBe("failed");
    expect(run.steps).toEqual([]); // failed before any step: no read, no model call
    const failure = await runEnded(app, GENERATE_FAILURE, leaseId);
    expect(failure.status).toBe("completed");
    expect(await opened(failure.output)).toEqual({ closed: false, refused: "run_mismatch" });

    expect(await leaseRow(leaseId)).toEqual(before);
    expect(await events(leaseId)).toEqual([{ kind: "run_mismatch", detail: { step: "fail", status: "open" } }]);
    expect((await invoiceRow(inv.id)).summary).toBeNull();
  });

  it("the sweep expires an abandoned lease", async () => {
    const { user, inv, cookie } = await actorWithInvoice(app, "Abandoned Ventures");
    // Abandoned: opened with only the contract's columns, past its deadline, no run for it.
    const [seeded] = await t.db
      .insert(inferenceLease)
      .values({
        actorId: user.id,
        invoiceId: inv.id,
        purpose: "summarize_invoice",
        status: "open",
        deadlineAt: sql`now() - interval '5 seconds'`,
      })
      .returning();
    const leaseId = seeded!.id;

    const res = await fetch(`${app.inngestUrl}/fn/expire-overdue-leases/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${app.signingKey}` },
      body: "{}",
    });
    expect(res.status).toBe(200);
    const { runId } = (await res.json()) as { runId: string };
    const run = await waitFor("the sweep run to finish", () => app.inngest.runs().find((r) => r.id === runId && r.status !== "running"));
    expect(run.functionId).toBe(SWEEP);
    expect(run.status).toBe("completed");
    // (A cron-started sweep at a minute boundary may have taken this lease first: same function.)
    expect(await opened(run.output)).toMatchObject({ expired: expect.any(Number), batches: 1, more: false });
    expect(run.steps.map((s) => s.name)).toEqual(["expire-batch-1"]);

    const row = await leaseRow(leaseId);
    expect(row.status).toBe("expired");
    expect(row.closedReason).toBe("deadline_passed");
    expect(await events(leaseId)).toEqual([{ kind: "expired", detail: { by: "sweep" } }]);
    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.status).toBe(200);
    expect(api.body.status).toBe("expired");
    expect(api.body.events).toEqual([expect.objectContaining({ kind: "expired", detail: { by: "sweep" } })]);
    expect((await invoiceRow(inv.id)).summary).toBeNull();
  });
});

// A model that cannot be stopped once asked (MODEL_IGNORE_ABORT): the close still aborts the
// call's signal, the model answers anyway, and its answer is recorded as a late completion.
// A model that can be stopped is dropped at the close: tests/integration/generation/model-abort.built-app.test.ts.
describe("with a slow local model that ignores the abort", () => {
  const LATENCY_MS = 2500;
  let app: AppServer;
  beforeAll(async () => {
    app = await startAppServer({ databaseUrl, model: { provider: "local", latencyMs: LATENCY_MS, ignoreAbort: true } });
  }, BOOT_TIMEOUT);
  afterAll(() => app?.stop());

  it("cancel during generation: the run is cancelled, no proposal, the invoice untouched", async () => {
    const { inv, cookie } = await actorWithInvoice(app, "Cancelled Freight Co");
    const before = await invoiceRow(inv.id);
    const leaseId = await openLease(app, cookie, inv.id);
    await generating(app, leaseId);

    const cancel = await http(app, "POST", `/api/leases/${leaseId}/cancel`, { cookie });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toEqual({ status: "rejected", lease_id: leaseId });

    const run = await runEnded(app, GENERATE, leaseId);
    expect(run.status).toBe("cancelled");
    expect(run.cancelledBy).toContain("lease/closed");
    expect(run.steps.map((s) => s.name)).not.toContain("propose");

    // The model call still finishes; its completion is logged and writes nothing.
    await waitFor("the late completion", async () => (await kinds(leaseId)).includes("late_completion"), LATENCY_MS + 10_000);
    const row = await leaseRow(leaseId);
    expect(row.status).toBe("rejected");
    expect(row.closedReason).toBe("cancelled");
    expect(row.proposal).toBeNull();
    expect(await kinds(leaseId)).toEqual(["opened", "cancelled", "late_completion"]);
    const after = await invoiceRow(inv.id);
    expect(after.summary).toBeNull();
    expect(after.version).toBe(before.version);

    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.body.status).toBe("rejected");
    expect(api.body.proposal).toBeNull();
    expect(onlyRun(app, GENERATE, leaseId).status).toBe("cancelled");
    expect(runsFor(app, GENERATE_FAILURE, leaseId)).toHaveLength(0);
  });

  it("sign-out during generation: the lease is rejected and the late completion logged", async () => {
    const { user, inv, cookie } = await actorWithInvoice(app, "Signed Out Supplies");
    const before = await invoiceRow(inv.id);
    const leaseId = await openLease(app, cookie, inv.id);
    await generating(app, leaseId);

    const out = await http(app, "DELETE", "/api/session", { cookie });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ status: "signed_out", revoked: [leaseId] });
    // The signed-out cookie no longer authenticates, even replayed.
    expect((await http(app, "GET", "/api/session", { cookie })).status).toBe(401);

    const run = await runEnded(app, GENERATE, leaseId);
    expect(run.status).toBe("cancelled");

    await waitFor("the late completion", async () => (await kinds(leaseId)).includes("late_completion"), LATENCY_MS + 10_000);
    const row = await leaseRow(leaseId);
    expect(row.status).toBe("rejected");
    expect(row.closedReason).toBe("signed_out");
    expect(row.proposal).toBeNull();
    expect(await events(leaseId)).toEqual([
      expect.objectContaining({ kind: "opened" }),
      { kind: "revoked", detail: { reason: "signed_out" } },
      expect.objectContaining({ kind: "late_completion", detail: expect.objectContaining({ status: "rejected" }) }),
    ]);
    // Logged as a line too, for operators.
    expect(app.appLogs().some((l) => l.includes('"completion not proposed"') && l.includes(leaseId))).toBe(true);
    const after = await invoiceRow(inv.id);
    expect(after.summary).toBeNull();
    expect(after.version).toBe(before.version);

    // Signed in again, the actor sees the lease where it stands.
    const again = await signIn(app, user.email);
    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie: again });
    expect(api.body.status).toBe("rejected");
    expect(api.body.events.map((e: { kind: string }) => e.kind)).toEqual(["opened", "revoked", "late_completion"]);
  });
});

describe("with a lease shorter than the generation, and a model that ignores the abort", () => {
  let app: AppServer;
  beforeAll(async () => {
    // The model answers about 0.8 s after the 2 s deadline, although the deadline aborted
    // its call: a model that cannot be stopped. (One that can is dropped at the deadline.)
    app = await startAppServer({ databaseUrl, leaseTtlSeconds: 2, model: { provider: "local", latencyMs: 2800, ignoreAbort: true } });
  }, BOOT_TIMEOUT);
  afterAll(() => app?.stop());

  it("a generation that ends after the deadline: expired, a late_completion event, the invoice untouched", async () => {
    const { inv, cookie } = await actorWithInvoice(app, "Tardy Tooling AG");
    const before = await invoiceRow(inv.id);
    const leaseId = await openLease(app, cookie, inv.id);

    const run = await runEnded(app, GENERATE, leaseId, 15_000);
    expect(run.status).toBe("completed");
    expect(await opened(run.output)).toMatchObject({ leaseId, outcome: "stopped", status: "expired" });

    const row = await leaseRow(leaseId);
    expect(row.status).toBe("expired");
    expect(row.closedReason).toBe("deadline_passed");
    expect(row.proposal).toBeNull();
    const evs = await events(leaseId);
    expect(evs.map((e) => e.kind)).toEqual(["opened", "expired", "late_completion"]);
    expect(evs[2]!.detail).toMatchObject({ status: "expired", model: "local-summary-v1" });
    const after = await invoiceRow(inv.id);
    expect(after.summary).toBeNull();
    expect(after.version).toBe(before.version);

    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.body.status).toBe("expired");
    expect(api.body.proposal).toBeNull();
    const apply = await http(app, "POST", `/api/leases/${leaseId}/apply`, { cookie });
    expect(apply.status).toBe(409);
    expect(apply.body).toEqual({ detail: "lease_expired" });
    expect(runsFor(app, GENERATE_FAILURE, leaseId)).toHaveLength(0);
  });
});

describe("with an OpenAI-compatible model", () => {
  const API_KEY = "sk-test-not-a-real-key";
  let app: AppServer;
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    app = await startAppServer({
      databaseUrl,
      model: { provider: "openai-compatible", baseUrl: fake.baseURL, apiKey: API_KEY, name: "fake-model", timeoutMs: 10_000 },
    });
  }, BOOT_TIMEOUT);
  afterAll(async () => {
    await app?.stop();
    await fake?.close();
  });

  it("the model failing twice then succeeding gives one proposal", async () => {
    const { user, inv, cookie } = await actorWithInvoice(app, "Flaky Networks Inc");
    const calls: number[] = [];
    fake.respondWith((req, index) => {
      if (req.actorId !== user.id) return { kind: "status", status: 500 };
      calls.push(index);
      return calls.length <= 2
        ? { kind: "status", status: 500 }
        : { kind: "answer", summary: "Flaky Networks Inc bills EUR 12,345.50 for consulting; due 2026-12-01." };
    });

    const leaseId = await openLease(app, cookie, inv.id);
    const run = await runEnded(app, GENERATE, leaseId);

    expect(run.status).toBe("completed");
    expect(await opened(run.output)).toEqual({ leaseId, outcome: "proposed" });
    expect(calls).toHaveLength(3);
    expect(run.steps.find((s) => s.name === "generate")!.attempts).toBe(3);
    const row = await leaseRow(leaseId);
    expect(row.status).toBe("proposed");
    expect(row.proposal).toEqual({
      summary: "Flaky Networks Inc bills EUR 12,345.50 for consulting; due 2026-12-01.",
      model: "fake-model",
    });
    expect(await kinds(leaseId)).toEqual(["opened", "proposed"]);
    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.body.status).toBe("proposed");
    expect(api.body.proposal.summary).toContain("Flaky Networks Inc");
    expect(runsFor(app, GENERATE_FAILURE, leaseId)).toHaveLength(0);

    // What left the building: the invoice and the actor id; the key only as the credential.
    const sent = fake.requests.filter((r) => r.actorId === user.id);
    expect(sent).toHaveLength(3);
    const cookieValue = cookie.split("=").slice(1).join("=");
    for (const r of sent) {
      expect(r.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(r.headers.cookie).toBeUndefined();
      expect(r.body).toContain("Flaky Networks Inc");
      expect(r.body).not.toContain(cookieValue);
      expect(r.body).not.toContain(TEST_SESSION_PASSWORD);
      expect(r.body).not.toContain(API_KEY);
      expect(r.body).not.toContain(user.email);
    }
  });

  it("a model unreachable every time: retried while a retry could finish in the lease's time, then generation_failed (model_unavailable)", async () => {
    const { user, inv, cookie } = await actorWithInvoice(app, "Unreachable Models SA");
    fake.respondWith((req) => (req.actorId === user.id ? { kind: "status", status: 503 } : { kind: "echo" }));

    const started = Date.now();
    const leaseId = await openLease(app, cookie, inv.id);
    // 50 s left: after attempt 0 a retry still fits (the server waits 15 s plus up to 30 s, then
    // the model may take its 10 s); after attempt 1 (30 s plus up to 30 s) it does not. The
    // stand-in's waits are the real ones at 1/100 here; the function counts the real ones.
    await t.db.execute(sql`update inference_lease set deadline_at = now() + interval '50 seconds' where id = ${leaseId}`);
    const run = await runEnded(app, GENERATE, leaseId);

    expect(run.status).toBe("failed");
    expect(run.steps.find((s) => s.name === "generate")!.attempts).toBe(2);
    expect(fake.requests.filter((r) => r.actorId === user.id)).toHaveLength(2);
    const failure = await runEnded(app, GENERATE_FAILURE, leaseId);
    expect(await opened(failure.output)).toEqual({ closed: true });
    expect(await leaseRow(leaseId)).toMatchObject({ status: "rejected", closedReason: "generation_failed", proposal: null });
    expect(await events(leaseId)).toEqual([
      expect.objectContaining({ kind: "opened" }),
      { kind: "generation_failed", detail: { code: "model_unavailable", message: "The model could not be reached.", closed: true } },
    ]);
    expect(Date.now() - started).toBeLessThan(15_000); // long before the deadline
    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.body).toMatchObject({ status: "rejected", closed_reason: "generation_failed" });
  });

  it("malformed model output: generation_failed, the lease closed at once, no retry", async () => {
    const { user, inv, cookie } = await actorWithInvoice(app, "Garbled Output BV");
    const before = await invoiceRow(inv.id);
    fake.respondWith({ kind: "malformed" });

    const started = Date.now();
    const leaseId = await openLease(app, cookie, inv.id);
    const run = await runEnded(app, GENERATE, leaseId);
    expect(run.status).toBe("failed");
    expect(run.steps.find((s) => s.name === "generate")!.attempts).toBe(1);
    const failure = await runEnded(app, GENERATE_FAILURE, leaseId);
    expect(failure.status).toBe("completed");
    expect(await opened(failure.output)).toEqual({ closed: true });

    const row = await leaseRow(leaseId);
    expect(row.status).toBe("rejected");
    expect(row.closedReason).toBe("generation_failed");
    expect(row.proposal).toBeNull();
    const evs = await events(leaseId);
    expect(evs.map((e) => e.kind)).toEqual(["opened", "generation_failed"]);
    // A code and plain words for the actor; the error itself is in the server log only.
    expect(evs[1]!.detail).toEqual({ code: "model_output_invalid", message: "The model's answer could not be used.", closed: true });
    expect(app.appLogs().some((l) => l.includes('"generation failed"') && l.includes(leaseId) && l.includes("ModelOutputError"))).toBe(
      true,
    );
    // Closed at once, long before the 90 s deadline.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(fake.requests.filter((r) => r.actorId === user.id)).toHaveLength(1);
    const after = await invoiceRow(inv.id);
    expect(after.summary).toBeNull();
    expect(after.version).toBe(before.version);

    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.body.status).toBe("rejected");
    expect(api.body.closed_reason).toBe("generation_failed");
    expect(api.body.events.map((e: { kind: string }) => e.kind)).toEqual(["opened", "generation_failed"]);
  });
});

// Production's retry schedule (the stand-in at scale 1: 15 s, 30 s, 1 min… plus up to 30 s) and
// a lease no retry fits in: the user reads "could not be reached" at once, not "expired" later.
describe("on the real server's retry schedule, with a model that is never reachable", () => {
  const TTL_SECONDS = 20;
  let app: AppServer;
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.respondWith({ kind: "status", status: 503 });
    app = await startAppServer({
      databaseUrl,
      leaseTtlSeconds: TTL_SECONDS,
      retryScale: 1,
      model: {
        provider: "openai-compatible",
        baseUrl: fake.baseURL,
        apiKey: "sk-test-not-a-real-key",
        name: "fake-model",
        timeoutMs: 5_000,
      },
    });
  }, BOOT_TIMEOUT);
  afterAll(async () => {
    await app?.stop();
    await fake?.close();
  });

  it("a lease shorter than the first retry's wait ends generation_failed (model_unavailable) at once, not expired", async () => {
    const { user, inv, cookie } = await actorWithInvoice(app, "Flaky Model Ltd");
    const started = Date.now();
    const leaseId = await openLease(app, cookie, inv.id);

    // Long enough for the lease to expire and a retry to come (at most 45 s) if the run retried.
    const closed = await waitFor(
      "the lease to close",
      async () => ((await leaseRow(leaseId)).status !== "open" ? leaseRow(leaseId) : undefined),
      60_000,
    );
    expect(closed).toMatchObject({ status: "rejected", closedReason: "generation_failed" });
    expect(Date.now() - started).toBeLessThan(TTL_SECONDS * 1000);
    expect((await events(leaseId)).slice(1)).toEqual([
      { kind: "generation_failed", detail: { code: "model_unavailable", message: "The model could not be reached.", closed: true } },
    ]);
    const run = await runEnded(app, GENERATE, leaseId);
    expect(run.status).toBe("failed");
    expect(run.steps.find((s) => s.name === "generate")!.attempts).toBe(1);
    expect(fake.requests.filter((r) => r.actorId === user.id)).toHaveLength(1);
    // The app's stdout can trail the run's end, which the stand-in saw first: wait for the line.
    await expect
      .poll(
        () => app.appLogs().some((l) => l.includes('"generation failed"') && l.includes(leaseId) && l.includes("no retry could finish")),
        {
          timeout: 10_000,
        },
      )
      .toBe(true);
    const api = await http(app, "GET", `/api/leases/${leaseId}`, { cookie });
    expect(api.body).toMatchObject({ status: "rejected", closed_reason: "generation_failed" });
  });
});
