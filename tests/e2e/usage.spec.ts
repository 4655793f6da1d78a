// The usage page and the budget: an admin of a team of their own opens /usage from the header,
// caps each member's day at $0 through the form (a bad amount is refused beside its field first,
// and nothing is written); the member's Summarize is then refused in words, with when the cap
// resets; the admin raises it and the member's Summarize works. The member's /usage shows only
// their own request; the admin's shows it with who made it and a link to its invoice. Then the
// same refusal and form without JavaScript. A team of its own per test, so no cap reaches the
// demo team other scenarios use. Screenshots: usage-admin.png, usage-member.png, budget-refused.png.
import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { createInvoice, leasesFor, type Sql } from "./support/db";
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { InvoicePage } from "./support/pages";
import { ALICE } from "./support/settings";

/** An admin and a member of a new organization, signing in with the demo password. */
async function freshTeam(sql: Sql) {
  const tag = randomUUID().slice(0, 8);
  const [alice] = await sql<{ password_hash: string }[]>`select password_hash from app_user where email = ${ALICE}`;
  const hash = alice!.password_hash;
  const user = async (name: string, email: string) =>
    (await sql<{ id: string }[]>`insert into app_user (email, name, password_hash) values (${email}, ${name}, ${hash}) returning id`)[0]!
      .id;
  const admin = { email: `una-${tag}@example.test`, name: `Una Admin ${tag}` };
  const member = { email: `max-${tag}@example.test`, name: `Max Member ${tag}` };
  const adminId = await user(admin.name, admin.email);
  const [home] = await sql<{ org_id: string }[]>`select user_home_org(${adminId}) as org_id`;
  const orgId = home!.org_id;
  const memberId = await user(member.name, member.email);
  await sql`insert into membership (org_id, user_id, role) values (${orgId}, ${memberId}, 'member')`;
  return { orgId, admin: { ...admin, id: adminId }, member: { ...member, id: memberId } };
}

const budgetRow = async (sql: Sql, orgId: string) =>
  (
    await sql<{ member_daily_cents: number | null; organization_monthly_cents: number | null }[]>`
    select member_daily_cents, organization_monthly_cents from org_budget where org_id = ${orgId}`
  )[0] ?? null;

function budgetForm(page: Page) {
  const form = page.getByTestId("budget-form");
  return {
    form,
    memberDaily: form.getByLabel("Each member, per day ($)"),
    teamMonthly: form.getByLabel("Team, per month ($)"),
    save: form.getByRole("button", { name: "Save budget" }),
  };
}

