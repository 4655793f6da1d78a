// Walkthrough observation 10, for signing in and out and the invoice list: words a finance user understands,
// and no demo logins outside development (the development page is checked by dev-server.spec.ts,
// which runs `npm run dev`). The invoice page's own words: invoice-page scenarios, and below, every
// purpose's panel and history as rendered. Every sentence of every purpose: tests/unit/lease-words.test.ts.
import { randomBytes } from "node:crypto";
import type { Locator, Page } from "@playwright/test";
import { ALICE } from "./support/settings";
import { expect, test } from "./support/fixtures";
import { addInvoice, addLease, newUser } from "./support/list-data";
import { InvoicePage, SignInPage } from "./support/pages";
import { DEVELOPER_WORDS, doubledWord } from "./support/plain-words";

async function expectPlainWords(page: Page, where: string) {
  const text = await page.locator("body").innerText();
  expect(text.match(DEVELOPER_WORDS)?.[0], `a developer's word on ${where}: ${text}`).toBeUndefined();
}

/** A part of the page in plain words, none said twice in a breath ("Review ready for review"). */
async function expectReadable(part: Locator, where: string) {
  const text = await part.innerText();
  expect(text.match(DEVELOPER_WORDS)?.[0], `a developer's word on ${where}: ${text}`).toBeUndefined();
  expect(doubledWord(text), `a word said twice on ${where}: ${text}`).toBeNull();
}

test("sign-in, sign-out and the invoice list speak a finance user's words; no demo logins in production", async ({
  page,
  context,
  sql,
  signIn,
}) => {
  const signInPage = new SignInPage(page);
  await signInPage.goto();
  await expect(page.getByText("Demo logins")).toHaveCount(0);
  await expect(page.locator("body")).not.toContainText("claimcheck-demo");
  await expectPlainWords(page, "the sign-in page");
  await signInPage.email.fill("nobody@example.com");
  await signInPage.password.fill("wrong");
  await signInPage.submit.click();
  await expect(signInPage.alert).toBeVisible();
  await expectPlainWords(page, "the sign-in page, refused");

  const user = await newUser(sql, "Wanda Words");
  const tag = randomBytes(2).toString("hex").toUpperCase();
  const states: [string, number][] = [
    ["open", 50],
    ["proposed", 50],
    ["expired", -10],
    ["applied", 30],
    ["rejected", 30],
  ];
  let waiting = "";
  for (const [i, [status, deadline]] of states.entries()) {
    const invoice = await addInvoice(sql, user.id, `W${tag}-${i}`, "Plain Words Ltd", i * 7 - 10);
    await addLease(sql, {
      invoiceId: invoice.id,
      actorId: user.id,
      status,
      deadlineInSeconds: deadline,
      closedReason: status === "rejected" ? "invoice_changed" : undefined,
    });
    if (status === "proposed") waiting = invoice.id;
  }
  await addInvoice(sql, user.id, `W${tag}-9`, "Never Asked Ltd", 30);
  await signIn(context, user.email);
  await page.goto("/invoices");
  await expect(page.getByTestId("invoice-row")).toHaveCount(6);
  await expectPlainWords(page, "the invoice list");
  await page.goto("/invoices?state=applied&due=overdue");
  await expectPlainWords(page, "the invoice list, nothing matching");

  // The lease opened by hand belongs to no session; one opened through the app does.
  await new InvoicePage(page).goto(waiting);
  await page.goto(`/sign-out?next=${encodeURIComponent(`/invoices/${waiting}`)}`);
  await expectPlainWords(page, "the sign-out page");
  await page.getByRole("main").getByRole("button", { name: "Sign out" }).click();
  await expect(page.getByRole("status")).toHaveText("You have signed out.");
  await expectPlainWords(page, "the sign-in page after signing out");
});

test("every purpose's panel and the history read as plain words, ready and closed, none said twice", async ({
  context,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE);
  await signIn(context, ALICE);
  const inv = new InvoicePage(await context.newPage());
  await inv.goto(invoice.id);
  const review = inv.page.getByTestId("lease-panel-review_invoice");
  const categories = inv.page.getByTestId("lease-panel-categorize_lines");
  await review.getByRole("button", { name: "Review", exact: true }).click();
  await expect(review).toHaveAttribute("data-display", "proposed");
  await categories.getByRole("button", { name: "Suggest categories", exact: true }).click();
  await expect(categories).toHaveAttribute("data-display", "proposed");
  await expect(review.getByTestId("planned-change").first()).toBeVisible();
  for (const [panel, where] of [
    [review, "the review panel, ready"],
    [categories, "the categories panel, ready"],
  ] as const)
    await expectReadable(panel, where);

  await review.getByRole("button", { name: "Apply", exact: true }).click();
  await expect(review).toHaveAttribute("data-display", "applied");
  await categories.getByRole("button", { name: "Discard", exact: true }).click();
  await expect(categories).toHaveAttribute("data-display", "rejected");
  await inv.goto(invoice.id);
  await expect(inv.attempts).toHaveCount(2);
  await expectReadable(review, "the review panel, applied");
  await expectReadable(categories, "the categories panel, discarded");
  for (const attempt of await inv.attempts.all()) await expectReadable(attempt, "the history");
  await expect(inv.attempts.first().locator('li[data-kind="proposed"]')).toHaveText(/Categories suggested, ready for review/);
  await expect(inv.attempts.nth(1).locator('li[data-kind="proposed"]')).toHaveText(/Review findings ready to check/);
});
