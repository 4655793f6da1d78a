// Walkthrough observation 8: the invoice list said only "summarized" or "no summary yet": not that a summary
// waits for review (and for how long), is being written, or ran out; and it could not be
// sorted or filtered. Now each row says where its latest summary stands, stays current
// without a reload, and the list filters and sorts by that state and by due date.
import { randomBytes } from "node:crypto";
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { leaseRow } from "./support/db";
import { addInvoice, addLease, newUser, type ListInvoice, type ListUser } from "./support/list-data";
import { InvoiceListPage } from "./support/pages";

type Seeded = { user: ListUser; inv: Record<"A" | "B" | "C" | "D" | "E" | "F" | "G", ListInvoice> };

/** Seven invoices, one per state, due on different days. */
async function seedList(sql: import("./support/db").Sql): Promise<Seeded> {
  const user = await newUser(sql, "Lena Lindqvist");
  const tag = randomBytes(2).toString("hex").toUpperCase();
  const add = (key: string, counterparty: string, due: number) => addInvoice(sql, user.id, `L${tag}-${key}`, counterparty, due);
  const inv = {
    A: await add("A", "Nothing Yet Ltd", 60),
    B: await add("B", "Waiting Review plc", 3),
    C: await add("C", "Being Written SA", 20),
    D: await add("D", "Ran Out GmbH", -5),
    E: await add("E", "Applied Already BV", 10),
    F: await add("F", "Discarded Oy", -1),
    G: await add("G", "Unswept Expiry AB", 100),
  };
  const lease = (i: ListInvoice, status: string, deadlineInSeconds: number, closedReason?: string) =>
    addLease(sql, { invoiceId: i.id, actorId: user.id, status, deadlineInSeconds, closedReason });
  await lease(inv.B, "proposed", 50);
  await lease(inv.C, "open", 55);
  await lease(inv.D, "expired", -30);
  await lease(inv.E, "applied", 30);
  await lease(inv.F, "rejected", 30, "cancelled");
  await lease(inv.G, "open", -5); // past its deadline, not yet swept: already expired to the reader
  return { user, inv };
}

test("each invoice says where its summary stands, with the time left to review", async ({ page, context, sql, signIn }) => {
  const { user, inv } = await seedList(sql);
  await signIn(context, user.email);
  const list = new InvoiceListPage(page);
  await list.goto();

  const expected: [ListInvoice, string, RegExp][] = [
    [inv.A, "none", /^No summary requested yet\.$/],
    [inv.B, "proposed", /^Summary ready for review · \d:\d\d left to apply it$/],
    [inv.C, "generating", /^Summary being written · \d:\d\d left$/],
    [inv.D, "expired", /^Time ran out on the summary at .+\. Nothing was changed\.$/],
    [inv.E, "applied", /^Summary applied by Lena Lindqvist on .+\.$/],
    [inv.F, "stopped", /^Summary discarded\. Nothing was changed\.$/],
    [inv.G, "expired", /^Time ran out on the summary at .+\. Nothing was changed\.$/],
  ];
  for (const [invoice, state, words] of expected) {
    await expect(list.row(invoice.number)).toHaveAttribute("data-state", state);
    await expect(list.state(invoice.number)).toHaveText(words);
  }
  await expect(page.getByTestId("list-count")).toHaveText("7 invoices.");
  // The time left counts down in the page.
  const left = list.state(inv.B.number).getByTestId("time-left");
  const before = await left.textContent();
  await expect(left).not.toHaveText(before!, { timeout: 5_000 });
  await saveScreenshot(page, "invoice-list");
  await expectAccessible(page, "invoice list with summary states");

  await page.setViewportSize({ width: 375, height: 812 });
  await expect(list.state(inv.B.number)).toBeVisible();
  await saveScreenshot(page, "invoice-list-375px");
  await expectAccessible(page, "invoice list at 375 px");
});

