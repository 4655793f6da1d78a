// Walkthrough observation 2, for signing in and out and the invoice list: with JavaScript off (or failing to
// load) each is a plain form post or GET form that the server answers with a redirect or a
// page. (The invoice page's own buttons without JavaScript: invoice-page scenarios.)
import { randomBytes } from "node:crypto";
import { expect, test } from "./support/fixtures";
import { addInvoice, addLease, newUser } from "./support/list-data";
import { InvoiceListPage, SignInPage } from "./support/pages";

test.use({ javaScriptEnabled: false });

test("without JavaScript: sign in (refused, then right), filter the list, open an invoice, sign out", async ({ page, sql }) => {
  const user = await newUser(sql, "Nora Noscript");
  const tag = randomBytes(2).toString("hex").toUpperCase();
  const waiting = await addInvoice(sql, user.id, `NJ${tag}-1`, "Plain Forms Ltd", 5);
  const quiet = await addInvoice(sql, user.id, `NJ${tag}-2`, "Quiet Things AB", 40);
  await addLease(sql, { invoiceId: waiting.id, actorId: user.id, status: "applied", deadlineInSeconds: 30 });

  const signIn = new SignInPage(page);
  await signIn.goto();
  await signIn.email.fill(user.email);
  await signIn.password.fill("not the password");
  await signIn.submit.click();
  await expect(signIn.alert).toHaveText("That email and password do not match an account.");
  await expect(signIn.email).toHaveValue(user.email);
  await signIn.signIn(user.email);

  const list = new InvoiceListPage(page);
  await expect(list.row(waiting.number)).toHaveAttribute("data-state", "applied");
  await expect(list.state(waiting.number)).toHaveText(/^Summary applied by Nora Noscript on .+\.$/);
  await page.getByLabel("Summary").selectOption({ label: "Not summarized" });
  await page.getByLabel("Sort by").selectOption({ label: "Due date, latest first" });
  await page.getByRole("button", { name: "Show" }).click();
  // The form sends every field it has, the search and status filter too.
  await expect(page).toHaveURL(/\/invoices\?q=&status=any&state=none&due=any&sort=due-latest$/);
  expect(await list.numbers()).toEqual([quiet.number]);

  await list.link(quiet.number).click();
  await expect(page).toHaveURL(`/invoices/${quiet.id}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText(quiet.number);

  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page).toHaveURL(`/sign-in?signed-out=1&next=${encodeURIComponent(`/invoices/${quiet.id}`)}`);
  await expect(page.getByRole("status")).toHaveText("You have signed out.");
  const gone = await page.request.get("/api/invoices");
  expect(gone.status(), "the session ended").toBe(401);

  await signIn.signIn(user.email, undefined, new RegExp(`/invoices/${quiet.id}$`));
});
