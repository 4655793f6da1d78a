// Walkthrough observation 5: sign-out dropped a waiting summary without a word, the sign-in page did not
// confirm the sign-out, and signing in again landed on the list, not on the invoice the user
// was reading. Now: a dialog (or, without JavaScript, a page) names what would be discarded;
// "You have signed out."; and a `next` parameter, limited to our own pages, brings the user back.
import type { BrowserContext } from "@playwright/test";
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { eventKinds, leaseRow } from "./support/db";
import { InvoicePage, SignInPage } from "./support/pages";
import { ALICE } from "./support/settings";

async function openLease(context: BrowserContext, invoiceId: string): Promise<string> {
  const opened = await context.request.post("/api/leases", { data: { invoice_id: invoiceId, purpose: "summarize_invoice" } });
  expect(opened.status()).toBe(201);
  return ((await opened.json()) as { lease_id: string }).lease_id;
}

test("sign-out with a summary waiting asks first, names it, and signing in again returns to the invoice", async ({
  page,
  context,
  sql,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE, "Dialog Questions GmbH");
  await signIn(context, ALICE);
  const inv = new InvoicePage(page);
  await inv.goto(invoice.id);
  await inv.summarize.click();
  await inv.expectDisplay("proposed");
  const leaseId = await inv.leaseId();

  // Asked, and the user stays: nothing is discarded.
  await inv.signOut.click();
  const dialog = page.getByRole("dialog", { name: "Sign out and discard the summary waiting for review?" });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("sign-out-discards")).toHaveText(`Invoice ${invoice.number} · Dialog Questions GmbH`);
  await expect(dialog.getByRole("button", { name: "Stay signed in" })).toBeFocused();
  await saveScreenshot(page, "sign-out-dialog");
  await expectAccessible(page, "sign-out dialog");
  await dialog.getByRole("button", { name: "Stay signed in" }).click();
  await expect(dialog).toBeHidden();
  await expect(page).toHaveURL(new RegExp(`/invoices/${invoice.id}$`));
  expect((await leaseRow(sql, leaseId)).status).toBe("proposed");

  // Escape closes it too.
  await inv.signOut.click();
  await expect(dialog).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  expect((await leaseRow(sql, leaseId)).status).toBe("proposed");

  // Confirmed: the summary is discarded, the sign-in page says so and keeps the way back.
  await inv.signOut.click();
  await dialog.getByRole("button", { name: "Sign out and discard" }).click();
  await expect(page).toHaveURL(`/sign-in?signed-out=1&next=${encodeURIComponent(`/invoices/${invoice.id}`)}`);
  await expect(page.getByRole("status")).toHaveText("You have signed out.");
  await saveScreenshot(page, "signed-out");
  await expectAccessible(page, "sign-in after sign-out");
  expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "signed_out" });
  expect(await eventKinds(sql, leaseId)).toContain("revoked");

  await new SignInPage(page).signIn(ALICE, undefined, new RegExp(`/invoices/${invoice.id}$`));
  await inv.expectDisplay("rejected");
});

test("sign-out with nothing waiting signs out at once", async ({ page, context, signIn }) => {
  await signIn(context, ALICE);
  await page.goto("/invoices?sort=due-soonest");
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page).toHaveURL(`/sign-in?signed-out=1&next=${encodeURIComponent("/invoices?sort=due-soonest")}`);
  await expect(page.getByRole("status")).toHaveText("You have signed out.");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await new SignInPage(page).signIn(ALICE, undefined, /\/invoices\?sort=due-soonest$/);
});

