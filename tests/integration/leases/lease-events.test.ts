// GET /api/leases/:id/events, through the real route handler on both databases: the cap on
// streams per session, the stream's end (terminal state, client gone), frames built from the
// change's notice (no read) that say what a read says, and a sign-out ending the session's streams.
import { eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { inferenceLease } from "@/db/schema";
import * as leases from "@/lib/leases";
import * as eventsRoute from "@/app/api/leases/[id]/events/route";
import * as feed from "@/lib/lease-feed";
import { MAX_STREAMS_PER_SESSION } from "@/app/_lib/sse";
import { api, signInCookie } from "../../support/api";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

// The stream's reads, counted: a frame built from a notice must not read.
vi.mock("@/lib/leases", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/leases")>();
  return { ...actual, readLeaseForSession: vi.fn(actual.readLeaseForSession) };
});
const streamReads = () => vi.mocked(leases.readLeaseForSession).mock.calls.length;
// LISTEN, so a test can make it fail to start (the database refusing a listener).
vi.mock("@/lib/lease-feed", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@/lib/lease-feed")>();
  return { ...actual, subscribeLease: vi.fn(actual.subscribeLease) };
});

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

type Stream = { res: Response; abort: () => void; reader: ReadableStreamDefaultReader<Uint8Array> | null };
const open: Stream[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.abort();
});

async function stream(cookie: string, leaseId: string): Promise<Stream> {
  const controller = new AbortController();
  const req = new Request(`http://127.0.0.1:3000/api/leases/${leaseId}/events`, { headers: { cookie } });
  // The client's own signal, as `next start` hands the route a signal of the connection (a
  // Request built with { signal } here did not always pass the abort on). The same cap and
  // release through a real server: tests/integration/hostile/hostile-http.built-app.test.ts.
  Object.defineProperty(req, "signal", { value: controller.signal });
  const res = await eventsRoute.GET(req, { params: Promise.resolve({ id: leaseId }) });
  const s = { res, abort: () => controller.abort(), reader: res.status === 200 ? res.body!.getReader() : null };
  open.push(s);
  return s;
}

/** The `lease` events a stream sent until it ended (or `until` saw enough). */
async function leaseEvents(s: Stream, until?: (statuses: string[]) => boolean): Promise<{ statuses: string[]; ended: boolean }> {
  const decoder = new TextDecoder();
  let text = "";
  const statuses = () =>
    [...text.matchAll(/^event: lease\ndata: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as { status: string }).status);
  for (;;) {
    const { done, value } = await s.reader!.read();
    if (done) return { statuses: statuses(), ended: true };
    text += decoder.decode(value, { stream: true });
    if (until?.(statuses())) return { statuses: statuses(), ended: false };
  }
}

async function world() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  const cookie = await signInCookie(alice.email);
  const opened = await api("POST", "/api/leases", { cookie, json: { invoice_id: inv.id, purpose: "summarize_invoice" } });
  expect(opened.status).toBe(201);
  return { alice, inv, cookie, leaseId: opened.body.lease_id as string };
}

describe("streams per session", () => {
  it(`${MAX_STREAMS_PER_SESSION} streams per session; the next is 429 too_many_streams with Retry-After; other sessions are unaffected; closing one frees a slot`, async () => {
    expect(MAX_STREAMS_PER_SESSION).toBe(20);
    const { alice, cookie, leaseId } = await world();
    const streams: Stream[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_SESSION; i++) {
      const s = await stream(cookie, leaseId);
      expect(s.res.status).toBe(200);
      streams.push(s);
    }
    const refused = await stream(cookie, leaseId);
    expect(refused.res.status).toBe(429);
    expect(await refused.res.json()).toEqual({ detail: "too_many_streams" });
    expect(Number(refused.res.headers.get("retry-after"))).toBeGreaterThan(0);

    // The same user signed in elsewhere is another session, with slots of its own.
    const otherSession = await signInCookie(alice.email);
    expect((await stream(otherSession, leaseId)).res.status).toBe(200);

    // A client that goes away (abort) frees its slot...
    streams[0]!.abort();
    expect((await stream(cookie, leaseId)).res.status).toBe(200);
    expect((await stream(cookie, leaseId)).res.status).toBe(429);
    // ...and so does one that stops reading (cancel).
    await streams[1]!.reader!.cancel();
    expect((await stream(cookie, leaseId)).res.status).toBe(200);
  });

  it("a refused or missing lease takes no slot", async () => {
    const { cookie } = await world();
    for (let i = 0; i < MAX_STREAMS_PER_SESSION + 5; i++) {
      expect((await stream(cookie, "00000000-0000-4000-8000-000000000000")).res.status).toBe(404);
    }
    const { leaseId } = await world();
    expect((await stream(cookie, leaseId)).res.status).toBe(404); // another actor's lease
  });
});

