// The audit trail cannot be edited unseen (issue 21, docs/decisions/0080): a new organization is
// made by `npm run org:create`, its admin signs up by the printed link in the browser and sets a
// budget and a policy through the pages' routes, and `npm run audit:verify` finds its chain whole.
// Then a row is changed behind the triggers, as anyone holding the database could: the budget
// itself, then an entry of the chain. Each time the command exits 1 and names the entry at fault.
// A fresh organization, so no other scenario's writes are in its chain.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { TSX_SERVER_FLAGS } from "../../tools/tsx-server";
import { expect, test } from "./support/fixtures";
import { ROOT } from "./support/stack";

function run(tool: string, ...args: string[]): { code: number | null; out: string } {
  const r = spawnSync(path.join(ROOT, "node_modules", ".bin", "tsx"), [...TSX_SERVER_FLAGS, path.join("tools", tool), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, DATABASE_URL: process.env.E2E_DATABASE_URL },
    timeout: 120_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

test("a budget changed behind the chain, and an entry edited, are each named by audit:verify", async ({ page, sql }) => {
  test.setTimeout(180_000);
  const tag = randomUUID().slice(0, 8);
  const email = `audit-${tag}@example.test`;
  const made = run("org-create.ts", "--name", `Audit Ledger ${tag}`, "--admin-email", email);
  expect(made.code, made.out).toBe(0);
  const orgId = /\(([0-9a-f-]{36})\)/.exec(made.out)?.[1];
  const link = /https?:\/\/\S+\/invitations\/[A-Za-z0-9_-]{43}/.exec(made.out)?.[0];
  expect(orgId && link, made.out).toBeTruthy();

  await page.goto(new URL(link!).pathname);
  await page.getByLabel("Your name").fill("Ada");
  await page.getByLabel(/^Password \(at least/).fill("ada's long passphrase");
  await page.getByLabel("Password again").fill("ada's long passphrase");
  await page.getByRole("button", { name: "Join the team" }).click();
  await expect(page).toHaveURL(/\/invoices$/);
  const budget = {
    organization_daily_cents: null,
    organization_monthly_cents: 50_000,
    member_daily_cents: null,
    member_monthly_cents: null,
  };
  expect((await page.request.put("/api/org/budget", { data: budget })).status()).toBe(200);
  expect((await page.request.put("/api/org/policies/summarize_invoice", { data: { apply: "four_eyes", review_hours: 8 } })).status()).toBe(
    200,
  );

  const whole = run("audit-verify.ts", "--org", orgId!);
  expect(whole.code, whole.out).toBe(0);
  expect(whole.out).toMatch(new RegExp(`${orgId}: ok, [3-9] entries`));

  const [budgetEntry] = await sql<{ seq: string }[]>`
    select seq::text as seq from audit_entry where org_id = ${orgId!} and source = 'org_budget' order by seq desc limit 1`;
  expect(budgetEntry).toBeTruthy();

  // The budget raised behind the triggers: the row no longer says what its entry says.
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`update org_budget set organization_monthly_cents = 5000000 where org_id = ${orgId!}`;
  });
  const changedRow = run("audit-verify.ts", "--org", orgId!);
  expect(changedRow.code, changedRow.out).toBe(1);
  expect(changedRow.out).toContain(`${orgId}: source_changed at entry ${budgetEntry!.seq}, org_budget`);

  // Put back, then an entry of the chain rewritten: the entry itself is named.
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`update org_budget set organization_monthly_cents = 50000 where org_id = ${orgId!}`;
  });
  expect(run("audit-verify.ts", "--org", orgId!).code).toBe(0);
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`update audit_entry set canonical = replace(canonical, '50000', '5000000') where org_id = ${orgId!} and seq = ${budgetEntry!.seq}`;
  });
  const changedEntry = run("audit-verify.ts", "--org", orgId!);
  expect(changedEntry.code, changedEntry.out).toBe(1);
  expect(changedEntry.out).toMatch(new RegExp(`${orgId}: \\w+ at entry ${budgetEntry!.seq}\\b`));
});