test("a summary that arrives after the question was answered is not discarded unasked", async ({ page, context, sql, signIn, newInvoice }) => {
  // The dialog named one summary; a second one became ready before the user confirmed.
  const first = await newInvoice(ALICE, "Asked About Ltd");
  const second = await newInvoice(ALICE, "Arrived Later Ltd");
  await signIn(context, ALICE);
  const inv = new InvoicePage(page);
  const firstLease = await openLease(context, first.id);
  await expect.poll(async () => (await leaseRow(sql, firstLease)).status, { timeout: 20_000 }).toBe("proposed");
  await inv.goto(first.id);
  await inv.signOut.click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByTestId("sign-out-discards")).toHaveText(`Invoice ${first.number} · Asked About Ltd`);
  const secondLease = await openLease(context, second.id);
  await expect.poll(async () => (await leaseRow(sql, secondLease)).status, { timeout: 20_000 }).toBe("proposed");
  await dialog.getByRole("button", { name: "Sign out and discard" }).click();

  // Still signed in, on the confirmation page, which now names both.
  await expect(page).toHaveURL(`/sign-out?next=${encodeURIComponent(`/invoices/${first.id}`)}`);
  const heading = page.getByRole("heading", { level: 1 });
  await expect(heading).toHaveText("Sign out and discard 2 summaries waiting for review?");
  await expect(page.getByTestId("sign-out-discards").getByRole("listitem")).toHaveText([
    `Invoice ${first.number} · Asked About Ltd`,
    `Invoice ${second.number} · Arrived Later Ltd`,
  ].sort((a, b) => a.localeCompare(b)));
  expect((await leaseRow(sql, firstLease)).status).toBe("proposed");
  expect((await leaseRow(sql, secondLease)).status).toBe("proposed");
  await page.getByRole("button", { name: "Sign out and discard" }).click();
  await expect(page).toHaveURL(`/sign-in?signed-out=1&next=${encodeURIComponent(`/invoices/${first.id}`)}`);
  expect((await leaseRow(sql, firstLease)).status).toBe("rejected");
  expect((await leaseRow(sql, secondLease)).status).toBe("rejected");
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("sign-out with a summary waiting shows a confirmation page; Stay signed in goes back", async ({
    page,
    context,
    sql,
    signIn,
    newInvoice,
    browser,
    baseURL,
    watchConsole,
  }) => {
    const invoice = await newInvoice(ALICE, "No Script Partners");
    await signIn(context, ALICE);
    const leaseId = await openLease(context, invoice.id);
    await expect.poll(async () => (await leaseRow(sql, leaseId)).status, { timeout: 20_000 }).toBe("proposed");
    await page.goto(`/invoices/${invoice.id}`);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();

    await expect(page).toHaveURL(`/sign-out?next=${encodeURIComponent(`/invoices/${invoice.id}`)}`);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign out and discard the summary waiting for review?");
    await expect(page.getByTestId("sign-out-discards")).toHaveText(`Invoice ${invoice.number} · No Script Partners`);
    // axe needs script: the same page, same session, in a browser with JavaScript.
    // (Explicitly: inside a test, browser.newContext() takes this file's javaScriptEnabled: false.)
    const withScript = await browser.newContext({ baseURL, javaScriptEnabled: true });
    await watchConsole(withScript);
    await withScript.addCookies(await context.cookies());
    const checked = await withScript.newPage();
    await checked.goto(page.url());
    await expect(checked.getByTestId("sign-out-discards")).toBeVisible();
    await saveScreenshot(checked, "sign-out-confirm-page");
    await expectAccessible(checked, "sign-out confirmation page");
    await withScript.close();
    expect((await leaseRow(sql, leaseId)).status).toBe("proposed");

    await page.getByRole("link", { name: "Stay signed in" }).click();
    await expect(page).toHaveURL(`/invoices/${invoice.id}`);
    expect((await leaseRow(sql, leaseId)).status).toBe("proposed");

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.getByRole("button", { name: "Sign out and discard" }).click();
    await expect(page).toHaveURL(`/sign-in?signed-out=1&next=${encodeURIComponent(`/invoices/${invoice.id}`)}`);
    await expect(page.getByRole("status")).toHaveText("You have signed out.");
    expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "signed_out" });
    await new SignInPage(page).signIn(ALICE, undefined, new RegExp(`/invoices/${invoice.id}$`));
  });
});

test("a signed-out visit to an invoice comes back to it after signing in", async ({ page, newInvoice }) => {
  const invoice = await newInvoice(ALICE);
  await page.goto(`/invoices/${invoice.id}`);
  await expect(page).toHaveURL(`/sign-in?next=${encodeURIComponent(`/invoices/${invoice.id}`)}`);
  await expect(page.getByRole("status")).toHaveCount(0); // not signed out: just not signed in
  await new SignInPage(page).signIn(ALICE, undefined, new RegExp(`/invoices/${invoice.id}$`));
  await expect(page.getByRole("heading", { level: 1 })).toContainText(invoice.number);
});

// Each is refused as a destination: signing in lands on the list, on our own origin.
const HOSTILE = [
  "//evil.example",
  "//evil.example/invoices",
  "/\\evil.example",
  "/\\/evil.example",
  "\\\\evil.example",
  "https://evil.example",
  "https://evil.example/invoices",
  "http:evil.example",
  "/%2F%2Fevil.example",
  "/%5Cevil.example",
  "/invoices/..%2F..%2F%2Fevil.example",
  "/invoices/../../evil.example",
  "javascript:alert(1)",
  "JaVaScRiPt:alert(1)",
  "/invoices\r\nSet-Cookie: injected=1",
  "/invoices%0d%0aSet-Cookie:%20injected=1",
  "/invoices\u2028",
  " /invoices",
  "\t//evil.example",
  "/api/session",
  "/sign-in",
  "",
];

test("the next parameter only ever leads to our own pages (open redirects, header injection)", async ({ page, baseURL, context }) => {
  const signInPage = new SignInPage(page);
  const origin = new URL(baseURL!).origin;
  for (const next of HOSTILE) {
    await context.clearCookies();
    // Through the address bar: the page drops the value, so the form carries none.
    await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
    await expect(page.locator('input[name="next"]'), JSON.stringify(next)).toHaveCount(0);
    // Posted by a forged form: the action refuses it just the same.
    await page.evaluate((value) => {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = "next";
      input.value = value;
      document.querySelector("form")!.append(input);
    }, next);
    const responses: string[] = [];
    const watch = (response: import("@playwright/test").Response) => {
      // A redirect, from a page (Location) or from a server action (x-action-redirect).
      const location = response.headers()["location"] ?? response.headers()["x-action-redirect"];
      if (location) responses.push(location);
      if (response.headers()["set-cookie"]?.includes("injected")) responses.push("INJECTED COOKIE");
    };
    page.on("response", watch);
    await signInPage.signIn(ALICE);
    page.off("response", watch);
    expect(new URL(page.url()).origin, JSON.stringify(next)).toBe(origin);
    expect(new URL(page.url()).pathname, JSON.stringify(next)).toBe("/invoices");
    expect(responses.join(" "), JSON.stringify(next)).not.toMatch(/evil|INJECTED/);
    expect((await context.cookies()).map((c) => c.name)).not.toContain("injected");
  }

  // And a signed-in visit to the sign-in page goes to the list, whatever it is told.
  for (const next of ["//evil.example", "/\\evil.example", "https://evil.example"]) {
    await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
    await expect(page).toHaveURL(`${origin}/invoices`);
  }
  // A page of ours is kept, query included.
  await page.goto(`/sign-in?next=${encodeURIComponent("/invoices?state=proposed")}`);
  await expect(page).toHaveURL(`${origin}/invoices?state=proposed`);
});
