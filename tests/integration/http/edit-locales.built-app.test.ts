// The invoice page's edit form, posted as a browser without JavaScript posts it, in locales whose
// own calendar is not the Gregorian one (an outside review, 2026-12-01): with Accept-Language
// am-ET-u-ca-ethiopic a counterparty-only save rewrote issued_on 2026-11-01 -> 2019-02-22. An
// edit writes only what the user changed, and a date typed in the viewer's locale is that day.
// PostgreSQL only, like every test of the running app (decision 0007).
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAppServer, type AppServer } from "../../harness/app-server";
import { cookieOf } from "../../harness/app-client";
import { inferenceLease, invoice, leaseEvent } from "@/db/schema";
import { makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";
import { formatDate } from "@/app/_lib/format";

if (inject("dbKind") !== "postgres") {
  throw new Error(
    "edit-locales.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).",
  );
}

const BOOT_TIMEOUT = 300_000;
let t: TestDb;
let app: AppServer;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  app = await startAppServer({ databaseUrl: url.toString(), name: "edit-locales" });
}, BOOT_TIMEOUT);
afterAll(async () => {
  await app?.stop();
  await t?.close();
});

async function signedIn() {
  const user = await makeUser(t.db, "Locales");
  const inv = await makeInvoice(t.db, user.id); // issued 2026-11-01, due 2026-12-01
  const res = await fetch(`${app.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: user.email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  return { user, inv, cookie: cookieOf(res.headers) };
}

const unescape = (v: string) =>
  v.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** The edit form's fields as the server rendered them for this Accept-Language, hidden ones included. */
async function editForm(invoiceId: string, cookie: string, language: string): Promise<Map<string, string>> {
  const res = await fetch(`${app.url}/invoices/${invoiceId}`, { headers: { cookie, "accept-language": language } });
  expect(res.status).toBe(200);
  const html = await res.text();
  const section = html.slice(html.indexOf('aria-labelledby="edit-heading"'));
  const form = section.slice(section.indexOf("<form"), section.indexOf("</form>"));
  const fields = new Map<string, string>();
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const name = /\bname="([^"]*)"/.exec(tag)?.[1];
    if (name) fields.set(unescape(name), unescape(/\bvalue="([^"]*)"/.exec(tag)?.[1] ?? ""));
  }
  expect(fields.get("counterparty")).toBe("Northwind Traders");
  return fields;
}

/** Posts the form as a browser without JavaScript does (multipart, the action named in its fields). */
async function post(invoiceId: string, cookie: string, language: string, fields: Map<string, string>) {
  const body = new FormData();
  for (const [k, v] of fields) body.append(k, v);
  const res = await fetch(`${app.url}/invoices/${invoiceId}`, {
    method: "POST",
    headers: { cookie, origin: app.url, "accept-language": language },
    body,
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("location") ?? "", text: await res.text() };
}

const stored = async (id: string) => {
  const [row] = await t.db
    .select({
      counterparty: invoice.counterparty,
      issuedOn: invoice.issuedOn,
      dueOn: invoice.dueOn,
      version: invoice.version,
    })
    .from(invoice)
    .where(eq(invoice.id, id));
  return row!;
};

/** A summary waiting for review: an edit withdraws it and its event names the fields changed (0013). */
async function waitingLease(actorId: string, invoiceId: string) {
  const [lease] = await t.db
    .insert(inferenceLease)
    .values({
      actorId,
      invoiceId,
      purpose: "summarize_invoice",
      status: "proposed",
      deadlineAt: sql`now() + interval '10 minutes'`,
      proposal: { summary: "Waiting for review.", model: "test" },
    })
    .returning({ id: inferenceLease.id });
  return lease!.id;
}

const LOCALES = [
  "am-ET-u-ca-ethiopic", "th-TH", "fa-IR", "ar-SA", "ja-JP-u-ca-japanese", "he-IL-u-ca-hebrew", "de-DE", "en-US",
];
const saved = (id: string) => ({ status: 303, location: `/invoices/${id}?notice=edit.saved` });
const dates = { issuedOn: "2026-11-01", dueOn: "2026-12-01" };

describe("the edit form in a locale with its own calendar", () => {
  it.each(LOCALES)("%s: a counterparty-only save writes only the counterparty", async (language) => {
    const { user, inv, cookie } = await signedIn();
    const leaseId = await waitingLease(user.id, inv.id);
    const fields = await editForm(inv.id, cookie, language);
    fields.set("counterparty", "Contoso");
    const res = await post(inv.id, cookie, language, fields);
    expect({ status: res.status, location: res.location }).toEqual(saved(inv.id));
    expect(await stored(inv.id)).toEqual({ counterparty: "Contoso", ...dates, version: inv.version + 1 });
    const [withdrawn] = await t.db
      .select({ detail: leaseEvent.detail })
      .from(leaseEvent)
      .where(and(eq(leaseEvent.leaseId, leaseId), eq(leaseEvent.kind, "invoice_changed")));
    expect(withdrawn?.detail).toMatchObject({ by: "edit", fields: ["counterparty"] });
  });

  it.each(LOCALES)("%s: the form shows the stored days; a date typed so is that day", async (language) => {
    const { inv, cookie } = await signedIn();
    const fields = await editForm(inv.id, cookie, language);
    expect([fields.get("issued_on"), fields.get("due_on")]).toEqual([
      formatDate("2026-11-01", language),
      formatDate("2026-12-01", language),
    ]);
    fields.set("due_on", formatDate("2026-12-24", language));
    const res = await post(inv.id, cookie, language, fields);
    expect({ status: res.status, location: res.location }).toEqual(saved(inv.id));
    expect(await stored(inv.id)).toMatchObject({ issuedOn: "2026-11-01", dueOn: "2026-12-24", version: inv.version + 1 });
  });
});

describe("a field nobody touched is never rewritten", () => {
  // 11/01/2026 is 1 November in en-US and 11 January in en-GB.
  it("a form shown in en-US and saved with en-GB keeps its dates", async () => {
    const { inv, cookie } = await signedIn();
    const fields = await editForm(inv.id, cookie, "en-US");
    expect(fields.get("issued_on")).toBe("11/01/2026");
    fields.set("counterparty", "Fabrikam");
    const res = await post(inv.id, cookie, "en-GB", fields);
    expect(res.status).toBe(303);
    expect(await stored(inv.id)).toEqual({ counterparty: "Fabrikam", ...dates, version: inv.version + 1 });
  });

  it("a post without the values the form was rendered with is refused and writes nothing", async () => {
    const { inv, cookie } = await signedIn();
    const fields = await editForm(inv.id, cookie, "en-US");
    fields.set("counterparty", "Fabrikam");
    for (const field of ["was_number", "was_counterparty", "was_issued_on", "was_due_on"]) {
      const without = new Map([...fields].filter(([name]) => name !== field));
      const res = await post(inv.id, cookie, "en-US", without);
      expect({ field, status: res.status }).toEqual({ field, status: 200 });
      expect(res.text).toContain("Check the fields");
    }
    expect(await stored(inv.id)).toEqual({ counterparty: "Northwind Traders", ...dates, version: inv.version });
  });

  it("an untouched form saves nothing, in any locale", async () => {
    const { inv, cookie } = await signedIn();
    for (const language of LOCALES) {
      const res = await post(inv.id, cookie, language, await editForm(inv.id, cookie, language));
      const unchanged = `/invoices/${inv.id}?notice=edit.unchanged`;
      expect({ language, location: res.location }).toEqual({ language, location: unchanged });
    }
    expect(await stored(inv.id)).toMatchObject({ version: inv.version });
  });
});
