// Found by an outside review (2026-12-01): signing out closes the session's leases whatever the
// session's state, and
// "Sign out everywhere" ends every session of the user and their leases in flight. Without
// JavaScript: a link to a page that asks, and a plain form post. (The route's answers:
// tests/integration/http/api.test.ts.)
import { expect, test } from "./support/fixtures";
import { leaseRow } from "./support/db";
import { addInvoice, newUser } from "./support/list-data";
import { InvoiceListPage, SignInPage } from "./support/pages";

test.use({ javaScriptEnabled: false });

/** A lease in flight opened in the browser's own (latest) session of `userId`. */
async function leaseInSession(sql: import("postgres").Sql, userId: string, invoiceId: string, status: "open" | "proposed") {
  const [row] = await sql<{ id: string }[]>`
    insert into inference_lease (actor_id, invoice_id, purpose, status, deadline_at, proposal, session_id)
    select ${userId}, ${invoiceId}, 'summarize_invoice', ${status}, now() + interval '10 minutes',
           ${status === "proposed" ? sql.json({ summary: "A summary.", model: "local" }) : null},
           (select id from app_session where user_id = ${userId} order by created_at desc limit 1)
    returning id`;
  return row!.id;
}

test("sign out everywhere, without JavaScript: asked first, then every browser of the user is signed out and their summaries stop", async ({
  page,
  browser,
  baseURL,
  sql,
}) => {
  const user = await newUser(sql, "Evan Everywhere");
  const other = await newUser(sql, "Olga Other");
  const a = await addInvoice(sql, user.id, `SE${Date.now() % 100000}-1`, "Everywhere Ltd", 10);
  const b = await addInvoice(sql, user.id, `SE${Date.now() % 100000}-2`, "Elsewhere AB", 20);
  const o = await addInvoice(sql, other.id, `SE${Date.now() % 100000}-3`, "Others Oy", 30);

  const laptop = await browser.newContext({ baseURL, javaScriptEnabled: false });
  const bystander = await browser.newContext({ baseURL, javaScriptEnabled: false });
  try {
    const onLaptop = await laptop.newPage();
    await new SignInPage(onLaptop).goto();
    await new SignInPage(onLaptop).signIn(user.email);
    const waiting = await leaseInSession(sql, user.id, b.id, "proposed");
    const theirs = await bystander.newPage();
    await new SignInPage(theirs).goto();
    await new SignInPage(theirs).signIn(other.email);
    const othersLease = await leaseInSession(sql, other.id, o.id, "open");

    const signIn = new SignInPage(page);
    await signIn.goto();
    await signIn.signIn(user.email);
    const generating = await leaseInSession(sql, user.id, a.id, "open");

    await page.getByRole("link", { name: "Sign out everywhere" }).click();
    await expect(page).toHaveURL("/sign-out?scope=all");
    // The summary waiting in the other browser is named before it goes.
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign out everywhere and discard the summary waiting for review?");
    await expect(page.getByTestId("sign-out-discards")).toContainText(b.number);
    await page.getByRole("button", { name: "Sign out everywhere and discard" }).click();
    await expect(page).toHaveURL("/sign-in?signed-out=all");
    await expect(page.getByRole("status")).toHaveText("You have signed out everywhere.");

    for (const id of [generating, waiting]) expect(await leaseRow(sql, id)).toMatchObject({ status: "rejected", closed_reason: "signed_out" });
    const sessions = await sql`select 1 from app_session where user_id = ${user.id} and revoked_at is null`;
    expect(sessions).toHaveLength(0);
    // The other browser is signed out too.
    await onLaptop.goto("/invoices");
    await expect(onLaptop).toHaveURL(/\/sign-in\?next=%2Finvoices$/);
    // Someone else is not.
    expect(await leaseRow(sql, othersLease)).toMatchObject({ status: "open" });
    await theirs.goto("/invoices");
    await expect(theirs).toHaveURL(/\/invoices$/);
  } finally {
    await laptop.close();
    await bystander.close();
  }
});

test("signing out of a session that ran out while the page was open still stops its summary", async ({ page, sql }) => {
  const user = await newUser(sql, "Rita Runout");
  const inv = await addInvoice(sql, user.id, `RO${Date.now() % 100000}-1`, "Run Out GmbH", 10);
  const signIn = new SignInPage(page);
  await signIn.goto();
  await signIn.signIn(user.email);
  const leaseId = await leaseInSession(sql, user.id, inv.id, "open");
  await new InvoiceListPage(page).goto();
  // The session reaches its end (by the database clock) with the page still showing.
  await sql`update app_session set expires_at = now() - interval '1 second' where user_id = ${user.id}`;
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page).toHaveURL(/\/sign-in\?signed-out=1/);
  expect(await leaseRow(sql, leaseId)).toMatchObject({ status: "rejected", closed_reason: "signed_out" });
  expect((await page.context().cookies()).find((c) => c.name === "claimcheck_session")).toBeUndefined();
});
