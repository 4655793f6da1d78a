// Bob cannot see or act on Alice's invoice or lease, in the UI or the API: every answer is
// the same 404 a missing or malformed id gets, and nothing is written.
import { randomUUID } from "node:crypto";
import { expect, expectAccessible, test } from "./support/fixtures";
import { eventKinds, invoiceRow, leaseRow, leasesFor } from "./support/db";
import { InvoiceListPage } from "./support/pages";
import { ALICE, BOB } from "./support/settings";

test("bob cannot see or apply alice's invoice or lease, in the UI or the API", async ({
  context,
  sql,
  signIn,
  newInvoice,
  newContext,
  allowConsoleErrors,
}) => {
  const invoice = await newInvoice(ALICE, "Alice Only Ltd");
  await signIn(context, ALICE);
  const opened = await context.request.post("/api/leases", {
    data: { invoice_id: invoice.id, purpose: "summarize_invoice" },
  });
  expect(opened.status()).toBe(201);
  const { lease_id: leaseId } = (await opened.json()) as { lease_id: string };
  await expect.poll(async () => (await leaseRow(sql, leaseId)).status, { timeout: 20_000 }).toBe("proposed");
  const eventsBefore = await eventKinds(sql, leaseId);

  // The browser logs each deliberate 404 document load as a console error.
  allowConsoleErrors(/status of 404/);
  const bobContext = await newContext();
  await signIn(bobContext, BOB);
  const bob = await bobContext.newPage();

  const list = new InvoiceListPage(bob);
  await list.goto();
  await expect(bob.getByText("INV-2026-0201")).toBeVisible(); // bob's own
  await expect(list.link(invoice.number)).toHaveCount(0);
  await expect(bob.getByText("Alice Only Ltd")).toHaveCount(0);

  for (const id of [invoice.id, randomUUID(), "not-an-id"]) {
    const response = await bob.goto(`/invoices/${id}`);
    expect(response?.status(), `GET /invoices/${id}`).toBe(404);
    await expect(bob.getByRole("heading", { name: "Page not found" })).toBeVisible();
    await expect(bob.getByText("Alice Only Ltd")).toHaveCount(0);
    await expect(bob.getByRole("button", { name: "Apply" })).toHaveCount(0);
  }
  await expectAccessible(bob, "not found");

  const api = bobContext.request;
  const refusals: [string, Promise<{ status(): number; json(): Promise<unknown> }>, string][] = [
    ["GET invoice", api.get(`/api/invoices/${invoice.id}`), "invoice_not_found"],
    ["PATCH invoice", api.patch(`/api/invoices/${invoice.id}`, { data: { counterparty: "Bob was here" } }), "invoice_not_found"],
    ["open lease", api.post("/api/leases", { data: { invoice_id: invoice.id, purpose: "summarize_invoice" } }), "invoice_not_found"],
    ["GET lease", api.get(`/api/leases/${leaseId}`), "lease_not_found"],
    ["lease events", api.get(`/api/leases/${leaseId}/events`), "lease_not_found"],
    ["apply", api.post(`/api/leases/${leaseId}/apply`), "lease_not_found"],
    ["cancel", api.post(`/api/leases/${leaseId}/cancel`), "lease_not_found"],
  ];
  for (const [what, request, detail] of refusals) {
    const response = await request;
    expect(response.status(), what).toBe(404);
    expect(await response.json(), what).toEqual({ detail });
  }

  // Nothing moved: alice's lease still waits for alice, her invoice is as it was.
  const lease = await leaseRow(sql, leaseId);
  expect(lease.status).toBe("proposed");
  expect(await eventKinds(sql, leaseId)).toEqual(eventsBefore);
  expect(await leasesFor(sql, invoice.id)).toHaveLength(1);
  const after = await invoiceRow(sql, invoice.id);
  expect(after).toMatchObject({ summary: null, version: invoice.version, counterparty: "Alice Only Ltd" });

  // And alice still can.
  const alice = await context.newPage();
  await alice.goto(`/invoices/${invoice.id}`);
  await expect(alice.getByTestId("lease-panel")).toHaveAttribute("data-display", "proposed");
});