describe("when the stream cannot listen", () => {
  it("503 events_unavailable with Retry-After; the lease still reads, and the next stream opens", async () => {
    const { cookie, leaseId } = await world();
    vi.mocked(feed.subscribeLease).mockRejectedValueOnce(new Error("LISTEN could not start"));
    const refused = await stream(cookie, leaseId);
    expect(refused.res.status).toBe(503);
    expect(await refused.res.json()).toEqual({ detail: "events_unavailable" });
    expect(Number(refused.res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await api("GET", `/api/leases/${leaseId}`, { cookie })).status).toBe(200);
    expect((await stream(cookie, leaseId)).res.status).toBe(200);
  });
});

describe("a stream ends once its lease is terminal", () => {
  it("rejected (cancel): the final state is sent, then the stream ends and frees its slot", async () => {
    const { cookie, leaseId } = await world();
    const s = await stream(cookie, leaseId);
    expect((await leaseEvents(s, (st) => st.includes("open"))).statuses).toContain("open");
    expect((await api("POST", `/api/leases/${leaseId}/cancel`, { cookie })).status).toBe(200);
    const rest = await leaseEvents(s);
    expect(rest).toEqual({ statuses: ["rejected"], ended: true });
  });

  it("applied", async () => {
    const { cookie, leaseId } = await world();
    await t.db.update(inferenceLease).set({ status: "proposed", proposal: { summary: "A summary", model: "test" } }).where(eq(inferenceLease.id, leaseId));
    const s = await stream(cookie, leaseId);
    expect((await leaseEvents(s, (st) => st.includes("proposed"))).statuses).toContain("proposed");
    expect((await api("POST", `/api/leases/${leaseId}/apply`, { cookie })).status).toBe(200);
    expect(await leaseEvents(s)).toEqual({ statuses: ["applied"], ended: true });
  });

  it("expired (the deadline passes while the stream is open)", async () => {
    const { cookie, leaseId } = await world();
    await t.db.update(inferenceLease).set({ deadlineAt: sql`now() + interval '1 second'` }).where(eq(inferenceLease.id, leaseId));
    const s = await stream(cookie, leaseId);
    const all = await leaseEvents(s);
    expect(all.ended).toBe(true);
    expect(all.statuses.at(-1)).toBe("expired");
  });

  it("already terminal when opened: one event, then the end", async () => {
    const { cookie, leaseId } = await world();
    await api("POST", `/api/leases/${leaseId}/cancel`, { cookie });
    const s = await stream(cookie, leaseId);
    expect(s.res.status).toBe(200);
    expect(await leaseEvents(s)).toEqual({ statuses: ["rejected"], ended: true });
  });

  it("ended streams give their slots back", async () => {
    const { cookie, leaseId } = await world();
    await api("POST", `/api/leases/${leaseId}/cancel`, { cookie });
    for (let i = 0; i < MAX_STREAMS_PER_SESSION + 5; i++) {
      const s = await stream(cookie, leaseId);
      expect(s.res.status).toBe(200);
      expect((await leaseEvents(s)).ended).toBe(true);
    }
  });
});

