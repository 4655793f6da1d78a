// A server action holds its live session in its own transaction, as the routes do (an outside
// review, 2026-12-01, applied from the page after signing out): an action that waits on a row
// another connection holds must either commit before a sign-out of its session answers, or
// write nothing; and a session that runs out (by the database clock) while the action waits
// writes nothing. Posted as a no-JavaScript form would post them, to the built app. PostgreSQL
// only: the races need a second connection holding a row, which PGlite (one connection) cannot give.
import fs from "node:fs";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { appSession, inferenceLease } from "@/db/schema";
import { formatDate } from "@/app/_lib/format";
import { ROOT, startAppServer, TEST_DIST_DIR, type AppServer } from "../../harness/app-server";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";
import { holderFor, testDbUrl, type RowHolder } from "../../support/row-holder";

if (inject("dbKind") !== "postgres") {
  throw new Error(
    "session-held-actions.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).",
  );
}

const BOOT_TIMEOUT = 300_000;
let t: TestDb;
let app: AppServer;
let held: RowHolder;

beforeAll(async () => {
  t = await openTestDb();
  held = holderFor(t);
  app = await startAppServer({ databaseUrl: testDbUrl(t), name: "session-held" });
}, BOOT_TIMEOUT);
afterAll(async () => {
  await app?.stop();
  await held?.end();
  await t?.close();
});

/** The id Next.js gave a server action in this build. */
function actionId(name: string): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, TEST_DIST_DIR, "server", "server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { filename: string; exportedName: string }>;
  };
  const found = Object.entries(manifest.node).find(([, a]) => a.filename === "app/invoices/[id]/actions.ts" && a.exportedName === name);
  if (!found) throw new Error(`no server action ${name} in the build`);
  return found[0];
}

async function signIn(email: string): Promise<{ cookie: string; sessionId: string }> {
  const res = await fetch(`${app.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const [row] = await t.db
    .select({ id: appSession.id })
    .from(appSession)
    .orderBy(sql`created_at desc`)
    .limit(1);
  return { cookie, sessionId: row!.id };
}

/**
 * A server action posted as a browser with JavaScript off posts it. The lease actions are
 * plain form actions (`$ACTION_ID_<id>`); the edit form is a state action, whose form carries
 * its reference in hidden fields: those are taken from the page as the server rendered it.
 */
async function postAction(name: string, invoiceId: string, cookie: string, fields: Record<string, string>) {
  const form = new FormData();
  if (name === "editInvoiceAction") {
    for (const [k, v] of await editFormHiddenFields(invoiceId, cookie)) if (!(k in fields)) form.append(k, v);
  } else {
    form.append(`$ACTION_ID_${actionId(name)}`, "");
  }
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${app.url}/invoices/${invoiceId}`, {
    method: "POST",
    headers: { cookie, origin: app.url },
    body: form,
    redirect: "manual",
  });
  const body = await res.text();
  return { status: res.status, location: res.headers.get("location"), body: body.slice(0, 300) };
}

