// The four-eyes lane's pages (issue 21, docs/decisions/0078 and 0086), with the seeded Northwind
// team: Alice (admin) puts the summary under "a second person approves it" (through the /org form
// in the first scenario, through PUT /api/org/policies in the others), Dave (member) asks for a
// summary and submits it, Carol (approver) finds it in "Waiting for your approval", reads what
// would change, and approves or declines; Dave cannot approve his own; an edit of the invoice
// withdraws the waiting request on Carol's open page without a reload, and her open queue and
// request pages follow submissions, withdrawals and another approver's decline (/api/approvals/events). After each scenario the
// summary's policy is put back to "the owner saves it", so no other scenario meets the lane.
// Screenshots: approvals-queue.png, approval-diff.png.
import type { BrowserContext, Page } from "@playwright/test";
import { eventKinds, invoiceRow, leaseRow, type Sql } from "./support/db";
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { asShown, InvoicePage } from "./support/pages";
import { ALICE, DAVE } from "./support/settings";

const CAROL = "carol@example.com";

type RequestRow = {
  id: string;
  lease_id: string;
  requester_id: string;
  approver_id: string | null;
  decision: string | null;
  comment: string | null;
  proposal_sha256: string;
};
const requestFor = async (sql: Sql, leaseId: string) =>
  (
    await sql<RequestRow[]>`
    select id, lease_id, requester_id, approver_id, decision, comment, proposal_sha256 from approval_request where lease_id = ${leaseId}`
  )[0];
const policyRow = async (sql: Sql) =>
  (
    await sql<{ apply: string; review_hours: number }[]>`
    select p.apply, p.review_hours from approval_policy p join organization o on o.id = p.org_id
    where o.name = 'Northwind Finance' and p.purpose = 'summarize_invoice'`
  )[0] ?? null;

/** Alice's session, through the API, for setting the policy by the route. */
async function asAlice(newContext: () => Promise<BrowserContext>, signIn: (c: BrowserContext, e: string) => Promise<void>) {
  const context = await newContext();
  await signIn(context, ALICE);
  return context;
}

async function setPolicy(context: BrowserContext, apply: "self" | "four_eyes") {
  const res = await context.request.put("/api/org/policies/summarize_invoice", { data: { apply, review_hours: 24 } });
  expect(res.status(), `policy ${apply}`).toBe(200);
}

/** Dave's summary, ready, submitted for approval from his invoice page; the lease's id. */
async function davesSubmission(inv: InvoicePage, sql: Sql, invoiceId: string) {
  await inv.goto(invoiceId);
  await inv.summarize.click();
  await inv.expectDisplay("proposed", 30_000);
  await expect(inv.panel).toHaveAttribute("data-lane", "four_eyes");
  // No Apply under the policy: Submit for approval, with who can approve.
  await expect(inv.apply).toHaveCount(0);
  await expect(inv.panel.getByTestId("needs-approval")).toContainText("Carol Nguyen");
  await inv.panel.getByRole("button", { name: "Submit for approval", exact: true }).click();
  await expect(inv.panel).toHaveAttribute("data-lane", "waiting");
  const leaseId = await inv.leaseId();
  expect((await leaseRow(sql, leaseId)).status, "a waiting request keeps its proposal proposed").toBe("proposed");
  return leaseId;
}

async function openAs(newContext: () => Promise<BrowserContext>, signIn: (c: BrowserContext, e: string) => Promise<void>, email: string) {
  const context = await newContext();
  await signIn(context, email);
  return context.newPage();
}

const approvalsLink = (page: Page) => page.getByRole("banner").getByRole("link", { name: "Approvals", exact: true });

test.afterEach(async ({ newContext, signIn }) => {
  await setPolicy(await asAlice(newContext, signIn), "self");
});

