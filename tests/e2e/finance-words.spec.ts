// Walkthrough observation 10, for signing in and out and the invoice list: words a finance user understands,
// and no demo logins outside development (the development page is checked by dev-server.spec.ts,
// which runs `npm run dev`). The invoice page's own words: invoice-page scenarios.
import { randomBytes } from "node:crypto";
import type { Page } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { addInvoice, addLease, newUser } from "./support/list-data";
import { InvoicePage, SignInPage } from "./support/pages";

// Words of the machinery behind the page, which a finance user should never have to read.
const DEVELOPER_WORDS =
  /\b(lease|leases|SEED_PASSWORD|PGlite|PostgreSQL|Inngest|server action|stream|streaming|SSE|polling|push|model|API|HTTP|JSON|null|undefined|NaN|status code|token|session id|Connecting for updates|Updates arrive as they happen)\b/i;

async function expectPlainWords(page: Page, where: string) {
  const text = await page.locator("body").innerText();
  expect(text.match(DEVELOPER_WORDS)?.[0], `a developer's word on ${where}: ${text}`).toBeUndefined();
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
    await addLease(sql, { invoiceId: invoice.id, actorId: user.id, status, deadlineInSeconds: deadline, closedReason: status === "rejected" ? "invoice_changed" : undefined });
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
