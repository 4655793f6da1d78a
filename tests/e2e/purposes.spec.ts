// The invoice page's three purposes (Summary, Review, Categories), each in its own panel: from
// the click to the apply, what will change shown before it (and written exactly), a partial apply
// of categories by line, and that apply with JavaScript off. The local model answers every
// purpose deterministically: the lines "Consulting, November" (6000) and "Travel expenses" (6300),
// an invoice due 2026-12-01 and still open (overdue by the database's clock).
import type { Locator, Page } from "@playwright/test";
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { eventKinds, invoiceRow, leaseRow, type Sql } from "./support/db";
import { asShown, type LeaseDisplay } from "./support/pages";
import { ALICE } from "./support/settings";

/** One purpose's panel, its controls found inside it (other panels have an Apply of their own). */
class PurposePanel {
  readonly root: Locator;
  readonly changes: Locator;
  readonly apply: Locator;
  readonly state: Locator;
  constructor(
    readonly page: Page,
    testId: string,
  ) {
    this.root = page.getByTestId(testId);
    this.changes = this.root.getByTestId("planned-change");
    this.apply = this.root.getByRole("button", { name: "Apply", exact: true });
    this.state = this.root.getByTestId("lease-state");
  }
  button(name: string): Locator {
    return this.root.getByRole("button", { name, exact: true });
  }
  async expectDisplay(display: LeaseDisplay, timeout?: number) {
    await expect(this.root).toHaveAttribute("data-display", display, { timeout });
  }
  async leaseId(): Promise<string> {
    const id = await this.root.getAttribute("data-lease-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    return id!;
  }
}

const review = (page: Page) => new PurposePanel(page, "lease-panel-review_invoice");
const categories = (page: Page) => new PurposePanel(page, "lease-panel-categorize_lines");

type Line = { id: string; description: string; category: string | null };
const linesOf = (sql: Sql, invoiceId: string) =>
  sql<Line[]>`select id, description, category from invoice_line where invoice_id = ${invoiceId} order by position, id`;

type Finding = { severity: "high" | "medium" | "low"; message: string; code: string };
const SEVERITY = { high: "High", medium: "Medium", low: "Low" } as const;

test("three panels in the registry's order; Review from the click to the apply, the notes shown as they will be written", async ({
  page,
  sql,
  openInvoice,
}) => {
  const { invoice, inv } = await openInvoice(ALICE);
  const panels = page.locator("[data-purpose]");
  await expect(panels).toHaveCount(3);
  expect(await panels.evaluateAll((els) => els.map((e) => e.getAttribute("data-purpose")))).toEqual([
    "summarize_invoice",
    "review_invoice",
    "categorize_lines",
  ]);
  await expectAccessible(page, "invoice, three purposes");

  const panel = review(page);
  await panel.button("Review").click();
  await panel.expectDisplay("generating");
  await expect(panel.state).toContainText("Reviewing the invoice…");
  // The other purposes' panels are untouched: the summary's still offers Summarize.
  await inv.expectDisplay("none");
  await panel.expectDisplay("proposed");
  await expect(panel.root.locator(".lease__badge")).toHaveText("Review ready");
  const leaseId = await panel.leaseId();
  const findings = ((await leaseRow(sql, leaseId)).proposal as unknown as { findings: Finding[] }).findings;
  expect(findings.map((f) => f.code)).toContain("overdue");

  // What will change: the review notes, none before, the findings after, one a line.
  await expect(panel.changes).toHaveCount(1);
  await expect(panel.changes).toHaveAttribute("data-key", "review_notes");
  await expect(panel.changes.getByTestId("change-before")).toHaveText("none");
  await expect(panel.changes.getByTestId("change-after")).toHaveText(
    asShown(findings.map((f) => `${SEVERITY[f.severity]}: ${f.message}`).join("")),
  );
  await saveScreenshot(page, "purpose-review-proposed");
  await expectAccessible(page, "review proposed");

  const before = await invoiceRow(sql, invoice.id);
  await panel.apply.click();
  await panel.expectDisplay("applied");
  await expect(panel.state).toHaveText("The review notes were applied to the invoice.");
  const [row] = await sql<{ review_notes: Finding[]; review_notes_version: number; version: number }[]>`
    select review_notes, review_notes_version, version from invoice where id = ${invoice.id}`;
  expect(row!.review_notes, "apply wrote what the page showed").toEqual(findings);
  expect(row!.version).toBe(before.version + 1);
  expect(row!.review_notes_version).toBe(before.version + 1);
  expect((await invoiceRow(sql, invoice.id)).summary, "no other purpose's target").toBeNull();
  expect(await eventKinds(sql, leaseId)).toEqual(["opened", "proposed", "applied"]);

  // The page shows the notes, and says which version they were written for.
  const notes = page.getByTestId("review-notes");
  await expect(notes.getByTestId("review-note")).toHaveCount(findings.length);
  await expect(notes.getByTestId("review-note").first()).toHaveText(asShown(`${SEVERITY[findings[0]!.severity]}: ${findings[0]!.message}`));
  await expect(notes.getByTestId("review-notes-version")).toHaveText(`Written for version ${before.version + 1}.`);
  const detail = await page.request.get(`/api/invoices/${invoice.id}`);
  expect(await detail.json()).toMatchObject({ review_notes: findings, review_notes_version: before.version + 1 });
});

test("Summary shows what it replaces; Categories: uncheck one line, apply, only the others are written", async ({
  page,
  sql,
  openInvoice,
}) => {
  const { invoice, inv } = await openInvoice(ALICE);

  // The summary's diff: nothing on the invoice yet, the proposal after.
  await inv.summarize.click();
  await inv.expectDisplay("proposed");
  const summaryChange = inv.panel.getByTestId("planned-change");
  await expect(summaryChange).toHaveAttribute("data-key", "summary");
  await expect(summaryChange.getByTestId("change-before")).toHaveText("none");
  await saveScreenshot(page, "purpose-summary-proposed");
  await inv.apply.click();
  await inv.expectDisplay("applied");

  const panel = categories(page);
  await panel.button("Suggest categories").click();
  await panel.expectDisplay("generating");
  await expect(panel.state).toContainText("Suggesting categories…");
  await panel.expectDisplay("proposed");
  const lines = await linesOf(sql, invoice.id);
  await expect(panel.changes).toHaveCount(2);
  await expect(panel.changes.nth(0)).toHaveAttribute("data-key", lines[0]!.id);
  await expect(panel.changes.nth(0)).toContainText("Line 1: Consulting, November");
  await expect(panel.changes.nth(0).getByTestId("change-before")).toHaveText("none");
  await expect(panel.changes.nth(0).getByTestId("change-after")).toHaveText("6000 Professional services");
  await expect(panel.changes.nth(1).getByTestId("change-after")).toHaveText("6300 Travel and expenses");
  const boxes = panel.root.getByRole("checkbox");
  await expect(boxes).toHaveCount(2);
  for (const box of await boxes.all()) await expect(box).toBeChecked();
  await saveScreenshot(page, "purpose-categories-proposed");
  await expectAccessible(page, "categories proposed");

  // Travel expenses left as it is.
  await panel.root.getByRole("checkbox", { name: /Line 2: Travel expenses/ }).uncheck();
  const version = (await invoiceRow(sql, invoice.id)).version;
  await panel.apply.click();
  await panel.expectDisplay("applied");
  await expect(panel.state).toHaveText("The categories were applied to the invoice's lines.");
  expect((await linesOf(sql, invoice.id)).map((l) => l.category)).toEqual(["6000", null]);
  expect((await invoiceRow(sql, invoice.id)).version).toBe(version + 1);

  const shown = page.getByTestId("line-category");
  await expect(shown.nth(0)).toHaveText("6000 Professional services");
  await expect(shown.nth(1)).toHaveText("—");
  const detail = (await (await page.request.get(`/api/invoices/${invoice.id}`)).json()) as { lines: { category: unknown }[] };
  expect(detail.lines.map((l) => l.category)).toEqual([{ code: "6000", name: "Professional services" }, null]);
  // The summary applied before is still the invoice's.
  expect((await invoiceRow(sql, invoice.id)).summary).not.toBeNull();
});

test.describe("with JavaScript off", () => {
  test.use({ javaScriptEnabled: false });

  test("Categories: none ticked is refused in words; one unticked applies the others, as a plain form post", async ({
    page,
    sql,
    openInvoice,
  }) => {
    const { invoice } = await openInvoice(ALICE);
    const panel = categories(page);
    const proposedByNow = async () => {
      const leaseId = await panel.leaseId();
      await expect.poll(async () => (await leaseRow(sql, leaseId)).status, { timeout: 20_000 }).toBe("proposed");
      await page.reload();
      await panel.expectDisplay("proposed");
      return leaseId;
    };

    await panel.button("Suggest categories").click();
    await panel.expectDisplay("generating");
    const leaseId = await proposedByNow();
    await expect(panel.changes).toHaveCount(2);

    for (const box of await panel.root.getByRole("checkbox").all()) await box.uncheck();
    await panel.apply.click();
    await expect(page).toHaveURL(/\?notice=apply\.invalid_lines&purpose=categorize_lines$/);
    await expect(panel.root.getByTestId("lease-message")).toHaveText(
      "Choose at least one of the proposed lines to apply, or discard the proposal. Nothing was changed on the invoice.",
    );
    // The refusal is the categories panel's alone.
    await expect(page.getByTestId("lease-panel").getByTestId("lease-message")).toHaveCount(0);
    await panel.expectDisplay("proposed");
    expect((await linesOf(sql, invoice.id)).map((l) => l.category)).toEqual([null, null]);

    await panel.root.getByRole("checkbox", { name: /Line 1: Consulting, November/ }).uncheck();
    await panel.apply.click();
    await panel.expectDisplay("applied");
    expect((await linesOf(sql, invoice.id)).map((l) => l.category)).toEqual([null, "6300"]);
    expect(await eventKinds(sql, leaseId)).toEqual(["opened", "proposed", "apply_refused", "applied"]);
    await expect(page.getByTestId("line-category").nth(1)).toHaveText("6300 Travel and expenses");
  });
});