const REFUSED =
  /^Your own AI budget for today \(each member's daily limit\) is used up, so nothing was started and nothing was charged\. It resets at 00:00 UTC \(in (\d+ h( \d+ min)?|\d+ min|less than a minute)\)\. An admin can raise it on the Usage page\.$/;

test("an admin caps the budget on /usage, the member is refused in words, the admin raises it, and both read the request", async ({
  page,
  context,
  signIn,
  sql,
  newContext,
}) => {
  const { orgId, admin, member } = await freshTeam(sql);
  await signIn(context, admin.email);
  await page.goto("/invoices");
  await page.getByRole("link", { name: "Usage", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Usage", level: 1 })).toBeVisible();
  await expect(page.getByTestId("spend-month")).toHaveText("$0.00");
  await expectAccessible(page, "usage page, an admin's");

  // A bad amount: said beside its field, and nothing is written, the good amount beside it included.
  const budget = budgetForm(page);
  await budget.memberDaily.fill("0");
  await budget.teamMonthly.fill("12,5");
  await budget.save.click();
  await expect(page.getByTestId("cap-organization_monthly_cents-error")).toHaveText(
    "Write an amount in dollars and cents, such as 25 or 25.50, or leave it blank for no limit.",
  );
  await expect(budget.teamMonthly).toHaveAttribute("aria-invalid", "true");
  await expect(budget.teamMonthly).toHaveValue("12,5");
  expect(await budgetRow(sql, orgId)).toBeNull();

  // A cap of 0 admits no request.
  await budget.teamMonthly.fill("");
  await budget.save.click();
  await expect(page.getByTestId("usage-notice")).toHaveText("Budget saved. It applies to the next request.");
  expect(await budgetRow(sql, orgId)).toEqual({ member_daily_cents: 0, organization_monthly_cents: null });
  await expect(budgetForm(page).memberDaily).toHaveValue("0.00");

  // The member asks for a summary: refused in words, with when it resets; no lease, nothing started.
  const memberContext = await newContext();
  await signIn(memberContext, member.email);
  const memberPage = await memberContext.newPage();
  const invoice = await createInvoice(sql, member.email, `Budget Ledger ${randomUUID().slice(0, 6)}`);
  const inv = new InvoicePage(memberPage);
  await inv.goto(invoice.id);
  await inv.summarize.click();
  await expect(inv.message).toHaveText(REFUSED);
  await inv.expectDisplay("none");
  expect(await leasesFor(sql, invoice.id)).toHaveLength(0);
  await saveScreenshot(memberPage, "budget-refused");

  // The admin raises it to $5 a day; the member's Summarize now works.
  await budgetForm(page).memberDaily.fill("5");
  await budgetForm(page).save.click();
  // (The notice of the first save is still shown: the form shows the saved amount once it is saved.)
  await expect(budgetForm(page).memberDaily).toHaveValue("5.00");
  expect((await budgetRow(sql, orgId))!.member_daily_cents).toBe(500);
  await inv.summarize.click();
  await inv.expectDisplay("proposed", 30_000);
  const [lease] = await leasesFor(sql, invoice.id);
  const usage = await sql<
    { cost_cents: string; outcome: string }[]
  >`select cost_cents, outcome from model_usage where lease_id = ${lease!.id}`;
  expect(usage).toHaveLength(1);
  expect(usage[0]!.outcome).toBe("proposed");
  expect(Number(usage[0]!.cost_cents)).toBeGreaterThan(0);

  // The member's page: their own request alone, and the caps read-only.
  await memberPage.getByRole("link", { name: "Usage", exact: true }).click();
  await expect(memberPage.getByRole("heading", { name: "Your spend" })).toBeVisible();
  const memberCalls = memberPage.getByTestId("call");
  await expect(memberCalls).toHaveCount(1);
  await expect(memberCalls.first()).toContainText(invoice.number);
  await expect(memberCalls.first()).toContainText("Summary");
  await expect(memberCalls.first()).toContainText("Proposed for review");
  await expect(memberPage.getByTestId("budget-form")).toHaveCount(0);
  await expect(memberPage.getByTestId("budget-caps")).toContainText("Each member, per day$5.00");
  await expect(memberPage.getByTestId("members-spend")).toHaveCount(0);
  // (The admin's name is in the header's team name, not among the requests.)
  await expect(memberPage.getByTestId("calls")).not.toContainText(admin.name);
  // Their own request links to its attempt in the invoice's history.
  await expect(memberCalls.first().getByRole("link", { name: invoice.number })).toHaveAttribute(
    "href",
    `/invoices/${invoice.id}#attempt-${lease!.id}`,
  );
  await expectAccessible(memberPage, "usage page, a member's");
  await saveScreenshot(memberPage, "usage-member");

  // The admin's page: the member's request, by name, with its invoice (not its lease: theirs alone).
  await page.goto("/usage");
  const call = page.getByTestId("call").filter({ hasText: member.name });
  await expect(call).toHaveCount(1);
  await expect(call).toContainText("Summary");
  const link = call.getByRole("link", { name: invoice.number });
  await expect(link).toHaveAttribute("href", `/invoices/${invoice.id}#history-heading`);
  expect(await page.content()).not.toContain(lease!.id);
  await expect(page.getByTestId("members-spend")).toContainText(member.name);
  await expect(page.getByTestId("by-purpose")).toContainText("Summary");
  await expect(page.getByTestId("by-day")).toBeVisible();
  await expect(page.getByTestId("spend-month")).not.toHaveText("$0.00");
  await saveScreenshot(page, "usage-admin");
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/invoices/${invoice.id}#history-heading$`));
});

test.describe("with JavaScript off", () => {
  test.use({ javaScriptEnabled: false });

  test("the budget form and the budget refusal work as plain form posts", async ({ page, context, signIn, sql, browser, baseURL }) => {
    const { orgId, admin, member } = await freshTeam(sql);
    await signIn(context, admin.email);
    await page.goto("/usage");
    const budget = budgetForm(page);
    await budget.memberDaily.fill("-1");
    await budget.save.click();
    await expect(page.getByTestId("cap-member_daily_cents-error")).toBeVisible();
    await expect(page.getByTestId("budget-message")).toHaveText("Check the amounts below. Nothing was changed.");
    expect(await budgetRow(sql, orgId)).toBeNull();
    await budgetForm(page).memberDaily.fill("0");
    await budgetForm(page).save.click();
    await expect(page).toHaveURL(/\/usage\?notice=saved/);
    await expect(page.getByTestId("usage-notice")).toHaveText("Budget saved. It applies to the next request.");
    expect((await budgetRow(sql, orgId))!.member_daily_cents).toBe(0);

    const memberContext = await browser.newContext({ baseURL, javaScriptEnabled: false });
    try {
      await signIn(memberContext, member.email);
      const memberPage = await memberContext.newPage();
      const invoice = await createInvoice(sql, member.email);
      const inv = new InvoicePage(memberPage);
      await inv.goto(invoice.id);
      await inv.summarize.click();
      await expect(memberPage).toHaveURL(/notice=summarize\.budget_exhausted&cap=member_daily_cents&resets=/);
      await expect(inv.message).toHaveText(REFUSED);
      expect(await leasesFor(sql, invoice.id)).toHaveLength(0);
    } finally {
      await memberContext.close();
    }
  });
});
