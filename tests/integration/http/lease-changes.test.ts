// GET /api/leases/:id/changes ("what will change"): the proposal against the invoice's targets
// now, for the lease's actor while it is proposed; through the real route handlers on a real
// database. The route is called directly, as Next.js would, with the session cookie.
import { randomUUID } from "node:crypto";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferenceLease, invoiceLine } from "@/db/schema";
import * as changesRoute from "@/app/api/leases/[id]/changes/route";
import { api, signInCookie } from "../../support/api";
import { makeInvoice, makeUser, openTestDb, type TestDb } from "../../support/db";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

async function changes(leaseId: string, cookie: string) {
  const req = new Request(`http://127.0.0.1:3000/api/leases/${leaseId}/changes`, { headers: { cookie } });
  const res = await changesRoute.GET(req, { params: Promise.resolve({ id: leaseId }) });
  return { status: res.status, body: await res.json() };
}

async function world() {
  const alice = await makeUser(t.db, "Alice");
  const bob = await makeUser(t.db, "Bob");
  const inv = await makeInvoice(t.db, alice.id);
  const lines = await t.db.select().from(invoiceLine).where(eq(invoiceLine.invoiceId, inv.id)).orderBy(asc(invoiceLine.position));
  return { inv, lines, aliceCookie: await signInCookie(alice.email), bobCookie: await signInCookie(bob.email) };
}

async function open(cookie: string, invoiceId: string, purpose: string): Promise<string> {
  const res = await api("POST", "/api/leases", { cookie, json: { invoice_id: invoiceId, purpose } });
  expect(res.status).toBe(201);
  return res.body.lease_id;
}

const propose = (leaseId: string, proposal: Record<string, unknown>) =>
  t.db.update(inferenceLease).set({ status: "proposed", proposal }).where(eq(inferenceLease.id, leaseId));

describe("GET /api/leases/:id/changes", () => {
  it("categorize_lines: one change per proposed line, before and after; a partial apply writes only the accepted ones", async () => {
    const { inv, lines, aliceCookie } = await world();
    const id = await open(aliceCookie, inv.id, "categorize_lines");
    await propose(id, {
      model: "test",
      lines: [
        { line_id: lines[0]!.id, category: "6100" },
        { line_id: lines[1]!.id, category: "7900" },
      ],
    });
    const res = await changes(id, aliceCookie);
    expect(res).toEqual({
      status: 200,
      body: {
        lease_id: id,
        changes: [
          { key: lines[0]!.id, label: "Line 1: Consulting, November", before: null, after: "6100 Software and subscriptions" },
          { key: lines[1]!.id, label: "Line 2: Travel expenses", before: null, after: "7900 Other expenses" },
        ],
      },
    });
    // The length header a client sends with a body (a bare Request carries none), which the route reads a body by.
    const body = JSON.stringify({ lines: [lines[1]!.id] });
    const applied = await api("POST", `/api/leases/${id}/apply`, {
      cookie: aliceCookie,
      raw: body,
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
    });
    expect(applied).toMatchObject({ status: 200, body: { written: [lines[1]!.id] } });
    const after = await t.db.select().from(invoiceLine).where(eq(invoiceLine.invoiceId, inv.id)).orderBy(asc(invoiceLine.position));
    expect(after.map((l) => l.category)).toEqual([null, "7900"]);
    // GET /api/invoices/:id carries each line's category, code and name.
    const detail = await api("GET", `/api/invoices/${inv.id}`, { cookie: aliceCookie });
    expect(detail.body.lines.map((l: { category: unknown }) => l.category)).toEqual([null, { code: "7900", name: "Other expenses" }]);
    expect(detail.body).toMatchObject({ review_notes: null, review_notes_version: null, version: 2 });
    expect(await changes(id, aliceCookie)).toMatchObject({ status: 409, body: { detail: "lease_applied" } });
  });

  it("summarize_invoice and review_invoice: the summary and the review notes, none before", async () => {
    const { inv, aliceCookie } = await world();
    const summary = await open(aliceCookie, inv.id, "summarize_invoice");
    await propose(summary, { model: "test", summary: "A short summary." });
    expect((await changes(summary, aliceCookie)).body.changes).toEqual([
      { key: "summary", label: "Summary", before: null, after: "A short summary." },
    ]);
    const review = await open(aliceCookie, inv.id, "review_invoice");
    await propose(review, {
      model: "test",
      findings: [{ code: "overdue", severity: "high", message: "Overdue by 3 days.", fields: ["due_on"] }],
    });
    expect((await changes(review, aliceCookie)).body.changes).toEqual([
      { key: "review_notes", label: "Review notes", before: null, after: "High: Overdue by 3 days." },
    ]);
    // Applied: the notes and the version they were written for, on GET /api/invoices/:id.
    expect((await api("POST", `/api/leases/${review}/apply`, { cookie: aliceCookie })).status).toBe(200);
    const detail = await api("GET", `/api/invoices/${inv.id}`, { cookie: aliceCookie });
    expect(detail.body).toMatchObject({
      review_notes: [{ code: "overdue", severity: "high", message: "Overdue by 3 days.", fields: ["due_on"] }],
      review_notes_version: 2,
      summary: null,
    });
    // The summary's proposal followed the invoice to its new version: its changes still read.
    expect((await changes(summary, aliceCookie)).status).toBe(200);
  });

  it("refusals: 404 for another's, a missing or a malformed id; 409 lease_open before the proposal, proposal_unusable for a bad one", async () => {
    const { inv, aliceCookie, bobCookie } = await world();
    const id = await open(aliceCookie, inv.id, "categorize_lines");
    expect(await changes(id, aliceCookie)).toMatchObject({ status: 409, body: { detail: "lease_open" } });
    await propose(id, { model: "test", lines: [] });
    const notFound = { status: 404, body: { detail: "lease_not_found" } };
    expect(await changes(id, bobCookie)).toMatchObject(notFound);
    expect(await changes(randomUUID(), aliceCookie)).toMatchObject(notFound);
    expect(await changes("x'--", aliceCookie)).toMatchObject(notFound);
    expect(await changes(id, aliceCookie)).toMatchObject({ status: 200, body: { lease_id: id, changes: [] } });
    await propose(id, { model: "test", summary: "not lines" });
    expect(await changes(id, aliceCookie)).toMatchObject({ status: 409, body: { detail: "proposal_unusable" } });
    const discarded = await api("POST", `/api/leases/${id}/cancel`, { cookie: aliceCookie });
    expect(discarded.status).toBe(200);
    expect(await changes(id, aliceCookie)).toMatchObject({ status: 409, body: { detail: "lease_rejected" } });
  });
});