test("the list filters and sorts by summary state and due date, in the address too", async ({ page, context, sql, signIn }) => {
  const { user, inv } = await seedList(sql);
  await signIn(context, user.email);
  const list = new InvoiceListPage(page);
  await list.goto();
  const n = (...keys: (keyof Seeded["inv"])[]) => keys.map((k) => inv[k].number);

  // Default: newest issue first (all issued the same day), then by number.
  expect(await list.numbers()).toEqual(n("A", "B", "C", "D", "E", "F", "G"));

  await expect(page.getByRole("form", { name: "Filter and sort invoices" })).toBeVisible();
  await page.getByLabel("Summary").selectOption({ label: "Ready for review" });
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/[?&]state=proposed(&|$)/);
  await expect.poll(() => list.numbers()).toEqual(n("B"));
  await expect(page.getByTestId("list-count")).toHaveText("Showing 1 of 7 invoices.");
  await saveScreenshot(page, "invoice-list-filtered");
  await expectAccessible(page, "invoice list filtered");

  await page.getByLabel("Summary").selectOption({ label: "Any" });
  await page.getByLabel("Due").selectOption({ label: "Overdue" });
  await page.getByLabel("Sort by").selectOption({ label: "Due date, soonest first" });
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/due=overdue/);
  await expect.poll(() => list.numbers()).toEqual(n("D", "F"));

  await page.getByLabel("Due").selectOption({ label: "In the next 7 days" });
  await page.getByRole("button", { name: "Show" }).click();
  await expect.poll(() => list.numbers()).toEqual(n("B"));

  await page.getByLabel("Due").selectOption({ label: "In the next 30 days" });
  await page.getByRole("button", { name: "Show" }).click();
  await expect.poll(() => list.numbers()).toEqual(n("B", "E", "C"));

  // From the address alone (a link, a bookmark).
  await page.goto("/invoices?sort=due-latest");
  expect(await list.numbers()).toEqual(n("G", "A", "C", "E", "B", "F", "D"));
  await page.goto("/invoices?sort=attention");
  // Waiting for review, being written, ran out (by due date), discarded, never asked, applied.
  expect(await list.numbers()).toEqual(n("B", "C", "D", "G", "F", "A", "E"));
  await page.goto("/invoices?state=expired&sort=due-soonest");
  expect(await list.numbers()).toEqual(n("D", "G"));
  await page.goto("/invoices?state=applied");
  expect(await list.numbers()).toEqual(n("E"));
  await page.goto("/invoices?state=none");
  expect(await list.numbers()).toEqual(n("A"));
  await page.goto("/invoices?state=generating");
  expect(await list.numbers()).toEqual(n("C"));
  await page.goto("/invoices?state=stopped");
  expect(await list.numbers()).toEqual(n("F"));

  // Nonsense in the address shows the plain list, not an error.
  const response = await page.goto("/invoices?state=bogus&due=%00&sort[]=x&sort=<script>");
  expect(response?.status()).toBe(200);
  expect(await list.numbers()).toEqual(n("A", "B", "C", "D", "E", "F", "G"));

  await page.goto("/invoices?state=applied&due=overdue");
  await expect(page.getByText("No invoices match these filters.")).toBeVisible();
  await expectAccessible(page, "invoice list, nothing matching");
  await page.getByRole("link", { name: "Clear" }).click();
  await expect(page).toHaveURL(/\/invoices$/);
  await expect.poll(() => list.numbers()).toHaveLength(7);
});

test("the list follows a summary live: being written, ready with time left, applied by whom", async ({
  page,
  context,
  sql,
  signIn,
  newContext,
}) => {
  const user = await newUser(sql, "Lior Live");
  const tag = randomBytes(2).toString("hex");
  const invoice = await addInvoice(sql, user.id, `LIVE-${tag}-1`, "Live Updates Ltd", 14);
  await signIn(context, user.email);
  const list = new InvoiceListPage(page);
  await list.goto();
  await expect(list.row(invoice.number)).toHaveAttribute("data-state", "none");
  // Marks this document: a reload would lose it.
  await page.evaluate(() => ((window as unknown as { listMarker: number }).listMarker = 1));

  // Another device of the same user starts a summary; the model takes 3 s, so the list may
  // or may not catch it being written, but it must show it ready, then applied.
  const other = await newContext();
  await signIn(other, user.email);
  const opened = await other.request.post("/api/leases", { data: { invoice_id: invoice.id, purpose: "summarize_invoice" } });
  expect(opened.status()).toBe(201);
  const leaseId = ((await opened.json()) as { lease_id: string }).lease_id;
  await expect(list.row(invoice.number)).toHaveAttribute("data-state", "proposed");
  await expect(list.state(invoice.number)).toHaveText(/^Summary ready for review · \d:\d\d left to apply it$/);

  const applied = await other.request.post(`/api/leases/${leaseId}/apply`);
  expect(applied.status()).toBe(200);
  await expect(list.row(invoice.number)).toHaveAttribute("data-state", "applied");
  await expect(list.state(invoice.number)).toHaveText(/^Summary applied by Lior Live on .+\.$/);
  expect((await leaseRow(sql, leaseId)).status).toBe("applied");

  // A summary being written, as long as its deadline (nobody writes this one), then run out:
  // the countdown reaching zero brings the new state without waiting for the next refresh.
  const slow = await addInvoice(sql, user.id, `LIVE-${tag}-2`, "Slow Writer Ltd", 21);
  await addLease(sql, { invoiceId: slow.id, actorId: user.id, status: "open", deadlineInSeconds: 9 });
  await expect(list.row(slow.number)).toHaveAttribute("data-state", "generating");
  await expect(list.state(slow.number)).toHaveText(/^Summary being written · 0:0\d left$/);
  await saveScreenshot(page, "invoice-list-live");
  await expect(list.row(slow.number)).toHaveAttribute("data-state", "expired", { timeout: 20_000 });
  await expect(list.state(slow.number)).toHaveText(/^Time ran out on the summary at .+\. Nothing was changed\.$/);
  expect(await page.evaluate(() => (window as unknown as { listMarker?: number }).listMarker), "no reload").toBe(1);
});
