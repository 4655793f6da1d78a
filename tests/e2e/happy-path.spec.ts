import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { eventKinds, invoiceRow, leasesFor } from "./support/db";
import { InvoiceListPage, InvoicePage, SignInPage, asShown } from "./support/pages";
import { ALICE } from "./support/settings";

test("happy path: sign in, summarize, see the proposal, apply; the summary is on the invoice after a reload", async ({
  page,
  sql,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE);

  const signIn = new SignInPage(page);
  await signIn.goto();
  // The demo logins are shown in development only; this is a production build.
  await expect(page.getByText("Demo logins")).toHaveCount(0);
  await signIn.email.fill(ALICE);
  await signIn.password.fill("not the password");
  await signIn.submit.click();
  await expect(signIn.alert).toHaveText("That email and password do not match an account.");
  await expect(signIn.email).toHaveValue(ALICE);
  await expectAccessible(page, "sign-in (refused)");
  await signIn.signIn(ALICE);

  const list = new InvoiceListPage(page);
  await expect(list.link(invoice.number)).toBeVisible();
  await expectAccessible(page, "invoice list");
  await list.link(invoice.number).click();

  // The lease is pushed to the page, never polled, while the event stream works.
  const polls: string[] = [];
  page.on("request", (request) => {
    if (/\/api\/leases\/[0-9a-f-]{36}$/.test(new URL(request.url()).pathname)) polls.push(request.url());
  });
  const inv = new InvoicePage(page);
  await expect(page.getByRole("heading", { level: 1 })).toContainText(invoice.number);
  await inv.expectDisplay("none");
  await expectAccessible(page, "invoice, no lease");

  await inv.summarize.click();
  await inv.expectDisplay("generating");
  await expect(inv.countdown).toHaveText(/^\d+:\d\d$/);
  await expect(page.getByTestId("channel")).toHaveAttribute("data-channel", "live");
  const leaseId = await inv.leaseId();
  {
    const [lease] = await leasesFor(sql, invoice.id);
    expect(lease).toMatchObject({ id: leaseId, status: "open" });
    expect((await invoiceRow(sql, invoice.id)).summary).toBeNull();
  }
  await saveScreenshot(page, "lease-generating");
  await expectAccessible(page, "lease generating");

  await inv.expectDisplay("proposed");
  const [proposed] = await leasesFor(sql, invoice.id);
  expect(proposed!.status).toBe("proposed");
  await expect(inv.proposal).toHaveText(asShown(proposed!.proposal!.summary));
  expect((await invoiceRow(sql, invoice.id)).summary, "a proposal never writes the invoice").toBeNull();
  expect(polls, "no polling while events stream").toEqual([]);
  await saveScreenshot(page, "lease-proposed");
  await expectAccessible(page, "lease proposed");

  await inv.apply.click();
  await inv.expectDisplay("applied");
  await expect(inv.state).toHaveText("The summary was applied to the invoice.");
  await saveScreenshot(page, "lease-applied");
  await expectAccessible(page, "lease applied");

  const after = await invoiceRow(sql, invoice.id);
  expect(after.summary).toBe(proposed!.proposal!.summary);
  expect(after.version).toBe(invoice.version + 1);
  expect((await leasesFor(sql, invoice.id)).map((l) => l.status)).toEqual(["applied"]);
  expect(await eventKinds(sql, leaseId)).toEqual(["opened", "proposed", "applied"]);

  // The page re-reads the invoice after the apply, and again after a reload.
  await expect(inv.invoiceSummary).toHaveText(asShown(proposed!.proposal!.summary));
  await page.reload();
  await expect(inv.invoiceSummary).toHaveText(asShown(proposed!.proposal!.summary));
  await inv.expectDisplay("applied");
  await expect(inv.timeline.getByText("Summary applied to the invoice")).toBeVisible();
});
