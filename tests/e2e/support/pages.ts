// Page objects: the app as a finance user sees it, found by role and accessible name.
import { expect, type Locator, type Page } from "@playwright/test";
import { DEMO_PASSWORD } from "./settings";

export class SignInPage {
  readonly email: Locator;
  readonly password: Locator;
  readonly submit: Locator;
  readonly alert: Locator;

  constructor(readonly page: Page) {
    this.email = page.getByLabel("Email");
    this.password = page.getByLabel("Password");
    this.submit = page.getByRole("button", { name: "Sign in", exact: true });
    this.alert = page.locator("form").getByRole("alert");
  }

  async goto() {
    await this.page.goto("/sign-in");
    await expect(this.page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  }

  /** Signs in through the form; `landing` is where the page should then be (the list, or the `next` page). */
  async signIn(email: string, password = DEMO_PASSWORD, landing: RegExp = /\/invoices$/) {
    await this.email.fill(email);
    await this.password.fill(password);
    await this.submit.click();
    await expect(this.page).toHaveURL(landing);
  }
}

export class InvoiceListPage {
  constructor(readonly page: Page) {}

  async goto() {
    await this.page.goto("/invoices");
    await expect(this.page.getByRole("heading", { level: 1, name: /: invoices$/ })).toBeVisible();
  }

  link(number: string): Locator {
    return this.page.getByRole("link", { name: new RegExp(number) });
  }

  /** The invoice's row: its link and the line saying where its summary stands. */
  row(number: string): Locator {
    return this.page.locator(`[data-testid="invoice-row"][data-number="${number}"]`);
  }

  state(number: string): Locator {
    return this.row(number).getByTestId("list-state");
  }

  /** The numbers of the rows shown, top to bottom. */
  async numbers(): Promise<string[]> {
    return this.page.getByTestId("invoice-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-number") ?? ""));
  }
}

export type LeaseDisplay = "none" | "generating" | "proposed" | "applied" | "expired" | "rejected" | "outdated" | "failed";

export class InvoicePage {
  readonly panel: Locator;
  readonly summarize: Locator;
  readonly tryAgain: Locator;
  readonly summarizeAgain: Locator;
  readonly cancel: Locator;
  readonly apply: Locator;
  readonly discard: Locator;
  readonly signOut: Locator;
  readonly proposal: Locator;
  readonly message: Locator;
  readonly state: Locator;
  readonly timeline: Locator;
  readonly countdown: Locator;
  readonly invoiceSummary: Locator;
  readonly editForm: Locator;
  readonly channel: Locator;
  readonly history: Locator;
  readonly attempts: Locator;

  constructor(readonly page: Page) {
    this.panel = page.getByTestId("lease-panel");
    this.summarize = page.getByRole("button", { name: "Summarize", exact: true });
    this.tryAgain = page.getByRole("button", { name: "Try again", exact: true });
    this.summarizeAgain = page.getByRole("button", { name: "Summarize again", exact: true });
    this.cancel = page.getByRole("button", { name: "Cancel", exact: true });
    this.apply = page.getByRole("button", { name: "Apply", exact: true });
    this.discard = page.getByRole("button", { name: "Discard", exact: true });
    this.signOut = page.getByRole("button", { name: "Sign out", exact: true });
    this.proposal = page.getByTestId("proposal");
    this.message = page.getByTestId("lease-message");
    this.state = page.getByTestId("lease-state");
    this.timeline = page.getByTestId("timeline");
    this.countdown = page.getByTestId("countdown");
    this.invoiceSummary = page.getByTestId("invoice-summary");
    this.editForm = page.getByRole("region", { name: "Edit details" });
    this.channel = page.getByTestId("channel");
    this.history = page.getByRole("region", { name: "History" });
    this.attempts = this.history.getByTestId("attempt");
  }

  async goto(invoiceId: string) {
    const response = await this.page.goto(`/invoices/${invoiceId}`);
    expect(response?.status()).toBe(200);
    await expect(this.panel).toBeVisible();
  }

  async expectDisplay(display: LeaseDisplay, timeout?: number) {
    await expect(this.panel).toHaveAttribute("data-display", display, { timeout });
  }

  async leaseId(): Promise<string> {
    const id = await this.panel.getAttribute("data-lease-id");
    expect(id, "the panel names its lease").toMatch(/^[0-9a-f-]{36}$/);
    return id!;
  }

  /** Changes the counterparty through the edit form and waits for the confirmation. */
  async editCounterparty(value: string) {
    await this.editForm.getByLabel("Counterparty").fill(value);
    await this.editForm.getByRole("button", { name: "Save changes" }).click();
    await expect(this.editForm.getByRole("status")).toHaveText("Changes saved.");
  }
}

/**
 * A text as the page shows it to an en-US reader (the suite's locale, playwright.config.ts):
 * the ISO dates the local model writes ("2026-11-01") in the page's one date format.
 */
export function asShown(text: string): string {
  return text.replace(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (_, y: string, m: string, d: string) => `${m}/${d}/${y}`);
}