/** The `lease` frames a stream sends from now until `until` saw enough (or it ended). */
async function frames(s: Stream, until: (bodies: Record<string, unknown>[]) => boolean): Promise<{ bodies: Record<string, unknown>[]; ended: boolean }> {
  const decoder = new TextDecoder();
  let text = "";
  const bodies = () => [...text.matchAll(/^event: lease\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
  for (;;) {
    const { done, value } = await s.reader!.read();
    if (done) return { bodies: bodies(), ended: true };
    text += decoder.decode(value, { stream: true });
    if (until(bodies())) return { bodies: bodies(), ended: false };
  }
}

/** What GET /api/leases/:id says now, without its clock. */
async function readNow(cookie: string, leaseId: string) {
  const res = await api("GET", `/api/leases/${leaseId}`, { cookie });
  expect(res.status).toBe(200);
  const { server_now: _now, ...body } = res.body as Record<string, unknown>;
  return body;
}
const withoutClock = ({ server_now: _now, ...body }: Record<string, unknown>) => body;

describe("frames from notices: what a read would say, without the read", () => {
  it("proposed, a refusal that leaves the lease as it was, and applied: each frame equals GET /api/leases/:id, and none was read", async () => {
    const { cookie, leaseId } = await world();
    const s = await stream(cookie, leaseId);
    await frames(s, (b) => b.length === 1);
    // GET /api/leases/:id reads through the same function: the stream's own reads are counted
    // from each frame's arrival to the next change's frame, before the test reads for itself.
    let reads = streamReads();

    // Propose as the run would, with the lease's own nonce.
    const [row] = await t.db.select({ actorId: inferenceLease.actorId, runNonce: inferenceLease.runNonce }).from(inferenceLease).where(eq(inferenceLease.id, leaseId));
    const proposed = await leases.proposeLease(t.db, { leaseId, actorId: row!.actorId, runNonce: row!.runNonce!, proposal: { summary: "Northwind: 3 lines, due in 30 days.", model: "test-model" } });
    expect(proposed).toEqual({ ok: true });
    const afterPropose = await frames(s, (b) => b.length === 1);
    expect(streamReads()).toBe(reads);
    expect(afterPropose.bodies[0]!.status).toBe("proposed");
    expect(withoutClock(afterPropose.bodies[0]!)).toEqual(await readNow(cookie, leaseId));

    // A forged completion: refused (run_mismatch), recorded as an event, the lease unchanged.
    const forged = await leases.proposeLease(t.db, { leaseId, actorId: row!.actorId, runNonce: "0".repeat(64), proposal: { summary: "FORGED", model: "x" } });
    expect(forged).toMatchObject({ ok: false, code: "run_mismatch" });
    reads = streamReads();
    const afterRefusal = await frames(s, (b) => b.length === 1);
    expect(streamReads()).toBe(reads);
    expect(afterRefusal.bodies[0]!.status).toBe("proposed");
    expect((afterRefusal.bodies[0]!.proposal as { summary: string }).summary).toBe("Northwind: 3 lines, due in 30 days.");
    expect(afterRefusal.bodies[0]!.events).toContainEqual(expect.objectContaining({ kind: "run_mismatch" }));
    expect(withoutClock(afterRefusal.bodies[0]!)).toEqual(await readNow(cookie, leaseId));

    reads = streamReads();
    expect((await api("POST", `/api/leases/${leaseId}/apply`, { cookie })).status).toBe(200);
    const afterApply = await frames(s, () => false);
    expect(streamReads()).toBe(reads);
    expect(afterApply.ended).toBe(true);
    expect(afterApply.bodies.at(-1)!.status).toBe("applied");
    expect(withoutClock(afterApply.bodies.at(-1)!)).toEqual(await readNow(cookie, leaseId));
  });

  it(`a lease with more than ${leases.LEASE_EVENTS_PAGE} events: the first frame and each frame from a notice keep the latest page and its cursor, as GET /api/leases/:id does`, async () => {
    const { cookie, leaseId } = await world();
    const N = leases.LEASE_EVENTS_PAGE;
    // Refusals piled up before the stream opens (opened + N + 4 events: a page and more).
    await t.db.execute(sql`insert into lease_event (lease_id, kind, detail)
      select ${leaseId}, 'apply_refused', jsonb_build_object('code', 'lease_open') from generate_series(1, ${N + 4}) g`);
    const s = await stream(cookie, leaseId);
    const first = await frames(s, (b) => b.length === 1);
    expect(first.bodies[0]!.events).toHaveLength(N);
    expect(first.bodies[0]!.events_before).toEqual(expect.any(String));
    expect(withoutClock(first.bodies[0]!)).toEqual(await readNow(cookie, leaseId));

    // A refusal through the API (recorded, nothing changed), then the proposal: each a frame
    // built from its notice, the oldest event giving way each time.
    let reads = streamReads();
    expect((await api("POST", `/api/leases/${leaseId}/apply`, { cookie })).status).toBe(409);
    const afterRefusal = await frames(s, (b) => b.length === 1);
    expect(streamReads()).toBe(reads);
    expect(afterRefusal.bodies[0]!.events).toHaveLength(N);
    expect(afterRefusal.bodies[0]!.events_before).not.toBe(first.bodies[0]!.events_before);
    expect(withoutClock(afterRefusal.bodies[0]!)).toEqual(await readNow(cookie, leaseId));

    const [row] = await t.db.select({ actorId: inferenceLease.actorId, runNonce: inferenceLease.runNonce }).from(inferenceLease).where(eq(inferenceLease.id, leaseId));
    reads = streamReads();
    expect(await leases.proposeLease(t.db, { leaseId, actorId: row!.actorId, runNonce: row!.runNonce!, proposal: { summary: "S", model: "test-model" } })).toEqual({ ok: true });
    const afterPropose = await frames(s, (b) => b.length === 1);
    expect(streamReads()).toBe(reads);
    expect(afterPropose.bodies[0]!.status).toBe("proposed");
    expect((afterPropose.bodies[0]!.events as { kind: string }[]).at(-1)!.kind).toBe("proposed");
    expect(withoutClock(afterPropose.bodies[0]!)).toEqual(await readNow(cookie, leaseId));
  });

  it("a proposal too long for NOTIFY's payload is read instead, and the frame still says what a read says", async () => {
    const { cookie, leaseId } = await world();
    const s = await stream(cookie, leaseId);
    await frames(s, (b) => b.length === 1);
    const before = streamReads();
    const [row] = await t.db.select({ actorId: inferenceLease.actorId, runNonce: inferenceLease.runNonce }).from(inferenceLease).where(eq(inferenceLease.id, leaseId));
    const summary = "A long summary. ".repeat(600); // 9,600 bytes: over the 8,000 a NOTIFY carries
    expect(await leases.proposeLease(t.db, { leaseId, actorId: row!.actorId, runNonce: row!.runNonce!, proposal: { summary, model: "test-model" } })).toEqual({ ok: true });
    const got = await frames(s, (b) => b.length === 1);
    expect(streamReads()).toBe(before + 1);
    expect((got.bodies[0]!.proposal as { summary: string }).summary).toBe(summary);
    expect(withoutClock(got.bodies[0]!)).toEqual(await readNow(cookie, leaseId));
  });
});

describe("a sign-out ends the session's streams", () => {
  it("at once and with no further frame; the same actor's other session keeps its stream and hears the next change", async () => {
    const { alice, cookie, leaseId } = await world();
    const other = await signInCookie(alice.email);
    const mine = await stream(cookie, leaseId);
    const theirs = await stream(other, leaseId);
    await frames(mine, (b) => b.length === 1);
    await frames(theirs, (b) => b.length === 1);

    // The other session signs out: the lease was opened by `cookie`'s session, so it stays open.
    const out = await api("DELETE", "/api/session", { cookie: other });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ status: "signed_out", revoked: [] });
    expect(await frames(theirs, () => false)).toEqual({ bodies: [], ended: true });

    // A change after it reaches the session still signed in, and no one else.
    expect((await api("POST", `/api/leases/${leaseId}/cancel`, { cookie })).status).toBe(200);
    const rest = await frames(mine, () => false);
    expect(rest.ended).toBe(true);
    expect(rest.bodies.map((b) => b.status)).toEqual(["rejected"]);
  });
});
