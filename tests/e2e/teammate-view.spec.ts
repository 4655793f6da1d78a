// A teammate opens an invoice Alice owns while her summary is being written, then while it
// waits for her review: they read who and until when (the countdown running on the server's
// clock), never the proposal; no Summarize, Apply, Discard or edit form, and why in words. At
// 375 px, with axe. Dave is the seeded Northwind member (db/seed.ts); the header names the
// organization and his role.
import { expect, expectAccessible, saveScreenshot, test } from "./support/fixtures";
import { userId } from "./support/db";
import { addLease } from "./support/list-data";
import { ALICE, DAVE } from "./support/settings";

test.use({ viewport: { width: 375, height: 740 } });

test("a teammate sees who writes or reviews a summary and until when, and no controls", async ({
  page,
  context,
  sql,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE, "Teammate View Traders");
  const alice = await userId(sql, ALICE);
  const [owner] = await sql<{ name: string }[]>`select name from app_user where id = ${alice}`;
  const aliceName = owner!.name;
  const leaseId = await addLease(sql, { invoiceId: invoice.id, actorId: alice, status: "open", deadlineInSeconds: 50 });
  await signIn(context, DAVE);
  await page.goto(`/invoices/${invoice.id}`);

  await expect(page.getByTestId("header-org")).toHaveText(/· Member$/);
  await expect(page.getByTestId("invoice-owner")).toHaveText(`Owner: ${aliceName}`);
  const panel = page.getByTestId("teammate-panel");
  await expect(panel.getByTestId("teammate-lease")).toContainText(`${aliceName} is writing a summary — `);
  await expect(panel.getByTestId("countdown")).toHaveText(/^0:(4\d|50)$/);
  await expect(panel.getByTestId("only-owner")).toHaveText(`Only ${aliceName}, the owner, can summarize this invoice.`);
  for (const name of ["Summarize", "Apply", "Discard", "Cancel", "Save changes"]) {
    await expect(page.getByRole("button", { name })).toHaveCount(0);
  }
  await expect(page.getByLabel("Counterparty")).toHaveCount(0);
  expect(await page.content()).not.toContain(leaseId);
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  await expectAccessible(page, "teammate view, summary being written");
  await saveScreenshot(page, "teammate-writing");

  // Alice's summary now waits for her review: on reload, until when; never its text.
  await sql`update inference_lease set status = 'proposed', proposal = ${sql.json({ summary: "Alice's unreviewed words", model: "local" })} where id = ${leaseId}`;
  await page.reload();
  await expect(panel.getByTestId("teammate-lease")).toContainText(`A summary by ${aliceName} waits for their review until `);
  expect(await page.content()).not.toContain("unreviewed words");
  await expectAccessible(page, "teammate view, summary waiting for review");
  await saveScreenshot(page, "teammate-review");
});

test("a teammate reads each purpose in flight in its own words, one line each, and no ids", async ({
  page,
  context,
  sql,
  signIn,
  newInvoice,
}) => {
  const invoice = await newInvoice(ALICE, "Teammate Purposes Traders");
  const alice = await userId(sql, ALICE);
  const [owner] = await sql<{ name: string }[]>`select name from app_user where id = ${alice}`;
  const aliceName = owner!.name;
  const summaryId = await addLease(sql, { invoiceId: invoice.id, actorId: alice, status: "proposed", deadlineInSeconds: 50 });
  // A review being written alongside (list-data's addLease writes summaries only).
  const [review] = await sql<{ id: string }[]>`
    insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at)
    values (${alice}, ${invoice.id}, 'review_invoice', 'open', now() + interval '50 seconds') returning id`;
  await signIn(context, DAVE);
  await page.goto(`/invoices/${invoice.id}`);

  const lease = page.getByTestId("teammate-panel").getByTestId("teammate-lease");
  const lines = lease.locator("p");
  await expect(lines).toHaveCount(2);
  await expect(lease.locator('[data-lease-purpose="review_invoice"]')).toContainText(`${aliceName} is reviewing the invoice — `);
  await expect(lease.locator('[data-lease-purpose="review_invoice"]').getByTestId("countdown")).toHaveText(/^0:(4\d|50)$/);
  await expect(lease.locator('[data-lease-purpose="summarize_invoice"]')).toContainText(
    `A summary by ${aliceName} waits for their review until `,
  );
  await expect(lease).not.toContainText("writing a summary");
  const html = await page.content();
  expect(html).not.toContain(summaryId);
  expect(html).not.toContain(review!.id);
  await expectAccessible(page, "teammate view, a review being written and a summary waiting");

  // The review now waits for Alice's review too: in the review's words, never its findings.
  await sql`update inference_lease set status = 'proposed', proposal = ${sql.json({ findings: [{ code: "overdue", severity: "high", message: "Alice's unreviewed finding", fields: ["due_on"] }], model: "local" })} where id = ${review!.id}`;
  await page.reload();
  await expect(lease.locator('[data-lease-purpose="review_invoice"]')).toContainText(
    `A review by ${aliceName} waits for their decision until `,
  );
  expect(await page.content()).not.toContain("unreviewed finding");
});
