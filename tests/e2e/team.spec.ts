// Alice (admin) invites someone from the Team page; the invitee opens the link in a browser of
// their own, signs up, lands on the team's invoices, reads a teammate's invoice and is told in
// words that only its owner may summarize it.
import { randomUUID } from "node:crypto";
import { expect, expectAccessible, test } from "./support/fixtures";
import { InvoiceListPage, SignInPage } from "./support/pages";
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
  // A teammate's invoice: read in full, no Summarize, and why in words.
  await list.link(invoice.number).click();
  await expect(erin).toHaveURL(new RegExp(`/invoices/${invoice.id}$`));
  await expect(erin.getByRole("heading", { level: 1 })).toContainText(invoice.number);
  await expect(erin.getByTestId("only-owner")).toHaveText("Only Alice Martin, the owner, can summarize this invoice.");
  await expect(erin.getByRole("button", { name: /^Summarize/ })).toHaveCount(0);

  // Alice sees Erin on the team; the link is used up.
  await page.goto("/org");
  await expect(page.getByTestId("member").filter({ hasText: "Erin" })).toContainText("Member");
  const again = await erinContext.newPage();
  await again.goto(new URL(url).pathname);
  await expect(again.getByTestId("invitation-invalid")).toBeVisible();
});

test.describe("with JavaScript off", () => {
  test.use({ javaScriptEnabled: false });

  test("invite, sign up, change a role and remove with its confirm step, all as plain form posts", async ({
    page,
    context,
    signIn,
    newContext,
    sql,
  }) => {
    await signIn(context, ALICE);
    await page.goto("/org");
    const inviteForm = page.getByRole("region", { name: "Invite someone" });
    const email = `finn-${randomUUID().slice(0, 8)}@example.test`;
    await inviteForm.getByLabel("Email").fill(email);
    await inviteForm.getByLabel("Role", { exact: true }).selectOption("approver");
    await inviteForm.getByRole("button", { name: "Invite" }).click();
    const url = await inviteForm.getByTestId("invite-link").inputValue();
    await expect(page.getByTestId("pending-invitation").filter({ hasText: email })).toContainText("Approver");

    const finnContext = await newContext();
    const finn = await finnContext.newPage();
    await finn.goto(new URL(url).pathname);
    await finn.getByLabel("Your name").fill("Finn");
    await finn.getByLabel(/^Password \(at least/).fill("finn's long passphrase");
    await finn.getByLabel("Password again").fill("not the same one!");
    await finn.getByRole("button", { name: "Join the team" }).click();
    await expect(finn.getByTestId("sign-up-message")).toHaveText("The two passwords are not the same.");
    await finn.getByLabel(/^Password \(at least/).fill("finn's long passphrase");
    await finn.getByLabel("Password again").fill("finn's long passphrase");
    await finn.getByRole("button", { name: "Join the team" }).click();
    await expect(finn).toHaveURL(/\/invoices$/);

    await page.goto("/org");
    const row = page.getByTestId("member").filter({ hasText: "Finn" });
    await expect(row.getByTestId("member-role")).toHaveText("Approver");
    await row.getByLabel("Role of Finn").selectOption("member");
    await row.getByRole("button", { name: "Change role" }).click();
    await expect(page.getByTestId("team-notice")).toHaveText("Role changed.");
    await expect(page.getByTestId("member").filter({ hasText: "Finn" }).getByTestId("member-role")).toHaveText("Member");

    await page.getByTestId("member").filter({ hasText: "Finn" }).getByRole("link", { name: "Remove Finn" }).click();
    await expect(page.getByRole("heading", { name: "Remove Finn?" })).toBeVisible();
    await page.getByRole("button", { name: "Remove Finn" }).click();
    await expect(page.getByTestId("team-notice")).toContainText("removed from the team and signed out");
    await expect(page.getByTestId("member").filter({ hasText: "Finn" })).toHaveCount(0);

    // Finn's session ended with the removal.
    await finn.goto("/invoices");
    await expect(finn).toHaveURL(/\/sign-in/);

    // Signing in again makes Finn no team of their own: the page says why, and nothing is made (0077).
    const [before] = await sql<{ n: number }[]>`select count(*)::int as n from organization`;
    const again = new SignInPage(finn);
    await again.goto();
    await again.email.fill(email);
    await again.password.fill("finn's long passphrase");
    await again.submit.click();
    await expect(again.alert).toHaveText(/Your account is no longer part of any team, so there is nothing to sign in to\./);
    await expect(finn).toHaveURL(/\/sign-in/);
    const [after] = await sql<{ n: number }[]>`select count(*)::int as n from organization`;
    expect(after!.n).toBe(before!.n);
    const [memberships] = await sql<{ n: number }[]>`
      select count(*)::int as n from membership m join app_user u on u.id = m.user_id where u.email = ${email}`;
    expect(memberships!.n).toBe(0);

    // Invited back, Finn joins with the password the account already has: no new account (0062, 0077).
    await page.goto("/org");
    await inviteForm.getByLabel("Email").fill(email);
    await inviteForm.getByLabel("Role", { exact: true }).selectOption("member");
    await inviteForm.getByRole("button", { name: "Invite" }).click();
    const back = await inviteForm.getByTestId("invite-link").inputValue();
    await finn.goto(new URL(back).pathname);
    await expect(finn.getByText("You already have a Claimcheck account with this email")).toBeVisible();
    await expect(finn.getByLabel("Your name")).toHaveCount(0);
    await finn.getByLabel("Your password").fill("not finn's password");
    await finn.getByRole("button", { name: "Sign in and join" }).click();
    await expect(finn.getByTestId("sign-up-message")).toHaveText("That password does not match the account for this email.");
    await finn.getByLabel("Your password").fill("finn's long passphrase");
    await finn.getByRole("button", { name: "Sign in and join" }).click();
    await expect(finn).toHaveURL(/\/invoices$/);
    await page.goto("/org");
    await expect(page.getByTestId("member").filter({ hasText: "Finn" }).getByTestId("member-role")).toHaveText("Member");
  });
});
