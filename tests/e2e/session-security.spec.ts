import { randomUUID } from "node:crypto";
import { expect, test } from "./support/fixtures";
import { InvoicePage, SignInPage } from "./support/pages";
import { ALICE } from "./support/settings";

// A cookie that does not unseal (here the one from the attack report; the integration tests
// try many more shapes) must send the browser to sign in, never to an error page.
const TAMPERED = "Fe26.2*1*a*b*c*x*e*f";

async function tamper(context: import("@playwright/test").BrowserContext, baseURL: string) {
  await context.addCookies([{ name: "claimcheck_session", value: TAMPERED, url: baseURL }]);
}

const sessionCookie = async (context: import("@playwright/test").BrowserContext) =>
  (await context.cookies()).find((c) => c.name === "claimcheck_session");

test("a tampered session cookie on a page: sent to sign in, the cookie cleared, signing in works again", async ({
  page,
  context,
  baseURL,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE);
  await signIn(context, ALICE);
  await tamper(context, baseURL!);
  // Sent to sign in with the page asked for as `next` (the home page only redirects).
  for (const [path, signInAt] of [
    [`/invoices/${invoice.id}`, `/sign-in?next=${encodeURIComponent(`/invoices/${invoice.id}`)}`],
    ["/invoices", `/sign-in?next=${encodeURIComponent("/invoices")}`],
    ["/", "/sign-in"],
  ] as const) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(200);
    await expect(page).toHaveURL(signInAt);
    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  }
  expect(await sessionCookie(context)).toBeUndefined();
  await new SignInPage(page).signIn(ALICE);
  await new InvoicePage(page).goto(invoice.id);
});

test("a tampered session cookie on a server action: sent to sign in, nothing written", async ({
  page,
  context,
  baseURL,
  sql,
  openInvoice,
}) => {
  const { invoice, inv } = await openInvoice(ALICE);
  await tamper(context, baseURL!);
  await inv.summarize.click();
  await expect(page).toHaveURL(`/sign-in?next=${encodeURIComponent(`/invoices/${invoice.id}`)}`);
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  expect(await sessionCookie(context)).toBeUndefined();
  const leases = await sql`select id from inference_lease where invoice_id = ${invoice.id}`;
  expect(leases).toHaveLength(0);
});

test("too many wrong passwords: the sign-in page says when to try again, in plain words", async ({ page }) => {
  // An email nobody has: the page answers it exactly as it would a real one.
  const email = `nobody-${randomUUID().slice(0, 8)}@example.com`;
  const signIn = new SignInPage(page);
  await signIn.goto();
  for (let attempt = 1; attempt <= 10; attempt++) {
    await signIn.email.fill(email);
    await signIn.password.fill(`guess ${attempt}`);
    await signIn.submit.click();
    await expect(signIn.alert).toHaveText("That email and password do not match an account.");
    // Wait for the answer to this attempt before the next (the alert text repeats).
    await expect(signIn.submit).toBeEnabled();
  }
  await signIn.email.fill(email);
  await signIn.password.fill("guess 11");
  await signIn.submit.click();
  await expect(signIn.alert).toHaveText("Too many attempts. Try again in 5 minutes.");
});