/** The hidden fields of the invoice page's edit form, as the server rendered them. */
async function editFormHiddenFields(invoiceId: string, cookie: string): Promise<[string, string][]> {
  const html = await (await fetch(`${app.url}/invoices/${invoiceId}`, { headers: { cookie } })).text();
  const forms = html
    .split("<form")
    .slice(1)
    .map((f) => f.slice(0, f.indexOf("</form>")));
  const edit = forms.find((f) => f.includes('name="counterparty"'));
  if (!edit) throw new Error("no edit form on the invoice page");
  const unescape = (v: string) =>
    v
      .replace(/&quot;/g, '"')
      .replace(/&#x27;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
  return [...edit.matchAll(/<input[^>]*type="hidden"[^>]*>/g)].map((m) => {
    const attr = (a: string) => new RegExp(`${a}="([^"]*)"`).exec(m[0])?.[1] ?? "";
    return [unescape(attr("name")), unescape(attr("value"))];
  });
}

async function world() {
  const alice = await makeUser(t.db, "Alice");
  const inv = await makeInvoice(t.db, alice.id);
  const [lease] = await t.db
    .insert(inferenceLease)
    .values({
      actorId: alice.id,
      invoiceId: inv.id,
      purpose: "summarize_invoice",
      status: "proposed",
      deadlineAt: sql`now() + interval '10 minutes'`,
      proposal: { summary: "The held summary.", model: "test" },
    })
    .returning();
  return { alice, inv, lease: lease!, ...(await signIn(alice.email)) };
}

describe("Apply posted without JavaScript, racing a sign-out of its session", () => {
  it("the write commits before the sign-out answers, or not at all (the review's race)", async () => {
    const { inv, lease, cookie } = await world();
    const row = held.hold(`select id from inference_lease where id = '${lease.id}' for update`);
    await row.isLocked;
    const apply = postAction("applyAction", inv.id, cookie, { lease_id: lease.id, invoice_id: inv.id });
    await held.appWaitingOnLock(apply);

    // What the database says at the moment the sign-out answers.
    const signOut = fetch(`${app.url}/api/session`, { method: "DELETE", headers: { cookie } }).then(async (res) => ({
      status: res.status,
      body: await res.json(),
      leaseThen: (await held.sql`select status from inference_lease where id = ${lease.id}`)[0]!.status as string,
    }));
    await new Promise((r) => setTimeout(r, 1_000));
    row.release();
    await row.done;
    const [signedOut, applied] = await Promise.all([signOut, apply]);

    expect(signedOut.status).toBe(200);
    expect((await fetch(`${app.url}/api/session`, { headers: { cookie } })).status).toBe(401);
    const after = await held.snapshot(inv.id);
    if (after.invoice.summary !== null) {
      // Written: then it was written while the session was live, before sign-out answered.
      expect({ leaseWhenSignOutAnswered: signedOut.leaseThen }).toEqual({ leaseWhenSignOutAnswered: "applied" });
    } else {
      expect(applied.location).toMatch(/\/sign-in/);
      expect(after.leases).toEqual([{ status: "proposed", reason: null }]);
    }
  });
});

describe("a session that runs out while the action waits on a row", () => {
  const cases = [
    { action: "applyAction", held: "lease", fields: (l: string, i: string) => ({ lease_id: l, invoice_id: i }) },
    { action: "discardAction", held: "lease", fields: (l: string, i: string) => ({ lease_id: l, invoice_id: i }) },
    { action: "summarizeAction", held: "invoice", fields: (_l: string, i: string) => ({ invoice_id: i }) },
    {
      action: "editInvoiceAction",
      held: "invoice",
      fields: (_l: string, i: string) => ({
        invoice_id: i,
        number: "INV-EDITED",
        counterparty: "Edited Counterparty",
        // As the form shows them (the default locale); only the text fields change.
        issued_on: formatDate("2026-11-01"),
        due_on: formatDate("2026-12-01"),
        expected_version: "1",
      }),
    },
  ] as const;

  for (const c of cases) {
    it(`${c.action}: with its session live and no row held, the same post writes (the control)`, async () => {
      const { inv, lease, cookie } = await world();
      if (c.action === "summarizeAction") {
        await t.db.update(inferenceLease).set({ status: "rejected", closedReason: "cancelled" }).where(eq(inferenceLease.id, lease.id));
      }
      const before = await held.snapshot(inv.id);
      const res = await postAction(c.action, inv.id, cookie, c.fields(lease.id, inv.id));
      expect(res.location ?? res.body).toMatch(new RegExp(`/invoices/${inv.id}`));
      expect(await held.snapshot(inv.id)).not.toEqual(before);
    });

    it(`${c.action}: nothing written, and the browser is sent to sign in`, async () => {
      const { inv, lease, cookie, sessionId } = await world();
      if (c.action === "summarizeAction") {
        // Summarize needs an invoice with no lease in flight.
        await t.db.update(inferenceLease).set({ status: "rejected", closedReason: "cancelled" }).where(eq(inferenceLease.id, lease.id));
      }
      const before = await held.snapshot(inv.id);
      const target = c.held === "lease" ? `inference_lease where id = '${lease.id}'` : `invoice where id = '${inv.id}'`;
      const row = held.hold(`select id from ${target} for update`);
      await row.isLocked;
      // Live when the action starts; past its end by the time the row is let go.
      await t.db
        .update(appSession)
        .set({ expiresAt: sql`clock_timestamp() + interval '1 second'` })
        .where(eq(appSession.id, sessionId));
      const posted = postAction(c.action, inv.id, cookie, c.fields(lease.id, inv.id));
      await held.appWaitingOnLock(posted);
      await new Promise((r) => setTimeout(r, 2_000));
      row.release();
      await row.done;
      const res = await posted;

      expect(await held.snapshot(inv.id)).toEqual(before);
      expect(res.location ?? "").toMatch(/\/sign-in/);
    });
  }
});
