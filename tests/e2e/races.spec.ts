// Two clicks, two tabs, one lease: the database decides, and the page says what it decided.
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { eventDetails, eventKinds, invoiceRow, leaseRow, leasesFor } from "./support/db";
import { generationRuns } from "./support/inngest";
import { InvoicePage } from "./support/pages";
import { ALICE } from "./support/settings";

test("a double click on Summarize opens one lease", async ({ sql, openInvoice }) => {
  const { invoice, inv } = await openInvoice(ALICE);
  await inv.summarize.dblclick();
  await inv.expectDisplay("generating");
  const leaseId = await inv.leaseId();

  const leases = await leasesFor(sql, invoice.id);
  expect(leases.map((l) => l.id)).toEqual([leaseId]);
  await inv.expectDisplay("proposed");
  expect(await leasesFor(sql, invoice.id)).toHaveLength(1);
  expect(await eventKinds(sql, leaseId)).toEqual(["opened", "proposed"]);
  expect(await generationRuns("main", leaseId), "one generation run").toHaveLength(1);
});

test("Discard in one tab, then Apply from a stale second tab: refused with a clear message, invoice untouched", async ({
  context,
  sql,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE);
  await signIn(context, ALICE);
  const one = new InvoicePage(await context.newPage());
  await one.goto(invoice.id);
  await one.summarize.click();
  await one.expectDisplay("proposed");
  const leaseId = await one.leaseId();

  // The second tab goes stale: it never hears of the discard (its updates hang, as on a
  // laptop that slept), so it still offers Apply.
  const stalePage = await context.newPage();
  await stalePage.route("**/api/leases/**", () => {});
  await stalePage.route("**/api/invoices/*/events", () => {});
  const stale = new InvoicePage(stalePage);
  await stale.goto(invoice.id);
  await stale.expectDisplay("proposed");

  await one.discard.click();
  await one.expectDisplay("rejected");
  await expect(one.state).toHaveText("You discarded this summary. Nothing was changed on the invoice.");
  expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "cancelled" });
  await saveScreenshot(one.page, "lease-rejected");
  await expectAccessible(one.page, "lease rejected (discarded)");

  await expect(stale.apply).toBeVisible();
  await stale.apply.click();
  await expect(stale.message).toHaveText(
    "This summary was discarded (perhaps in another tab), so it cannot be applied. Nothing was changed on the invoice.",
  );
  await expect(stale.message).toHaveAttribute("role", "alert");
  // The answer also brought the lease as it stands.
  await stale.expectDisplay("rejected");
  await expect(stale.invoiceSummary).toHaveText("No summary yet.");

  const after = await invoiceRow(sql, invoice.id);
  expect(after.summary).toBeNull();
  expect(after.version).toBe(invoice.version);
  expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "cancelled" });
  expect(await eventDetails(sql, leaseId, "apply_refused")).toEqual([{ code: "lease_rejected" }]);
});

test("invoice edited in another tab while a proposal waits: withdrawn at once; a stale tab's Apply is refused, said once", async ({
  context,
  sql,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE);
  await signIn(context, ALICE);
  const one = new InvoicePage(await context.newPage());
  await one.goto(invoice.id);
  await one.summarize.click();
  await one.expectDisplay("proposed");
  const leaseId = await one.leaseId();

  // A tab that never hears of anything (its updates hang, as on a laptop that slept): neither
  // the lease's stream nor the invoice's, which would refresh an open page to the new version.
  const stalePage = await context.newPage();
  await stalePage.route("**/api/leases/**", () => {});
  await stalePage.route("**/api/invoices/*/events", () => {});
  const stale = new InvoicePage(stalePage);
  await stale.goto(invoice.id);
  await stale.expectDisplay("proposed");

  const two = new InvoicePage(await context.newPage());
  await two.goto(invoice.id);
  await two.editCounterparty("Northwind Traders GmbH");
  const edited = await invoiceRow(sql, invoice.id);
  expect(edited).toMatchObject({ counterparty: "Northwind Traders GmbH", version: invoice.version + 1, summary: null });
  // The edit withdrew the proposal in its own transaction; the first tab hears it by push.
  expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "invoice_changed" });
  await one.expectDisplay("outdated");
  await expect(one.apply).toHaveCount(0);

  await expect(stale.apply).toBeVisible();
  await stale.apply.click();
  const words = "This invoice was edited after the summary was requested, so it was not applied. Summarize again.";
  await expect(stale.message).toHaveText(words);
  await expect(stale.message).toHaveAttribute("role", "alert");
  await stale.expectDisplay("outdated");
  // Said once: the refusal takes the place of the state line, which would repeat it.
  await expect(stale.state).toHaveCount(0);
  await expect(stale.panel.getByRole("alert")).toHaveCount(1);
  await expect(stale.summarizeAgain).toBeVisible();
  await saveScreenshot(stale.page, "lease-invoice-changed");
  await expectAccessible(stale.page, "apply refused: invoice changed");

  const after = await invoiceRow(sql, invoice.id);
  expect(after).toMatchObject({ summary: null, version: edited.version, counterparty: "Northwind Traders GmbH" });
  expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "invoice_changed" });
  expect(await eventKinds(sql, leaseId)).toEqual(["opened", "proposed", "invoice_changed", "apply_refused"]);
  expect(await eventDetails(sql, leaseId, "apply_refused")).toEqual([{ code: "invoice_changed" }]);

  // The second tab's form was shown at the old version too: an edit from it is refused.
  const staleForm = new InvoicePage(await context.newPage());
  await staleForm.page.route("**/api/leases/**", () => {});
  await staleForm.page.route("**/api/invoices/*/events", () => {});
  await staleForm.goto(invoice.id);
  await two.editCounterparty("Northwind Traders AG");
  await staleForm.editForm.getByLabel("Due on").fill("2026-12-31");
  await staleForm.editForm.getByRole("button", { name: "Save changes" }).click();
  await expect(staleForm.editForm.getByRole("alert")).toHaveText(
    "This invoice was changed somewhere else after you opened it, so your edit was not saved. Reload the page to see the latest version, then edit again.",
  );
  const final = await invoiceRow(sql, invoice.id);
  expect(final).toMatchObject({ counterparty: "Northwind Traders AG", version: edited.version + 1 });
  const [due] = await sql<{ due_on: string }[]>`select to_char(due_on, 'YYYY-MM-DD') as due_on from invoice where id = ${invoice.id}`;
  expect(due!.due_on).toBe("2026-12-01");
});
