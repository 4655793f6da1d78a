// An invoice's status in the browser: "Mark paid" on the invoice page (with JavaScript and
// without), then the list filtered by status, searched, totalled per currency, and exported as
// a CSV download of exactly the rows shown.
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { addInvoice, newUser } from "./support/list-data";
import { InvoiceListPage } from "./support/pages";

async function seed(sql: import("./support/db").Sql) {
  const user = await newUser(sql, "Paula Payer");
  const tag = randomBytes(2).toString("hex").toUpperCase();
  const late = await addInvoice(sql, user.id, `P${tag}-1`, "Late Payer Ltd", -10);
  const soon = await addInvoice(sql, user.id, `P${tag}-2`, 'Soon, "Quoted" & Co', 10);
  const dollars = await addInvoice(sql, user.id, `P${tag}-3`, "=Dollar Corp", 20);
  await sql`update invoice set currency = 'USD', total_cents = 50000 where id = ${dollars.id}`;
  return { user, tag, late, soon, dollars };
}

test("mark paid, filter by status, search, and export the rows shown as CSV", async ({ page, context, sql, signIn }) => {
  const { user, tag, late, soon, dollars } = await seed(sql);
  await signIn(context, user.email);

  // The overdue invoice: marked paid today (the form's default day).
  await page.goto(`/invoices/${late.id}`);
  await expect(page.getByTestId("invoice-status")).toHaveText("Overdue");
  const [today] = await sql<{ d: string }[]>`select current_date::text as d`;
  await expect(page.getByLabel("Paid on")).toHaveValue(today!.d);
  await page.getByRole("button", { name: "Mark paid" }).click();
  await expect(page.getByTestId("invoice-status")).toHaveText("Paid");
  await expect(page.getByRole("button", { name: "Reopen" })).toBeVisible();
  const [row] = await sql<{ status: string; paid_on: string }[]>`select status, paid_on::text from invoice where id = ${late.id}`;
  expect(row).toEqual({ status: "paid", paid_on: today!.d });
  await expectAccessible(page, "invoice page, paid");
  await page.setViewportSize({ width: 375, height: 812 });
  await saveScreenshot(page, "invoice-status-375px");
  await page.setViewportSize({ width: 1280, height: 900 });

  // The list: each row's status and owner; totals per currency of what is shown.
  const list = new InvoiceListPage(page);
  await list.goto();
  await expect(list.row(late.number)).toHaveAttribute("data-status", "paid");
  await expect(list.row(soon.number)).toHaveAttribute("data-status", "open");
  await expect(list.row(soon.number).getByTestId("invoice-owner")).toHaveText("Owner: Paula Payer");
  await expect(page.getByTestId("list-totals")).toHaveText("Total shown: EUR 2,500.00 · USD 500.00");

  // Filter by status, in the address too.
  await page.getByLabel("Status").selectOption("paid");
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/status=paid/);
  await expect.poll(() => list.numbers()).toEqual([late.number]);
  await expect(page.getByTestId("list-totals")).toHaveText("Total shown: EUR 1,250.00");

  // Search: the status back to any, a substring of the counterparty, any case.
  await page.getByLabel("Status").selectOption("any");
  await page.getByLabel("Search number or counterparty").fill(`quoted`);
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/q=quoted/);
  await expect.poll(() => list.numbers()).toEqual([soon.number]);
  await page.getByLabel("Search number or counterparty").fill(`p${tag.toLowerCase()}`);
  await page.getByRole("button", { name: "Show" }).click();
  await expect.poll(async () => (await list.numbers()).sort()).toEqual([late.number, soon.number, dollars.number].sort());
  await expectAccessible(page, "invoice list searched");

  // Export: the same rows, as a download.
  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export CSV" }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe(`invoices-${today!.d}.csv`);
  const csv = fs.readFileSync((await file.path())!, "utf8").replace(/^\uFEFF/, "");
  const lines = csv.trimEnd().split("\r\n");
  expect(lines[0]).toBe("Number,Counterparty,Owner,Currency,Amount,Issued on,Due on,Status,Paid on");
  expect(lines).toHaveLength(4);
  expect(lines).toContainEqual(
    expect.stringMatching(new RegExp(`^${late.number},Late Payer Ltd,Paula Payer,EUR,1250.00,.*,Paid,${today!.d}$`)),
  );
  expect(lines).toContainEqual(expect.stringContaining(`${soon.number},"Soon, ""Quoted"" & Co",Paula Payer,EUR,1250.00,`));
  expect(lines).toContainEqual(expect.stringContaining(`${dollars.number},'=Dollar Corp,Paula Payer,USD,500.00,`));

  // At 375 px the controls are still on the page.
  await page.setViewportSize({ width: 375, height: 812 });
  await expect(page.getByRole("link", { name: "Export CSV" })).toBeVisible();
  await saveScreenshot(page, "list-status-375px");
  await expectAccessible(page, "invoice list at 375 px");
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("Void and Reopen are plain form posts; a paid day in the future is refused in words", async ({ page, context, sql, signIn }) => {
    const { user, soon } = await seed(sql);
    await signIn(context, user.email);
    await page.goto(`/invoices/${soon.id}`);
    await expect(page.getByTestId("invoice-status")).toHaveText("Open");
    await page.getByRole("button", { name: "Void" }).click();
    await expect(page.getByTestId("invoice-status")).toHaveText("Void");
    await page.getByRole("button", { name: "Reopen" }).click();
    await expect(page.getByTestId("invoice-status")).toHaveText("Open");
    // A later day than the database's today is refused by the server, in words.
    const [tomorrow] = await sql<{ d: string }[]>`select (current_date + 1)::text as d`;
    await page.getByLabel("Paid on").fill(tomorrow!.d);
    await page.getByRole("button", { name: "Mark paid" }).click();
    await expect(page.getByRole("alert")).toHaveText("The payment date cannot be later than today.");
    const [row] = await sql<{ status: string; n: number }[]>`
      select status, (select count(*)::int from invoice_change where invoice_id = ${soon.id} and kind = 'status_changed') as n from invoice where id = ${soon.id}`;
    expect(row).toEqual({ status: "open", n: 2 });
  });
});
