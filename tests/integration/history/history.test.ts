// An invoice's history and what hangs on it, on both databases: the merged timeline (changes and
// summary attempts by time, newest first, paged, scoped to the organization), the summary that
// went out of date and what changed since, the admin's owner change (PUT /api/invoices/:id/owner)
// with the leases it withdraws, and the invoice's own event stream (GET /api/invoices/:id/events).
import type { LeaseProposal } from "@/lib/lease-codes";
import { eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease, invoice, invoiceChange, leaseEvent } from "@/db/schema";
import { updateInvoice } from "@/lib/invoices";
import { reassignInvoice } from "@/lib/invoice-owner";
import { applyLease, invoiceTimeline, type LeaseDispatch } from "@/lib/leases";
import { changedSince, staleSummaries, staleSummary } from "@/lib/summary-staleness";
import { staleWords, writtenForWords } from "@/app/_lib/history-words";
import * as invoiceEvents from "@/app/api/invoices/[id]/events/route";
import { api, signInCookie } from "../../support/api";
import * as rows from "../../support/db";
import { proposedLease } from "../purposes/purpose-support";
import { asMember, joinOrgOf, makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

function recorder(): LeaseDispatch & { closed: [string[], string][] } {
  const closed: [string[], string][] = [];
  return {
    closed,
    async leaseOpened() {},
    async leaseClosed(ids, reason) {
      closed.push([ids, reason]);
    },
  };
}

async function seedLease(
  actorId: string,
  invoiceId: string,
  status: string,
  proposal: LeaseProposal | null = null,
  minutesAgo = 0,
  purpose = "summarize_invoice",
) {
  const [row] = await t.db
    .insert(inferenceLease)
    .values({
      actorId,
      invoiceId,
      purpose,
      status: status as never,
      deadlineAt: sql`now() + interval '60 seconds'`,
      proposal,
      createdAt: sql`now() - make_interval(mins => ${minutesAgo})`,
    })
    .returning();
  return row!;
}

/** A team: Alice (admin) and Dave (member) of one organization, with an invoice of Dave's. */
async function team() {
  const alice = await makeUser(t.db, "Alice");
  const dave = await makeUser(t.db, "Dave");
  await joinOrgOf(t.db, dave, alice, "member");
  const inv = await makeInvoice(t.db, dave.id);
  return { alice, dave, inv, admin: await asMember(t.db, alice), member: await asMember(t.db, dave) };
}

/** A summary applied through the domain: a proposed lease of the owner's, applied. */
async function applySummary(ownerId: string, invoiceId: string) {
  const lease = await seedLease(ownerId, invoiceId, "proposed", { summary: "Ten days of consulting.", model: "m" });
  expect(await applyLease(t.db, ownerId, lease.id)).toMatchObject({ ok: true });
  return lease;
}

describe("the timeline: every change and every attempt, newest first, paged", () => {
  it("numbers each purpose's attempts on their own: the first review is Review attempt 1 whatever summaries came before it", async () => {
    const { dave, inv, member } = await team();
    for (const [purpose, minutesAgo] of [
      ["summarize_invoice", 50],
      ["summarize_invoice", 40],
      ["review_invoice", 30],
      ["categorize_lines", 20],
      ["summarize_invoice", 10],
      ["review_invoice", 5],
    ] as const) {
      const lease = await seedLease(dave.id, inv.id, "rejected", null, minutesAgo, purpose);
      await t.db.update(inferenceLease).set({ closedReason: "cancelled" }).where(eq(inferenceLease.id, lease.id));
    }
    const all = await invoiceTimeline(t.db, member, inv.id, { offset: 0, limit: 10 });
    expect(all!.entries.flatMap((e) => (e.type === "attempt" ? [`${e.attempt.purpose} ${e.attempt.number}`] : []))).toEqual([
      "review_invoice 2",
      "summarize_invoice 3",
      "categorize_lines 1",
      "review_invoice 1",
      "summarize_invoice 2",
      "summarize_invoice 1",
    ]);
  });

  it("interleaves invoice_change rows and attempts by time, numbers the attempts, names the owners, pages, and is another organization's 404", async () => {
    const { alice, dave, inv, admin, member } = await team();
    const old = await seedLease(dave.id, inv.id, "rejected", null, 30);
    await t.db.update(inferenceLease).set({ closedReason: "cancelled" }).where(eq(inferenceLease.id, old.id));
    await t.db.insert(invoiceChange).values({
      invoiceId: inv.id,
      actorId: dave.id,
      kind: "created",
      version: 1,
      changes: {},
      at: sql`now() - interval '40 minutes'`,
    });
    const edit = await updateInvoice(t.db, member, inv.id, { due_on: "2026-12-20" }, recorder());
    expect(edit.ok).toBe(true);
    const applied = await applySummary(dave.id, inv.id);
    expect((await reassignInvoice(t.db, admin, inv.id, alice.id, recorder())).ok).toBe(true);

    const all = await invoiceTimeline(t.db, member, inv.id, { offset: 0, limit: 10 });
    expect(all!.total).toBe(5);
    expect(all!.entries.map((e) => (e.type === "change" ? e.change.kind : `attempt ${e.attempt.number}`))).toEqual([
      "owner_changed",
      "attempt 2",
      "edited",
      "attempt 1",
      "created",
    ]);
    const [owner, second, edited] = all!.entries;
    expect(owner).toMatchObject({ type: "change", change: { actorName: "Alice", changes: { owner: { from: dave.id, to: alice.id } } } });
    expect(all!.names).toEqual({ [dave.id]: "Dave", [alice.id]: "Alice" });
    expect(second).toMatchObject({ type: "attempt", attempt: { id: applied.id, actorName: "Dave", status: "applied" } });
    expect(edited).toMatchObject({
      type: "change",
      change: { actorName: "Dave", version: inv.version + 1, changes: { due_on: { from: "2026-12-01", to: "2026-12-20" } } },
    });
    // Newest first throughout.
    const times = all!.entries.map((e) => e.at.getTime());
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const page1 = await invoiceTimeline(t.db, member, inv.id, { offset: 0, limit: 2 });
    const page2 = await invoiceTimeline(t.db, member, inv.id, { offset: 2, limit: 2 });
    const page3 = await invoiceTimeline(t.db, member, inv.id, { offset: 4, limit: 2 });
    expect([...page1!.entries, ...page2!.entries, ...page3!.entries]).toEqual(all!.entries);
    expect(page3!.entries).toHaveLength(1);
    expect(page1!.total).toBe(5);

    const bob = await makeUser(t.db, "Bob");
    expect(await invoiceTimeline(t.db, await asMember(t.db, bob), inv.id, { offset: 0, limit: 10 })).toBeNull();
    expect(await invoiceTimeline(t.db, member, "not-an-id", { offset: 0, limit: 10 })).toBeNull();
  });
});

describe("a summary that went out of date", () => {
  it("is flagged once the invoice changes after it was applied, with what changed since, in words; a current summary is not", async () => {
    const { dave, inv, member } = await team();
    await applySummary(dave.id, inv.id);
    const written = (await rows.invoiceRow(t.db, inv.id)).version;
    expect(await staleSummary(t.db, member, inv.id)).toBeNull();

    await updateInvoice(t.db, member, inv.id, { due_on: "2026-12-20" }, recorder());
    const stale = await staleSummary(t.db, member, inv.id);
    expect(stale).toEqual({ summaryVersion: written, version: written + 1, changed: ["due_on"] });
    expect(staleWords(stale!)).toBe(`Summary written for version ${written}; the due date changed since.`);

    await updateInvoice(t.db, member, inv.id, { counterparty: "Contoso Ltd", due_on: "2026-12-21" }, recorder());
    const twice = await staleSummary(t.db, member, inv.id);
    expect(twice!.changed).toEqual(["counterparty", "due_on"]);
    expect(staleWords(twice!)).toBe(`Summary written for version ${written}; the counterparty and due date changed since.`);

    // The list asks for all of the organization's at once; an invoice never summarized is not flagged.
    const other = await makeInvoice(t.db, dave.id);
    await updateInvoice(t.db, member, other.id, { number: "INV-X1" }, recorder());
    const map = await staleSummaries(t.db, member);
    expect(map.has(inv.id)).toBe(true);
    expect(map.has(other.id)).toBe(false);
    // Nothing rewrote the summary.
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBe("Ten days of consulting.");

    // Another organization sees nothing of it.
    const bob = await makeUser(t.db, "Bob");
    expect(await staleSummary(t.db, await asMember(t.db, bob), inv.id)).toBeNull();

    // Summarized again: current.
    await applySummary(dave.id, inv.id);
    expect(await staleSummary(t.db, member, inv.id)).toBeNull();
  });

  it("stays current when another purpose's apply (review notes, categories) bumps the version: that changes nothing a summary read", async () => {
    const { dave, inv, member } = await team();
    await applySummary(dave.id, inv.id);
    for (const purpose of ["review_invoice", "categorize_lines"] as const) {
      const { leaseId } = await proposedLease(t.db, dave.id, inv.id, purpose);
      expect(await applyLease(t.db, dave.id, leaseId)).toMatchObject({ ok: true });
    }
    const row = await rows.invoiceRow(t.db, inv.id);
    expect(row.version).toBeGreaterThan(row.summaryVersion!);
    expect(await staleSummary(t.db, member, inv.id)).toBeNull();
    expect((await staleSummaries(t.db, member)).has(inv.id)).toBe(false);
    // The review notes, written before the categories, are as current: nothing of the invoice changed since.
    expect(row.reviewNotesVersion).toBeLessThan(row.version);
    expect(await changedSince(t.db, member, inv.id, row.reviewNotesVersion!)).toEqual([]);
    expect(writtenForWords(row.reviewNotesVersion!, [])).toBe(`Written for version ${row.reviewNotesVersion}.`);
    // An edit after them puts both out of date, naming only what the edit changed.
    await updateInvoice(t.db, member, inv.id, { due_on: "2026-12-20" }, recorder());
    expect(await staleSummary(t.db, member, inv.id)).toMatchObject({ summaryVersion: row.summaryVersion, changed: ["due_on"] });
    const changed = await changedSince(t.db, member, inv.id, row.reviewNotesVersion!);
    expect(changed).toEqual(["due_on"]);
    expect(writtenForWords(row.reviewNotesVersion!, changed)).toBe(
      `Written for version ${row.reviewNotesVersion}; the due date changed since.`,
    );
    // Another organization's member learns nothing of it.
    expect(await changedSince(t.db, await asMember(t.db, await makeUser(t.db, "Bob")), inv.id, 0)).toEqual([]);
  });

  it("says the invoice changed when no field was recorded, and names an owner change", () => {
    expect(staleWords({ summaryVersion: 3, version: 4, changed: [] })).toBe("Summary written for version 3; the invoice changed since.");
    expect(staleWords({ summaryVersion: 3, version: 5, changed: ["owner", "status"] })).toBe(
      "Summary written for version 3; the owner and status changed since.",
    );
  });
});

describe("PUT /api/invoices/:id/owner", () => {
  it("an admin gives the invoice to a member: 200 the invoice, version bumped, owner_changed recorded with ids", async () => {
    const { alice, dave, inv } = await team();
    const cookie = await signInCookie(alice.email);
    const res = await api("PUT", `/api/invoices/${inv.id}/owner`, { cookie, json: { owner_id: alice.id } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: inv.id, owner_id: alice.id, version: inv.version + 1 });
    const changes = await t.db.select().from(invoiceChange).where(eq(invoiceChange.invoiceId, inv.id));
    expect(changes).toMatchObject([
      { kind: "owner_changed", actorId: alice.id, version: inv.version + 1, changes: { owner: { from: dave.id, to: alice.id } } },
    ]);
    // To the owner it already has: the invoice as it is, nothing written.
    const again = await api("PUT", `/api/invoices/${inv.id}/owner`, { cookie, json: { owner_id: alice.id } });
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(inv.version + 1);
    expect(await t.db.select().from(invoiceChange).where(eq(invoiceChange.invoiceId, inv.id))).toHaveLength(1);
  });

  it("refuses: 401 signed out, 403 not an admin or cross-site, 404 another organization's or a bad id, 415 not JSON, 422 an owner outside the organization or a bad body; nothing written", async () => {
    const { dave, inv, alice } = await team();
    const bob = await makeUser(t.db, "Bob");
    const before = await rows.invoiceRow(t.db, inv.id);
    const put = (cookie: string | undefined, json: unknown, id = inv.id) => api("PUT", `/api/invoices/${id}/owner`, { cookie, json });

    expect((await put(undefined, { owner_id: alice.id })).status).toBe(401);
    const daveCookie = await signInCookie(dave.email);
    expect(await put(daveCookie, { owner_id: alice.id })).toMatchObject({ status: 403, body: { detail: "forbidden" } });
    const bobCookie = await signInCookie(bob.email);
    expect(await put(bobCookie, { owner_id: bob.id })).toMatchObject({ status: 404, body: { detail: "invoice_not_found" } });
    expect(await put(bobCookie, { owner_id: "x" })).toMatchObject({ status: 404, body: { detail: "invoice_not_found" } });
    const aliceCookie = await signInCookie(alice.email);
    expect(await put(aliceCookie, { owner_id: alice.id }, "nope")).toMatchObject({ status: 404, body: { detail: "invoice_not_found" } });
    expect(await put(aliceCookie, { owner_id: bob.id })).toMatchObject({ status: 422, body: { detail: "invalid_request" } });
    expect(await put(aliceCookie, { owner_id: crypto.randomUUID() })).toMatchObject({ status: 422, body: { detail: "invalid_request" } });
    expect(await put(aliceCookie, { owner_id: "not-an-id" })).toMatchObject({ status: 422, body: { detail: "invalid_request" } });
    expect(await put(aliceCookie, {})).toMatchObject({ status: 422, body: { detail: "invalid_request" } });

    // A cross-site write and a body that is not JSON, before anything is read (docs/contract.md, "Cross-site writes").
    const body = JSON.stringify({ owner_id: alice.id });
    const path = `/api/invoices/${inv.id}/owner`;
    expect(await api("PUT", path, { cookie: aliceCookie, raw: body, headers: { origin: "http://evil.example" } })).toMatchObject({
      status: 403,
      body: { detail: "cross_origin" },
    });
    expect(await api("PUT", path, { cookie: aliceCookie, raw: body, headers: { "content-type": "text/plain" } })).toMatchObject({
      status: 415,
      body: { detail: "unsupported_media_type" },
    });

    const after = await rows.invoiceRow(t.db, inv.id);
    expect({ owner: after.ownerId, version: after.version }).toEqual({ owner: before.ownerId, version: before.version });
    expect(await t.db.select().from(invoiceChange).where(eq(invoiceChange.invoiceId, inv.id))).toEqual([]);
  });

  it("withdraws the lease in flight as an edit does (invoice_changed by owner_change), tells its generation, and apply then answers invoice_changed", async () => {
    const { alice, dave, inv, admin } = await team();
    const lease = await seedLease(dave.id, inv.id, "proposed", { summary: "s", model: "m" });
    const dispatch = recorder();
    const result = await reassignInvoice(t.db, admin, inv.id, alice.id, dispatch);
    expect(result).toMatchObject({ ok: true, withdrawn: [lease.id] });
    expect(await rows.leaseRow(t.db, lease.id)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
    const [event] = await t.db
      .select({ kind: leaseEvent.kind, detail: leaseEvent.detail })
      .from(leaseEvent)
      .where(eq(leaseEvent.leaseId, lease.id));
    expect(event).toEqual({
      kind: "invoice_changed",
      detail: { by: "owner_change", lease_version: inv.version, invoice_version: inv.version + 1, fields: ["owner"] },
    });
    expect(dispatch.closed).toEqual([[[lease.id], "invoice_changed"]]);
    expect(await applyLease(t.db, dave.id, lease.id)).toEqual({ ok: false, code: "invoice_changed" });
    expect((await rows.invoiceRow(t.db, inv.id)).summary).toBeNull();
  });

  it("the route tells the generation through the one door (lease/closed sent)", async () => {
    const { alice, dave, inv } = await team();
    const lease = await seedLease(dave.id, inv.id, "open");
    const res = await api("PUT", `/api/invoices/${inv.id}/owner`, {
      cookie: await signInCookie(alice.email),
      json: { owner_id: alice.id },
    });
    expect(res.status).toBe(200);
    expect(await rows.leaseRow(t.db, lease.id)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
    const { sink } = await import("../../support/api");
    await expect
      .poll(() => sink().events)
      .toContainEqual(expect.objectContaining({ name: "lease/closed", data: expect.objectContaining({ leaseId: lease.id }) }));
  });

  it("raced with an apply, one of two things, never both: the summary applied and then out of date, or the apply refused invoice_changed", async () => {
    for (let round = 0; round < 10; round++) {
      const { alice, dave, inv, admin } = await team();
      const lease = await seedLease(dave.id, inv.id, "proposed", { summary: "Raced summary.", model: "m" });
      const [applied, reassigned] = await Promise.all([
        applyLease(t.db, dave.id, lease.id),
        reassignInvoice(t.db, admin, inv.id, alice.id, recorder()),
      ]);
      expect(reassigned.ok).toBe(true);
      const row = await rows.invoiceRow(t.db, inv.id);
      expect(row.ownerId).toBe(alice.id);
      if (applied.ok) {
        // The apply went first: its summary stands, written for the version before the change.
        expect(row).toMatchObject({ summary: "Raced summary.", summaryVersion: inv.version + 1, version: inv.version + 2 });
        expect((await staleSummary(t.db, admin, inv.id))!.changed).toEqual(["owner"]);
        expect(await rows.leaseRow(t.db, lease.id)).toMatchObject({ status: "applied" });
      } else {
        expect(applied).toEqual({ ok: false, code: "invoice_changed" });
        expect(row).toMatchObject({ summary: null, version: inv.version + 1 });
        expect(await rows.leaseRow(t.db, lease.id)).toMatchObject({ status: "rejected", closedReason: "invoice_changed" });
      }
    }
  });
});

describe("GET /api/invoices/:id/events", () => {
  type Stream = { res: Response; abort: () => void; reader: ReadableStreamDefaultReader<Uint8Array> | null };
  const open: Stream[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.abort();
  });

  async function stream(cookie: string | undefined, invoiceId: string): Promise<Stream> {
    const controller = new AbortController();
    const req = new Request(`http://127.0.0.1:3000/api/invoices/${invoiceId}/events`, { headers: cookie ? { cookie } : {} });
    Object.defineProperty(req, "signal", { value: controller.signal });
    const res = await invoiceEvents.GET(req, { params: Promise.resolve({ id: invoiceId }) });
    const s = { res, abort: () => controller.abort(), reader: res.status === 200 ? res.body!.getReader() : null };
    open.push(s);
    return s;
  }

  /** The versions the stream sent, read until `count` of them came (or it ended). */
  async function versions(s: Stream, count: number): Promise<{ versions: number[]; ended: boolean }> {
    const decoder = new TextDecoder();
    let text = "";
    const seen = () => [...text.matchAll(/^event: invoice\ndata: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as { version: number }).version);
    for (;;) {
      const { done, value } = await s.reader!.read();
      if (done) return { versions: seen(), ended: true };
      text += decoder.decode(value, { stream: true });
      if (seen().length >= count) return { versions: seen(), ended: false };
    }
  }

  it("sends the version now, then each new one: an edit by a teammate, an owner change, a summary applied", async () => {
    const { alice, dave, inv, admin, member } = await team();
    const s = await stream(await signInCookie(alice.email), inv.id);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect((await versions(s, 1)).versions).toEqual([inv.version]);

    await updateInvoice(t.db, member, inv.id, { counterparty: "Contoso Ltd" }, recorder());
    expect((await versions(s, 1)).versions).toEqual([inv.version + 1]);
    await applySummary(dave.id, inv.id);
    expect((await versions(s, 1)).versions).toEqual([inv.version + 2]);
    await reassignInvoice(t.db, admin, inv.id, alice.id, recorder());
    expect((await versions(s, 1)).versions).toEqual([inv.version + 3]);
    // A write that does not change the version (none does, but the trigger says so) sends nothing; a direct bump does.
    await t.db
      .update(invoice)
      .set({ version: sql`${invoice.version} + 1` })
      .where(eq(invoice.id, inv.id));
    expect((await versions(s, 1)).versions).toEqual([inv.version + 4]);
  });

  it("is scoped to the organization: another's invoice, a missing or malformed id is 404; signed out 401; a sign-out ends it", async () => {
    const { alice, inv } = await team();
    const bob = await makeUser(t.db, "Bob");
    const bobs = await stream(await signInCookie(bob.email), inv.id);
    expect(bobs.res.status).toBe(404);
    expect(await bobs.res.json()).toEqual({ detail: "invoice_not_found" });
    expect((await stream(await signInCookie(alice.email), "nope")).res.status).toBe(404);
    expect((await stream(await signInCookie(alice.email), crypto.randomUUID())).res.status).toBe(404);
    expect((await stream(undefined, inv.id)).res.status).toBe(401);

    const cookie = await signInCookie(alice.email);
    const s = await stream(cookie, inv.id);
    expect((await versions(s, 1)).versions).toEqual([inv.version]);
    expect((await api("DELETE", "/api/session", { cookie })).status).toBe(200);
    // It says it ended for good (so the page does not reconnect into a 401), then ends.
    let rest = "";
    for (let chunk = await s.reader!.read(); !chunk.done; chunk = await s.reader!.read()) rest += new TextDecoder().decode(chunk.value);
    expect(rest).toContain('event: end\ndata: {"reason":"not_signed_in"}');
  });
});
