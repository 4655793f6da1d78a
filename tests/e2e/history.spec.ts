// An invoice's history and the summary that went out of date: an edit after a summary was
// applied flags it, in words, on the invoice page and in the list, and offers its owner
// "Summarize again"; a second open page of the invoice shows the edit without a reload (the
// invoice's own event stream), its history included.
import { expect, expectAccessible, test } from "./support/fixtures";
import { InvoiceListPage, InvoicePage } from "./support/pages";
import { ALICE } from "./support/settings";

test("an edit after apply flags the summary on the page and in the list; a second open page sees the edit live", async ({
  context,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE);
  await signIn(context, ALICE);
  const one = new InvoicePage(await context.newPage());
  await one.goto(invoice.id);
  await one.summarize.click();
  await one.expectDisplay("proposed");
  await one.apply.click();
  await one.expectDisplay("applied");
  const stale = one.page.getByTestId("summary-stale");
  await expect(stale).toHaveCount(0);

  // A second page of the same invoice, open before the edit and never reloaded.
  const two = new InvoicePage(await context.newPage());
  await two.goto(invoice.id);
  await expect(two.page.getByRole("heading", { level: 1 })).toContainText("Northwind Traders");
  await expect(two.page.getByTestId("summary-stale")).toHaveCount(0);

  await one.editCounterparty("Contoso Ltd");

  const words = /^Out of date\. Summary written for version \d+; the counterparty changed since\.$/;
  await expect(stale.locator("p")).toHaveText(words);
  await expect(stale.getByRole("button", { name: "Summarize again", exact: true })).toBeVisible();
  // The summary itself is as it was: nothing rewrote it.
  await expect(one.invoiceSummary).toContainText("Northwind Traders");
  // The history: the edit, each field before and after, above the attempt that wrote the summary.
  const change = one.history.getByTestId("change").first();
  await expect(change.getByRole("heading")).toHaveText("Invoice edited");
  await expect(change.locator('li[data-field="counterparty"]')).toHaveText("Counterparty: Northwind Traders → Contoso Ltd");
  await expect(one.attempts.first().getByRole("heading")).toHaveText("Summary attempt 1: Applied (the summary on the invoice)");
  await expectAccessible(one.page, "invoice page with an out-of-date summary");

  // The second page follows without a reload.
  await expect(two.page.getByRole("heading", { level: 1 })).toContainText("Contoso Ltd");
  await expect(two.page.getByTestId("summary-stale").locator("p")).toHaveText(words);
  await expect(two.history.getByTestId("change").first().locator('li[data-field="counterparty"]')).toHaveText(
    "Counterparty: Northwind Traders → Contoso Ltd",
  );

  // The list says so too.
  const list = new InvoiceListPage(one.page);
  await list.goto();
  await expect(list.row(invoice.number).getByTestId("summary-stale")).toHaveText(
    /^Out of date: Summary written for version \d+; the counterparty changed since\.$/,
  );

  // Summarized again and applied: current, on the page and in the list.
  await one.goto(invoice.id);
  await stale.getByRole("button", { name: "Summarize again", exact: true }).click();
  await one.expectDisplay("proposed");
  await one.apply.click();
  await one.expectDisplay("applied");
  await expect(stale).toHaveCount(0);
  await list.goto();
  await expect(list.row(invoice.number).getByTestId("summary-stale")).toHaveCount(0);
});

test("each attempt in the history is named by its purpose; a review applied after the summary does not become the summary's attempt", async ({
  context,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE);
  await signIn(context, ALICE);
  const inv = new InvoicePage(await context.newPage());
  await inv.goto(invoice.id);
  await inv.summarize.click();
  await inv.expectDisplay("proposed");
  await inv.apply.click();
  await inv.expectDisplay("applied");

  const review = inv.page.getByTestId("lease-panel-review_invoice");
  await review.getByRole("button", { name: "Review", exact: true }).click();
  await expect(review).toHaveAttribute("data-display", "proposed");
  await review.getByRole("button", { name: "Apply", exact: true }).click();
  await expect(review).toHaveAttribute("data-display", "applied");

  await inv.goto(invoice.id);
  await expect(inv.attempts).toHaveCount(2);
  const [reviewAttempt, summaryAttempt] = [inv.attempts.nth(0), inv.attempts.nth(1)];
  await expect(reviewAttempt).toHaveAttribute("data-attempt-purpose", "review_invoice");
  // Numbered among the invoice's reviews: its first, whatever summary came before it.
  await expect(reviewAttempt.getByRole("heading")).toHaveText("Review attempt 1: Applied");
  await expect(reviewAttempt.locator('li[data-kind="opened"]')).toContainText("Review requested");
  await expect(reviewAttempt.locator('li[data-kind="applied"]')).toContainText("Review notes applied to the invoice");
  // Named by its purpose too (not a bare "Attempt 1" beside "Review attempt 1"), its timeline in
  // the summary's words as before, and it is still the summary on the invoice.
  await expect(summaryAttempt).toHaveAttribute("data-attempt-purpose", "summarize_invoice");
  await expect(summaryAttempt.getByRole("heading")).toHaveText("Summary attempt 1: Applied (the summary on the invoice)");
  await expect(summaryAttempt.locator('li[data-kind="opened"]')).toContainText("Summary requested");
  await expect(inv.attempts.getByRole("heading")).toHaveText([/^Review attempt 1: /, /^Summary attempt 1: /]);
  await expectAccessible(inv.page, "history with a summary and a review");
});