test("carol approves dave's submission and the invoice changes", async ({ page, context, sql, signIn, newContext, newInvoice }) => {
  // Alice sets the policy through the form on /org.
  await signIn(context, ALICE);
  await page.goto("/org");
  const form = page.getByRole("form", { name: "Approval for Summary" });
  await form.getByLabel("How Summary is saved").selectOption("four_eyes");
  await form.getByLabel("Time to decide (hours)").fill("24");
  await form.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByTestId("policy-notice")).toHaveText("Summary: saved. It applies to the next request.");
  expect(await policyRow(sql)).toEqual({ apply: "four_eyes", review_hours: 24 });
  await expectAccessible(page, "team page, the approval policies");

  // Dave asks for a summary and submits it: the panel waits, says until when and who approves.
  const invoice = await newInvoice(DAVE);
  const davePage = await openAs(newContext, signIn, DAVE);
  const inv = new InvoicePage(davePage);
  const leaseId = await davesSubmission(inv, sql, invoice.id);
  await expect(inv.panel.getByTestId("waiting-until")).toContainText("Waiting for approval until ");
  await expect(inv.panel.getByTestId("who-approves")).toContainText("Carol Nguyen");
  await expect(inv.panel.getByRole("button", { name: "Withdraw", exact: true })).toBeVisible();
  await expect(inv.panel.getByTestId("countdown")).toHaveText(/^(23 h 5\d min|1 day)$/);
  await expect(inv.panel.getByTestId("planned-change")).toContainText("Summary now: none. If approved:");
  await expectAccessible(davePage, "invoice page, waiting for approval");
  await expect(approvalsLink(davePage), "a member decides nothing: no Approvals link").toHaveCount(0);
  const request = (await requestFor(sql, leaseId))!;
  expect(request.decision).toBeNull();
  const proposal = (await leaseRow(sql, leaseId)).proposal!;

  // Carol finds it from the header, in the queue.
  const carol = await openAs(newContext, signIn, CAROL);
  await carol.goto("/invoices");
  await approvalsLink(carol).click();
  await expect(carol.getByRole("heading", { level: 1, name: "Waiting for your approval" })).toBeVisible();
  const entry = carol.locator(`[data-testid="approval-entry"][data-approval-id="${request.id}"]`);
  await expect(entry).toContainText(`Invoice ${invoice.number}`);
  await expect(entry).toContainText("Summary");
  await expect(entry).toContainText("Dave Fischer");
  await expectAccessible(carol, "approvals queue");
  await saveScreenshot(carol, "approvals-queue");

  // The request's page: the summary now (none) and after, as approve would write it.
  await entry.getByRole("link", { name: `Invoice ${invoice.number}` }).click();
  await expect(carol).toHaveURL(new RegExp(`/approvals/${request.id}$`));
  const change = carol.getByTestId("planned-change");
  await expect(change).toHaveAttribute("data-key", "summary");
  await expect(change.getByTestId("change-before")).toHaveText("none");
  await expect(change.getByTestId("change-after")).toHaveText(asShown(proposal.summary));
  await expect(carol.getByTestId("requester")).toHaveText("Dave Fischer");
  // The decision's deadline with the time left, counted down by the server's clock.
  await expect(carol.getByTestId("countdown")).toHaveText(/^in (23 h 5\d min|1 day)$/);
  // The hash the page carries is the one of the proposal it showed.
  await expect(carol.locator('input[name="proposal_sha256"]')).toHaveValue(request.proposal_sha256);
  await expectAccessible(carol, "approval request, waiting");
  await saveScreenshot(carol, "approval-diff");

  // A hash that is not the one of the proposal shown: refused in words, nothing written.
  const before = await invoiceRow(sql, invoice.id);
  await carol.locator('input[name="proposal_sha256"]').evaluate((input: HTMLInputElement) => (input.value = "0".repeat(64)));
  await carol.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(carol.getByTestId("approval-notice")).toHaveText(
    "The proposal is no longer the one you were shown, so nothing was saved to the invoice. Reload the page and look again.",
  );
  expect(await requestFor(sql, leaseId)).toMatchObject({ decision: null });
  expect((await invoiceRow(sql, invoice.id)).version).toBe(before.version);

  // Reloaded, as the words say: the page's own hash again.
  await carol.reload();
  await expect(carol.locator('input[name="proposal_sha256"]')).toHaveValue(request.proposal_sha256);
  await carol.getByLabel("Comment (optional)").fill("Matches the contract.");
  await carol.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(carol.getByTestId("approval-notice")).toHaveText("Approved. The invoice was changed as shown.");
  await expect(carol.getByTestId("approval")).toHaveAttribute("data-status", "approved");
  await expect(carol.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  // Decided, the list says what was written: the summary saved, not "before → after" against an
  // invoice that now holds it (which read "X → X").
  await expect(carol.getByRole("heading", { level: 2, name: "What was saved to the invoice" })).toBeVisible();
  await expect(change.getByTestId("change-after")).toHaveText(asShown(proposal.summary));
  await expect(change.getByTestId("change-before")).toHaveCount(0);

  const after = await invoiceRow(sql, invoice.id);
  expect(after.summary, "approve wrote the proposal shown").toBe(proposal.summary);
  expect(after.version).toBe(before.version + 1);
  expect(await requestFor(sql, leaseId)).toMatchObject({ decision: "approved", comment: "Matches the contract." });
  expect((await leaseRow(sql, leaseId)).status).toBe("applied");
  expect(await eventKinds(sql, leaseId)).toEqual(["opened", "proposed", "submitted", "applied"]);

  // Dave's open page follows: applied, by whom.
  await inv.expectDisplay("applied");
  await expect(inv.state).toHaveText("Approved by Carol Nguyen and saved to the invoice.");
  await expect(inv.invoiceSummary).toHaveText(asShown(proposal.summary));
  // Reloaded: the summary says who approved it, and the history's attempt carries its receipt.
  await davePage.reload();
  await expect(davePage.getByTestId("summary-applied-by")).toContainText("Applied by Dave Fischer, approved by Carol Nguyen, on");
  await expect(davePage.getByTestId("receipt").first()).toContainText("Written by Dave Fischer, approved by Carol Nguyen,");
  await davePage.getByTestId("receipt").first().scrollIntoViewIfNeeded();
  await saveScreenshot(davePage, "approval-receipt");
  // Carol's queue no longer lists it.
  await carol.goto("/approvals");
  await expect(carol.locator(`[data-approval-id="${request.id}"]`)).toHaveCount(0);
});

