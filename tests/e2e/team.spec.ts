// Alice (admin) invites someone from the Team page; the invitee opens the link in a browser of
// their own, signs up, lands on the team's invoices, reads a teammate's invoice and is told in
// words that only its owner may summarize it.
import { randomUUID } from "node:crypto";
import { expect, expectAccessible, test } from "./support/fixtures";
import { InvoiceListPage, InvoicePage } from "./support/pages";
import { ALICE } from "./support/settings";

test("an admin invites, the invitee signs up by the link and works with the team", async ({
  page,
  context,
  signIn,
  newInvoice,
  newContext,
}) => {
  const invoice = await newInvoice(ALICE, `Team Ledger ${randomUUID().slice(0, 6)}`);
  await signIn(context, ALICE);
  await page.goto("/invoices");
  await page.getByRole("link", { name: "Team", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Team", level: 1 })).toBeVisible();
  await expectAccessible(page, "team page");

  const email = `erin-${randomUUID().slice(0, 8)}@example.test`;
  const inviteForm = page.getByRole("region", { name: "Invite someone" });
  await inviteForm.getByLabel("Email").fill(email);
  await inviteForm.getByLabel("Role", { exact: true }).selectOption("member");
  await inviteForm.getByRole("button", { name: "Invite" }).click();
  await expect(inviteForm.getByTestId("invite-message")).toContainText("shown only this once");
  const url = await inviteForm.getByTestId("invite-link").inputValue();
  expect(url).toMatch(/\/invitations\/[A-Za-z0-9_-]{43}$/);

  const erinContext = await newContext();
  const erin = await erinContext.newPage();
  await erin.goto(new URL(url).pathname);
  await expect(erin.getByRole("heading", { name: /^Join / })).toBeVisible();
  await expectAccessible(erin, "invitation sign-up");
  await erin.getByLabel("Your name").fill("Erin");
  await erin.getByLabel(/^Password \(at least/).fill("erin's long passphrase");
  await erin.getByLabel("Password again").fill("erin's long passphrase");
  await erin.getByRole("button", { name: "Join the team" }).click();
  await expect(erin).toHaveURL(/\/invoices$/);

  const list = new InvoiceListPage(erin);
  await expect(list.link(invoice.number)).toBeVisible();
  const inv = new InvoicePage(erin);
  await inv.goto(invoice.id);
  if (await inv.summarize.isVisible()) {
    await inv.summarize.click();
    await expect(erin.getByText("Only the invoice's owner can request a summary.", { exact: false })).toBeVisible();
  }

  // Alice sees Erin on the team; the link is used up.
  await page.goto("/org");
  await expect(page.getByTestId("member").filter({ hasText: "Erin" })).toContainText("Member");
  const again = await erinContext.newPage();
  await again.goto(new URL(url).pathname);
  await expect(again.getByTestId("invitation-invalid")).toBeVisible();
});
