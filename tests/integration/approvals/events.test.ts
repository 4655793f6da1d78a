// GET /api/approvals/events (docs/decisions/0087), on PGlite and PostgreSQL: the fingerprint of the
// pending requests a member sees, sent at once and again on each change: a submission, a decision,
// a withdrawal by an edit or a cancel (the events of the leases it follows), a request running out
// (a timer on the database clock), and a role lost; scoped to the organization and the role; a
// sign-out ends it with `event: end`.
import { createHash } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as approvalEvents from "@/app/api/approvals/events/route";
import { inferenceLease } from "@/db/schema";
import { pendingSnapshot } from "@/lib/approvals/queue";
import { api } from "../../support/api";
import { asMember, openTestDb, type TestDb } from "../../support/db";
import { approve, decline, fourEyes, submitted, team, type Team } from "./support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

type Frame = { fingerprint: string; waiting: number };
type Stream = { res: Response; abort: () => void; reader: ReadableStreamDefaultReader<Uint8Array> | null; text: string; consumed: number };
const open: Stream[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.abort();
});

async function stream(cookie: string | undefined): Promise<Stream> {
  const controller = new AbortController();
  const req = new Request("http://127.0.0.1:3000/api/approvals/events", { headers: cookie ? { cookie } : {} });
  Object.defineProperty(req, "signal", { value: controller.signal });
  const res = await approvalEvents.GET(req, { params: Promise.resolve({}) });
  const s = { res, abort: () => controller.abort(), reader: res.status === 200 ? res.body!.getReader() : null, text: "", consumed: 0 };
  open.push(s);
  return s;
}

const framesIn = (text: string) => [...text.matchAll(/^event: approvals\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as Frame);

/**
 * Reads the stream until a frame equal to `want` comes; the frames read, from the one after the
 * last awaited. A stream that ends first fails the test; one that never sends it, the test's time limit.
 */
async function until(s: Stream, want: Frame): Promise<Frame[]> {
  const decoder = new TextDecoder();
  const from = s.consumed;
  for (;;) {
    const frames = framesIn(s.text);
    const hit = frames.findIndex((f, i) => i >= from && JSON.stringify(f) === JSON.stringify(want));
    if (hit >= 0) {
      s.consumed = hit + 1;
      return frames.slice(from, hit + 1);
    }
    const { done, value } = await s.reader!.read();
    if (done) throw new Error(`the stream ended before ${JSON.stringify(want)}; it sent ${JSON.stringify(frames.slice(from))}`);
    s.text += decoder.decode(value, { stream: true });
  }
}

const fingerprintOf = (ids: string[]) =>
  createHash("sha256")
    .update([...ids].sort().join(","))
    .digest("hex")
    .slice(0, 16);
const NONE = fingerprintOf([]);

const submitDaves = (tm: Team) => submitted(t.db, tm);

it("an approver's stream: each submission, a withdrawal by an edit, a decline and an approval, as they happen", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const s = await stream(tm.cookies.carol);
  expect(s.res.status).toBe(200);
  expect(s.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  expect(await until(s, { fingerprint: NONE, waiting: 0 })).toHaveLength(1);

  const a = await submitDaves(tm);
  expect(await until(s, { fingerprint: fingerprintOf([a.approvalId]), waiting: 1 })).toHaveLength(1);
  const b = await submitDaves(tm);
  const c = await submitDaves(tm);
  // Two submissions come as one frame or two.
  const frames = await until(s, { fingerprint: fingerprintOf([a.approvalId, b.approvalId, c.approvalId]), waiting: 3 });
  expect(frames.length).toBeLessThanOrEqual(2);

  // An edit withdraws a's request: the stream follows a's lease, so it says so at once.
  expect(await api("PATCH", `/api/invoices/${a.inv.id}`, { cookie: tm.cookies.dave, json: { counterparty: "Contoso" } })).toMatchObject({
    status: 200,
  });
  expect(await until(s, { fingerprint: fingerprintOf([b.approvalId, c.approvalId]), waiting: 2 })).toHaveLength(1);
  // Ada declines b; Carol approves c.
  expect((await decline(tm, "ada", b.approvalId, "Not this month")).status).toBe(200);
  expect(await until(s, { fingerprint: fingerprintOf([c.approvalId]), waiting: 1 })).toHaveLength(1);
  expect((await approve(tm, "carol", c.approvalId, c.hash)).status).toBe(200);
  expect(await until(s, { fingerprint: NONE, waiting: 0 })).toHaveLength(1);
});

it("the requester's stream shows their own request, and its cancel; another organization's admin sees none of it", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const dave = await stream(tm.cookies.dave);
  const bea = await stream(tm.cookies.bea);
  expect(await until(dave, { fingerprint: NONE, waiting: 0 })).toHaveLength(1);
  expect(await until(bea, { fingerprint: NONE, waiting: 0 })).toHaveLength(1);

  const a = await submitDaves(tm);
  // Dave's own: in his set, not waiting for him.
  expect(await until(dave, { fingerprint: fingerprintOf([a.approvalId]), waiting: 0 })).toHaveLength(1);
  // Bea's set does not hold it (the read is scoped to her organization), and a stream she opens now says so.
  expect(await pendingSnapshot(t.db, await asMember(t.db, tm.bea))).toMatchObject({ fingerprint: NONE, waiting: 0 });
  expect(await until(await stream(tm.cookies.bea), { fingerprint: NONE, waiting: 0 })).toHaveLength(1);
  // Carol's holds it, waiting for her.
  expect(await pendingSnapshot(t.db, await asMember(t.db, tm.carol))).toEqual(
    expect.objectContaining({ fingerprint: fingerprintOf([a.approvalId]), waiting: 1, leaseIds: [a.leaseId] }),
  );

  // Dave withdraws it (the discard): the lease closes, the stream follows it.
  expect((await api("POST", `/api/leases/${a.leaseId}/cancel`, { cookie: tm.cookies.dave })).status).toBe(200);
  expect(await until(dave, { fingerprint: NONE, waiting: 0 })).toHaveLength(1);
});

