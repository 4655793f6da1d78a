import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { eventKinds, invoiceRow, leaseRow } from "./support/db";
import { SignInPage } from "./support/pages";
import { expectRunEnded } from "./support/inngest";
import { ALICE } from "./support/settings";

test("sign-out during generation: after signing in again the lease is rejected and the invoice untouched", async ({
  page,
  sql,
  context,
  openInvoice,
}) => {
  const { invoice, inv } = await openInvoice(ALICE);
  await inv.summarize.click();
  await inv.expectDisplay("generating");
  const leaseId = await inv.leaseId();

  const cookie = (await context.cookies()).find((c) => c.name === "claimcheck_session");
  expect(cookie).toBeTruthy();
  await inv.signOut.click();
  // Nothing waited for review, so no question: signed out at once, with the way back.
  await expect(page).toHaveURL(`/sign-in?signed-out=1&next=${encodeURIComponent(`/invoices/${invoice.id}`)}`);
  const closed = await leaseRow(sql, leaseId);
  expect(closed).toMatchObject({ status: "rejected", closed_reason: "signed_out" });
  expect(await eventKinds(sql, leaseId)).toContain("revoked");
  // A replayed copy of the signed-out cookie no longer opens anything.
  const replay = await page.request.get(`/api/leases/${leaseId}`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
  expect(replay.status()).toBe(401);

  // The sign-out reaches the model call (docs/decisions/0025): the generation's run ends with
  // no proposal, and no answer comes back late to revive the lease or touch the invoice.
  await expectRunEnded("main", leaseId);
  expect(await eventKinds(sql, leaseId)).toEqual(["opened", "revoked"]);
  expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "signed_out", proposal: null });

  const signInPage = new SignInPage(page);
  await signInPage.signIn(ALICE, undefined, new RegExp(`/invoices/${invoice.id}$`));
  await inv.goto(invoice.id);
  await inv.expectDisplay("rejected");
  await expect(inv.state).toHaveText(/stopped because you signed out\. Nothing was changed on the invoice\./);
  await expect(inv.timeline.locator('li[data-kind="revoked"]')).toContainText("Stopped because you signed out");
  await expect(inv.invoiceSummary).toHaveText("No summary yet.");
  await expect(inv.apply).toHaveCount(0);
  await saveScreenshot(page, "lease-signed-out");
  await expectAccessible(page, "lease rejected (signed out)");

  const lease = await leaseRow(sql, leaseId);
  expect(lease).toMatchObject({ status: "rejected", closed_reason: "signed_out", proposal: null });
  const after = await invoiceRow(sql, invoice.id);
  expect(after.summary).toBeNull();
  expect(after.version).toBe(invoice.version);
});
