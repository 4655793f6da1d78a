// Keyboard only, at phone width: sign in, open an invoice, summarize. Every control is
// reachable with Tab, shows where focus is, and nothing scrolls sideways at 375 px.
import type { Page } from "@playwright/test";
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { leasesFor } from "./support/db";
import { InvoicePage } from "./support/pages";
import { ALICE, DEMO_PASSWORD } from "./support/settings";

test.use({ viewport: { width: 375, height: 740 } });

/** Presses Tab until `target` has focus; fails if it never does. */
async function tabTo(page: Page, target: ReturnType<Page["locator"]>, maxPresses = 40) {
  for (let i = 0; i < maxPresses; i++) {
    if (await target.evaluate((el) => el === document.activeElement)) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`could not reach ${target} with Tab`);
}

async function expectNoSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `horizontal overflow on ${page.url()}`).toBeLessThanOrEqual(0);
}

async function expectVisibleFocus(page: Page) {
  const outline = await page.evaluate(() => {
    const style = getComputedStyle(document.activeElement!);
    return { style: style.outlineStyle, width: parseFloat(style.outlineWidth) };
  });
  expect(outline.style).not.toBe("none");
  expect(outline.width).toBeGreaterThanOrEqual(2);
}

test("keyboard only at 375 px: sign in, open an invoice, summarize", async ({ page, sql, newInvoice }) => {
  const invoice = await newInvoice(ALICE);
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in$/);
  await expectNoSidewaysScroll(page);

  await tabTo(page, page.getByLabel("Email"));
  await expectVisibleFocus(page);
  await page.keyboard.type(ALICE);
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("Password")).toBeFocused();
  await page.keyboard.type(DEMO_PASSWORD);
  await page.keyboard.press("Tab");
  await expect(page.getByRole("button", { name: "Sign in" })).toBeFocused();
  await expectVisibleFocus(page);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/invoices$/);
  await expectNoSidewaysScroll(page);

  const link = page.getByRole("link", { name: new RegExp(invoice.number) });
  await tabTo(page, link, 60);
  await expectVisibleFocus(page);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/invoices/${invoice.id}$`));
  const inv = new InvoicePage(page);
  await inv.expectDisplay("none");
  await expectNoSidewaysScroll(page);

  await tabTo(page, inv.summarize, 60);
  await expectVisibleFocus(page);
  await page.keyboard.press("Enter");
  await inv.expectDisplay("generating");
  expect(await leasesFor(sql, invoice.id)).toHaveLength(1);
  await inv.expectDisplay("proposed");
  await expectNoSidewaysScroll(page);
  await tabTo(page, inv.apply, 60);
  await expectVisibleFocus(page);
  await saveScreenshot(page, "lease-proposed-375px");
  await expectAccessible(page, "lease proposed at 375 px");
  await page.keyboard.press("Enter");
  await inv.expectDisplay("applied");
  await expect.poll(async () => (await leasesFor(sql, invoice.id))[0]?.status).toBe("applied");
});