it("a request running out is sent when it does, by the database clock", async () => {
  const tm = await team(t.db);
  await fourEyes(tm);
  const s = await stream(tm.cookies.carol);
  expect(await until(s, { fingerprint: NONE, waiting: 0 })).toHaveLength(1);
  const a = await submitDaves(tm);
  expect(await until(s, { fingerprint: fingerprintOf([a.approvalId]), waiting: 1 })).toHaveLength(1);
  // Its window's end moved to a second from now (a test cannot wait hours), then a second request
  // submitted: the read it causes sets the timer from the nearer end.
  await t.db
    .update(inferenceLease)
    .set({ deadlineAt: sql`now() + interval '1 second'` })
    .where(eq(inferenceLease.id, a.leaseId));
  const b = await submitDaves(tm);
  expect(await until(s, { fingerprint: fingerprintOf([a.approvalId, b.approvalId]), waiting: 2 })).toHaveLength(1);
  // Nothing else happens: only the timer can send the next frame.
  expect(await until(s, { fingerprint: fingerprintOf([b.approvalId]), waiting: 1 })).toHaveLength(1);
});

describe("scope and end", () => {
  it("401 signed out; a role lost empties the queue at the next change; a sign-out ends it for good", async () => {
    const tm = await team(t.db);
    await fourEyes(tm);
    expect((await stream(undefined)).res.status).toBe(401);

    const s = await stream(tm.cookies.carol);
    expect(await until(s, { fingerprint: NONE, waiting: 0 })).toHaveLength(1);
    const a = await submitDaves(tm);
    expect(await until(s, { fingerprint: fingerprintOf([a.approvalId]), waiting: 1 })).toHaveLength(1);
    // Carol is made a member: she may not approve, so her set is empty at the next read (a further submission causes one).
    expect(await api("PATCH", `/api/org/members/${tm.carol.id}`, { cookie: tm.cookies.ada, json: { role: "member" } })).toMatchObject({
      status: 200,
    });
    await submitDaves(tm);
    expect(await until(s, { fingerprint: NONE, waiting: 0 })).toHaveLength(1);

    expect((await api("DELETE", "/api/session", { cookie: tm.cookies.carol })).status).toBe(200);
    let rest = "";
    for (let chunk = await s.reader!.read(); !chunk.done; chunk = await s.reader!.read()) rest += new TextDecoder().decode(chunk.value);
    expect(rest).toContain('event: end\ndata: {"reason":"not_signed_in"}');
  });
});
