// The tab is only a view: closing it changes nothing, and reopening the invoice shows the
// lease where it stands.
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { eventKinds, invoiceRow, leaseRow } from "./support/db";
import { InvoicePage, asShown } from "./support/pages";
import { ALICE, SERVERS } from "./support/settings";

test("tab closed during generation: the proposal waits on the lease, a new tab shows it, apply works", async ({
  context,
  sql,
  signIn,
  newInvoice,
  newContext,
}) => {
  const invoice = await newInvoice(ALICE);
  await signIn(context, ALICE);
  const first = await context.newPage();
  const tab = new InvoicePage(first);
  await tab.goto(invoice.id);
  await tab.summarize.click();
  await tab.expectDisplay("generating");
  const leaseId = await tab.leaseId();
  await first.close();

  expect((await leaseRow(sql, leaseId)).status, "closing the tab closes nothing").toBe("open");
  // The worker finishes on its own and proposes to the lease, not to a tab.
  await expect.poll(async () => (await leaseRow(sql, leaseId)).status, { timeout: 20_000 }).toBe("proposed");
  const lease = await leaseRow(sql, leaseId);
  const untouched = await invoiceRow(sql, invoice.id);
  expect(untouched.summary, "the invoice is untouched until apply").toBeNull();
  expect(untouched.version).toBe(invoice.version);

  // Another device, signed in afresh before the deadline, sees the same lease.
  const device = await newContext();
  await signIn(device, ALICE);
  const elsewhere = new InvoicePage(await device.newPage());
  await elsewhere.goto(invoice.id);
  await elsewhere.expectDisplay("proposed");
  await expect(elsewhere.proposal).toHaveText(asShown(lease.proposal!.summary));

  // A new tab in the same browser shows it too, and applies it.
  const second = new InvoicePage(await context.newPage());
  await second.goto(invoice.id);
  await second.expectDisplay("proposed");
  expect(await second.leaseId()).toBe(leaseId);
  await expect(second.proposal).toHaveText(asShown(lease.proposal!.summary));
  expect((await invoiceRow(sql, invoice.id)).summary, "still untouched after reopening").toBeNull();
  await second.apply.click();
  await second.expectDisplay("applied");

  const applied = await invoiceRow(sql, invoice.id);
  expect(applied.summary).toBe(lease.proposal!.summary);
  expect(applied.version).toBe(invoice.version + 1);
  expect(await eventKinds(sql, leaseId)).toEqual(["opened", "proposed", "applied"]);
  // The other device hears of it without reloading.
  await elsewhere.expectDisplay("applied");
  await expect(elsewhere.invoiceSummary).toHaveText(asShown(lease.proposal!.summary));
});

test.describe("with a short deadline", () => {
  test.use({ server: "short" });

  test("tab closed and the deadline passes: the reopened invoice shows expired, the summary untouched, the late completion in the timeline", async ({
    context,
    sql,
    signIn,
    newInvoice,
  }) => {
    const ttlMs = Number(SERVERS.short.LEASE_TTL_SECONDS) * 1000;
    const invoice = await newInvoice(ALICE);
    await signIn(context, ALICE);
    const first = await context.newPage();
    const tab = new InvoicePage(first);
    await tab.goto(invoice.id);
    await tab.summarize.click();
    await tab.expectDisplay("generating");
    const leaseId = await tab.leaseId();
    await first.close();
    const closedAt = Date.now();

    // The model answers after the deadline: its completion is recorded, never written.
    await expect.poll(() => eventKinds(sql, leaseId), { timeout: 30_000 }).toContain("late_completion");
    expect(Date.now() - closedAt).toBeGreaterThan(ttlMs - 1_000);
    const lease = await leaseRow(sql, leaseId);
    expect(lease.status).toBe("expired");
    expect(lease.proposal).toBeNull();
    const kinds = await eventKinds(sql, leaseId);
    expect(kinds).toContain("expired");
    expect(kinds).not.toContain("proposed");
    const after = await invoiceRow(sql, invoice.id);
    expect(after.summary).toBeNull();
    expect(after.version).toBe(invoice.version);

    const reopened = new InvoicePage(await context.newPage());
    await reopened.goto(invoice.id);
    await reopened.expectDisplay("expired");
    await expect(reopened.state).toHaveText(/Time ran out before the summary was ready, so nothing was changed/);
    await expect(reopened.invoiceSummary).toHaveText("No summary yet.");
    await expect(reopened.timeline.locator('li[data-kind="late_completion"]')).toContainText(
      "A summary arrived after this request had ended",
    );
    await expect(reopened.timeline.locator('li[data-kind="expired"]')).toContainText("Time ran out");
    await expect(reopened.apply).toHaveCount(0);
    await expect(reopened.tryAgain).toBeVisible();
    await saveScreenshot(reopened.page, "lease-expired");
    await expectAccessible(reopened.page, "lease expired");
  });
});
