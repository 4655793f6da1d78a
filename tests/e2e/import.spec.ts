// Importing invoices from a CSV file with JavaScript off: a file with one bad row writes
// nothing and names the row in words; a good one is previewed, then created on Confirm; and
// the New invoice form creates one, with "Add more lines" as a plain post.
import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { expect, expectAccessible, test } from "./support/fixtures";
import { ALICE } from "./support/settings";

test.use({ javaScriptEnabled: false });

/** axe-core needs scripts: the page is checked as served, for the same session, in a context with scripts on. */
async function expectAccessibleAsServed(page: Page, label: string) {
  const context = await page
    .context()
    .browser()!
    .newContext({ javaScriptEnabled: true, viewport: { width: 375, height: 800 } });
  try {
    await context.addCookies(await page.context().cookies());
    const twin = await context.newPage();
    await twin.goto(page.url());
    await expectAccessible(twin, label);
  } finally {
    await context.close();
  }
}

const HEADER = "number,counterparty,currency,issued_on,due_on,line_description,quantity,unit_price_cents";

async function countByPrefix(sql: Parameters<Parameters<typeof test>[2]>[0]["sql"], prefix: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from invoice where number like ${prefix + "%"}`;
  return row!.n;
}

test("an import with one bad row writes nothing and names the row; a good one is previewed, then created", async ({
  page,
  context,
  sql,
  signIn,
}) => {
  const prefix = `E2E-${randomUUID().slice(0, 6)}-`;
  await signIn(context, ALICE);
  await page.goto("/invoices");
  await page.getByRole("link", { name: "Import CSV" }).click();
  await expect(page.getByRole("heading", { name: "Import invoices from CSV" })).toBeVisible();
  await expectAccessibleAsServed(page, "import page");

  const bad = [
    HEADER,
    `${prefix}1,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,10000`,
    `${prefix}2,Contoso,EUR,2026-11-01,2026-12-01,Audit,1,10000`,
    `${prefix}3,Contoso,EUR,2026-11-01,2026-12-31x,Audit,1,10000`,
  ].join("\r\n");
  await page.getByLabel("CSV file").setInputFiles({ name: "bad.csv", mimeType: "text/csv", buffer: Buffer.from(bad) });
  await page.getByRole("button", { name: "Preview" }).click();
  await expect(page.getByRole("alert")).toContainText("Nothing was imported");
  await expect(page.getByTestId("import-errors")).toHaveText("Row 4, due date: not a date like 2026-12-31");
  expect(await countByPrefix(sql, prefix)).toBe(0);

  const good = [
    HEADER,
    `${prefix}1,"Contoso, Ltd",EUR,2026-11-01,2026-12-01,Audit,1,10000`,
    `${prefix}1,"Contoso, Ltd",EUR,2026-11-01,2026-12-01,"Travel ""by train""",2,2500`,
    `${prefix}2,Fabrikam,USD,2026-11-02,2026-12-02,Licences,3,999`,
  ].join("\r\n");
  await page.getByLabel("Or paste the CSV text").fill(good);
  await page.getByRole("button", { name: "Preview" }).click();
  await expect(page.getByRole("heading", { name: "Check before importing" })).toBeVisible();
  await expect(page.getByText("Confirm will create 2 invoices")).toBeVisible();
  await expect(page.getByTestId("import-create")).toContainText(`${prefix}1, Contoso, Ltd, 2 lines`);
  // The preview wrote nothing.
  expect(await countByPrefix(sql, prefix)).toBe(0);
  await page.getByRole("button", { name: "Confirm import" }).click();
  await expect(page.getByRole("status")).toContainText("2 invoices created");
  expect(await countByPrefix(sql, prefix)).toBe(2);
  const lines = await sql<{ description: string }[]>`
    select l.description from invoice_line l join invoice i on i.id = l.invoice_id where i.number = ${prefix + "1"} order by l.position`;
  expect(lines.map((l) => l.description)).toEqual(["Audit", 'Travel "by train"']);
});

test("New invoice: five line rows, 'Add more lines' without JavaScript, errors beside the field, then created", async ({
  page,
  context,
  sql,
  signIn,
}) => {
  const number = `E2E-NEW-${randomUUID().slice(0, 6)}`;
  await signIn(context, ALICE);
  await page.goto("/invoices");
  await page.getByRole("link", { name: "New invoice" }).click();
  await expect(page.getByRole("heading", { name: "New invoice" })).toBeVisible();
  await expectAccessibleAsServed(page, "new invoice page");
  await expect(page.getByRole("group", { name: /^Line \d+$/ })).toHaveCount(5);
  await page.getByLabel("Invoice number").fill(number);
  await page.getByLabel("Counterparty").fill("Northwind");
  await page.getByRole("button", { name: "Add more lines" }).click();
  await expect(page.getByRole("group", { name: /^Line \d+$/ })).toHaveCount(10);
  // What was typed stays.
  await expect(page.getByLabel("Invoice number")).toHaveValue(number);

  await page.getByLabel("Currency (e.g. EUR)").fill("EUR");
  await page.getByLabel("Issued on").fill("2026-11-01");
  await page.getByLabel("Due on").fill("2026-12-01");
  const line1 = page.getByRole("group", { name: "Line 1", exact: true });
  await line1.getByLabel("Description").fill("Consulting");
  await line1.getByLabel("Quantity").fill("2");
  await line1.getByLabel("Unit price").fill("12,5x");
  await page.getByRole("button", { name: "Create invoice" }).click();
  await expect(page.getByRole("group", { name: "Line 1", exact: true }).getByText("Enter a price like 120.50.")).toBeVisible();
  await page.getByRole("group", { name: "Line 1", exact: true }).getByLabel("Unit price").fill("120.50");
  await page.getByRole("button", { name: "Create invoice" }).click();
  await expect(page).toHaveURL(/\/invoices\/[0-9a-f-]{36}$/);
  const [row] = await sql<{ total_cents: number }[]>`select total_cents from invoice where number = ${number}`;
  expect(row!.total_cents).toBe(24100);
});