test("dave cannot approve his own request: the page says so, and the route refuses it", async ({
  page,
  context,
  sql,
  signIn,
  newContext,
  newInvoice,
}) => {
  await setPolicy(await asAlice(newContext, signIn), "four_eyes");
  const invoice = await newInvoice(DAVE);
  await signIn(context, DAVE);
  const inv = new InvoicePage(page);
  const leaseId = await davesSubmission(inv, sql, invoice.id);
  const request = (await requestFor(sql, leaseId))!;

  // Dave's queue: he decides nothing.
  await page.goto("/approvals");
  await expect(page.getByText("Only an admin or an approver decides requests.")).toBeVisible();
  await expect(page.getByTestId("approvals-queue")).toHaveCount(0);

  // His own request reads as his, with no Approve or Decline.
  await page.goto(`/approvals/${request.id}`);
  await expect(page.getByTestId("requester")).toHaveText("Dave Fischer (you)");
  await expect(page.getByTestId("own-request")).toHaveText(
    "You cannot approve your own request. Someone else on your team with the Approver or Admin role decides it.",
  );
  await expect(page.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Decline", exact: true })).toHaveCount(0);
  await expectAccessible(page, "approval request, the requester's own");

  // Through the route, with the right hash: 403 same_person, and nothing written.
  const res = await page.request.post(`/api/approvals/${request.id}/approve`, { data: { proposal_sha256: request.proposal_sha256 } });
  expect(res.status()).toBe(403);
  expect(await res.json()).toMatchObject({ detail: "same_person" });
  expect(await requestFor(sql, leaseId)).toMatchObject({ decision: null, approver_id: null });
  expect((await invoiceRow(sql, invoice.id)).summary).toBeNull();

  // He may withdraw it: the panel says so in words.
  await inv.goto(invoice.id);
  await inv.panel.getByRole("button", { name: "Withdraw", exact: true }).click();
  await inv.expectDisplay("rejected");
  await expect(inv.state).toHaveText("You withdrew this request. Nothing was changed on the invoice.");
  await page.goto(`/approvals/${request.id}`);
  await expect(page.getByTestId("request-status")).toHaveText("Withdrawn");
});

test("an edit withdraws a waiting request on carol's open page", async ({ page, context, sql, signIn, newContext, newInvoice }) => {
  await setPolicy(await asAlice(newContext, signIn), "four_eyes");
  const invoice = await newInvoice(DAVE);
  await signIn(context, DAVE);
  const inv = new InvoicePage(page);
  const leaseId = await davesSubmission(inv, sql, invoice.id);
  const request = (await requestFor(sql, leaseId))!;

  const carol = await openAs(newContext, signIn, CAROL);
  await carol.goto(`/approvals/${request.id}`);
  await expect(carol.getByTestId("request-status")).toHaveText("Waiting for a decision");
  await expect(carol.getByRole("button", { name: "Approve", exact: true })).toBeVisible();

  // Dave edits the invoice while Carol's page is open: her page says so without a reload.
  await inv.editCounterparty("Northwind Traders GmbH");
  await expect(carol.getByTestId("approval")).toHaveAttribute("data-status", "withdrawn");
  await expect(carol.getByTestId("request-end")).toHaveText(
    "The invoice was edited after this request was made, so it was withdrawn. The invoice was not changed by it.",
  );
  await expect(carol.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "invoice_changed" });
  expect(await requestFor(sql, leaseId)).toMatchObject({ decision: null });
  await expectAccessible(carol, "approval request, withdrawn by an edit");
  await carol.goto("/approvals");
  await expect(carol.locator(`[data-approval-id="${request.id}"]`)).toHaveCount(0);
});

