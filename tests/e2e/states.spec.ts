import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { invoiceRow, leaseRow, leasesFor, seedClosedLease, userId } from "./support/db";
import { InvoicePage, asShown } from "./support/pages";
import { ALICE } from "./support/settings";

test("a failed generation is shown in plain words, and Try again opens a new lease", async ({ page, context, sql, signIn, newInvoice }) => {
  const invoice = await newInvoice(ALICE);
  // Seeded by hand, as a worker that gave up would leave it.
  const failedId = await seedClosedLease(sql, {
    invoiceId: invoice.id,
    actorId: await userId(sql, ALICE),
    status: "rejected",
    closedReason: "generation_failed",
    events: [{ kind: "opened" }, { kind: "generation_failed", detail: { error: "ModelUnavailableError: upstream 503", closed: true } }],
  });
  await signIn(context, ALICE);
  const inv = new InvoicePage(page);
  await inv.goto(invoice.id);
  await inv.expectDisplay("failed");
  await expect(inv.state).toHaveText("The summary could not be written. Nothing was changed on the invoice.");
  await expect(inv.timeline.locator('li[data-kind="generation_failed"]')).toContainText("The summary could not be written");
  await expect(inv.panel).not.toContainText("ModelUnavailableError"); // no internals in the page
  await saveScreenshot(page, "lease-failed");
  await expectAccessible(page, "lease failed");

  await inv.tryAgain.click();
  await inv.expectDisplay("generating");
  const retryId = await inv.leaseId();
  expect(retryId).not.toBe(failedId);
  expect((await leasesFor(sql, invoice.id)).map((l) => [l.id, l.status])).toEqual([
    [failedId, "rejected"],
    [retryId, "open"],
  ]);
  await inv.expectDisplay("proposed");
  expect((await leaseRow(sql, retryId)).status).toBe("proposed");
  expect((await invoiceRow(sql, invoice.id)).summary).toBeNull();
});

test("when server-sent events fail, the page polls and still shows the lease as it stands", async ({
  page,
  sql,
  allowConsoleErrors,
  openInvoice,
}) => {
  allowConsoleErrors(/status of 503/, /EventSource/);
  await page.route("**/api/leases/*/events", (route) =>
    route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ detail: "events_unavailable" }) }),
  );
  const polls: string[] = [];
  page.on("request", (request) => {
    if (/\/api\/leases\/[0-9a-f-]{36}$/.test(new URL(request.url()).pathname)) polls.push(request.url());
  });

  const { inv } = await openInvoice(ALICE);
  await inv.summarize.click();
  await inv.expectDisplay("generating");
  await expect(page.getByTestId("channel")).toHaveAttribute("data-channel", "polling");
  const leaseId = await inv.leaseId();
  await inv.expectDisplay("proposed");
  expect((await leaseRow(sql, leaseId)).status).toBe("proposed");
  expect(polls.length, "the proposal arrived by polling").toBeGreaterThan(0);
  await expect(inv.proposal).toHaveText(asShown((await leaseRow(sql, leaseId)).proposal!.summary));
});