test("Carol's open queue and request pages follow the lane without a reload: a submission comes, an edit withdraws it, Alice's decline shows", async ({
  page,
  context,
  sql,
  signIn,
  newContext,
  newInvoice,
}) => {
  const alice = await asAlice(newContext, signIn);
  await setPolicy(alice, "four_eyes");
  const [first, second] = [await newInvoice(DAVE), await newInvoice(DAVE)];
  await signIn(context, DAVE);
  const inv = new InvoicePage(page);

  // Carol's queue is open before anything is submitted; a mark on the window shows the page is never reloaded.
  const carol = await openAs(newContext, signIn, CAROL);
  await carol.goto("/approvals");
  await carol.evaluate(() => ((window as unknown as { __sameLoad: boolean }).__sameLoad = true));
  const sameLoad = () => carol.evaluate(() => (window as unknown as { __sameLoad?: boolean }).__sameLoad === true);

  const firstLease = await davesSubmission(inv, sql, first.id);
  const firstRequest = (await requestFor(sql, firstLease))!;
  const entry = carol.locator(`[data-approval-id="${firstRequest.id}"]`);
  await expect(entry).toBeVisible();
  await expect(entry).toContainText("Dave");
  // Dave edits the invoice: the request is withdrawn, and leaves Carol's queue.
  await inv.editCounterparty("Northwind Traders AG");
  await expect(entry).toHaveCount(0);
  expect(await sameLoad(), "the queue was not reloaded").toBe(true);

  // Carol opens the second request; Alice declines it elsewhere: Carol's page says so at once.
  const secondLease = await davesSubmission(inv, sql, second.id);
  const secondRequest = (await requestFor(sql, secondLease))!;
  await carol.goto(`/approvals/${secondRequest.id}`);
  await expect(carol.getByTestId("request-status")).toHaveText("Waiting for a decision");
  await carol.evaluate(() => ((window as unknown as { __sameLoad: boolean }).__sameLoad = true));
  const declined = await alice.request.post(`/api/approvals/${secondRequest.id}/decline`, { data: { comment: "Wrong cost centre" } });
  expect(declined.status()).toBe(200);
  await expect(carol.getByTestId("approval")).toHaveAttribute("data-status", "declined");
  await expect(carol.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  expect(await sameLoad(), "the request page was not reloaded").toBe(true);
  expect(await requestFor(sql, secondLease)).toMatchObject({ decision: "declined", comment: "Wrong cost centre" });
  expect((await invoiceRow(sql, second.id)).summary).toBeNull();
});

test.describe("with JavaScript off", () => {
  test.use({ javaScriptEnabled: false });

  test("Submit for approval, and Carol's Decline with its comment, work as plain form posts", async ({
    page,
    context,
    sql,
    signIn,
    browser,
    baseURL,
    newContext,
    newInvoice,
  }) => {
    await setPolicy(await asAlice(newContext, signIn), "four_eyes");
    const invoice = await newInvoice(DAVE);
    await signIn(context, DAVE);
    const inv = new InvoicePage(page);
    await inv.goto(invoice.id);
    await inv.summarize.click();
    await inv.expectDisplay("generating");
    const leaseId = await inv.leaseId();
    await expect.poll(async () => (await leaseRow(sql, leaseId)).status, { timeout: 20_000 }).toBe("proposed");
    await page.reload();
    await inv.panel.getByRole("button", { name: "Submit for approval", exact: true }).click();
    await expect(inv.panel).toHaveAttribute("data-lane", "waiting");
    await expect(inv.panel.getByTestId("waiting-until")).toContainText("Waiting for approval until ");
    const request = (await requestFor(sql, leaseId))!;

    const carolContext = await browser.newContext({ baseURL, javaScriptEnabled: false });
    try {
      await signIn(carolContext, CAROL);
      const carol = await carolContext.newPage();
      await carol.goto(`/approvals/${request.id}`);
      await carol.getByLabel("Why you decline (required)").fill("The hours on line 1 are not agreed yet.");
      await carol.getByRole("button", { name: "Decline", exact: true }).click();
      await expect(carol).toHaveURL(new RegExp(`/approvals/${request.id}\\?notice=declined$`));
      await expect(carol.getByTestId("approval-notice")).toHaveText(
        "Declined. The requester sees your comment; the invoice was not changed.",
      );
      await expect(carol.getByTestId("request-status")).toHaveText("Declined");
      await expect(carol.getByRole("heading", { level: 2, name: "What it would have changed" })).toBeVisible();
    } finally {
      await carolContext.close();
    }
    expect(await requestFor(sql, leaseId)).toMatchObject({ decision: "declined", comment: "The hours on line 1 are not agreed yet." });
    expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "declined" });
    expect((await invoiceRow(sql, invoice.id)).summary).toBeNull();

    await page.reload();
    await inv.expectDisplay("rejected");
    await expect(inv.state).toHaveText(
      "Carol Nguyen declined this request, so nothing was changed on the invoice. Their comment: “The hours on line 1 are not agreed yet.”",
    );
  });
});
