// No page, RSC payload or server action crosses organizations, against the built app over
// HTTP (cross-org.test.ts holds the route handlers to the same on both databases). Northwind
// (Alice admin, Carol approver, Dave member) and Fabrikam (Bob admin): another organization's
// invoice page is the not-found page a missing id gets, the same bytes once the per-request
// script nonce and the id itself are set aside, in HTML and in the RSC payload (`RSC: 1`), and
// carries none of that organization's data; each server action (Summarize, Apply, Discard,
// Cancel, the edit) on another organization's ids answers as on missing ids and writes nothing;
// a teammate's lease is as missing to the other teammates' actions, while the teammate's page
// shows the invoice, who holds the lease and until when, and nothing of its id or proposal.
// PostgreSQL only, as every built-app test: the app runs as a process of its own.
import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { inferenceLease, leaseEvent } from "@/db/schema";
import { ROOT, startAppServer, TEST_DIST_DIR, type AppServer } from "../../harness/app-server";
import { joinOrgOf, makeInvoice, makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

if (inject("dbKind") !== "postgres") {
  throw new Error("cross-org.built-app.test.ts needs PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).");
}

// The build alone can take minutes on a busy machine.
const BOOT_TIMEOUT = 1_200_000;
let t: TestDb;
let app: AppServer;

beforeAll(async () => {
  t = await openTestDb();
  const url = new URL(inject("pgAdminUrl"));
  url.pathname = `/${t.name}`;
  app = await startAppServer({ databaseUrl: url.toString(), name: "cross-org" });
}, BOOT_TIMEOUT);
afterAll(async () => {
  await app?.stop();
  await t?.close();
});

async function snapshot() {
  const [row] = await t.db
    .select({
      invoices: sql<string>`(select string_agg(concat_ws(':', id, org_id, owner_id, version, number, counterparty, issued_on, due_on, summary, status), ',' order by id) from invoice)`,
      leases: sql<string>`(select string_agg(concat_ws(':', id, status, closed_reason, deadline_at), ',' order by id) from inference_lease)`,
      events: sql<number>`(select count(*) from lease_event)`.mapWith(Number),
      changes: sql<number>`(select count(*) from invoice_change)`.mapWith(Number),
    })
    .from(sql`(select 1) as one`);
  return row!;
}

async function signIn(email: string): Promise<string> {
  const res = await fetch(`${app.url}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .filter((c) => c!.startsWith("claimcheck_session="))
    .join("; ");
}

async function world() {
  const alice = await makeUser(t.db, "Alice Martin");
  const carol = await makeUser(t.db, "Carol Approver");
  const dave = await makeUser(t.db, "Dave Member");
  const bob = await makeUser(t.db, "Bob Fabrikam");
  await joinOrgOf(t.db, carol, alice, "approver");
  await joinOrgOf(t.db, dave, alice, "member");
  const northwind = await makeInvoice(t.db, alice.id, {
    counterparty: "Northwind Hidden Counterparty",
    number: `NW-${randomUUID().slice(0, 6)}`,
  });
  const fabrikam = await makeInvoice(t.db, bob.id, {
    counterparty: "Fabrikam Hidden Counterparty",
    number: `FB-${randomUUID().slice(0, 6)}`,
  });
  const [lease] = await t.db
    .insert(inferenceLease)
    .values({
      actorId: alice.id,
      invoiceId: northwind.id,
      purpose: "summarize_invoice",
      status: "proposed",
      deadlineAt: sql`now() + interval '10 minutes'`,
      proposal: { summary: "Alice's private proposal text", model: "test" },
    })
    .returning();
  await t.db.insert(leaseEvent).values([
    { leaseId: lease!.id, kind: "opened", detail: {} },
    { leaseId: lease!.id, kind: "proposed", detail: {} },
  ]);
  const [bobCookie, daveCookie, carolCookie, aliceCookie] = (await Promise.all([bob, dave, carol, alice].map((u) => signIn(u.email)))) as [
    string,
    string,
    string,
    string,
  ];
  return { alice, bob, northwind, fabrikam, lease: lease!, bobCookie, daveCookie, carolCookie, aliceCookie };
}

/** What changes per request or per id and says nothing about the row: the script nonce, random keys, and the id asked for. */
function normalized(body: string, ids: string[]) {
  const nonce = /nonce="([^"]+)"/.exec(body)?.[1] ?? /nonce\\?":\\?"([^"\\]+)/.exec(body)?.[1];
  let out = nonce ? body.split(nonce).join(":nonce") : body;
  for (const id of ids) out = out.split(id).join(":id");
  // React's keys for the metadata boundaries of an RSC response are random per request (22
  // letters, digits, - or _): no data, and different for every request alike.
  return out.replace(/"[A-Za-z0-9_-]{22}"/g, '":key"');
}

async function page(pathname: string, cookie: string, rsc = false) {
  const headers: Record<string, string> = { cookie };
  if (rsc) headers.rsc = "1";
  let res = await fetch(`${app.url}${pathname}`, { headers, redirect: "manual" });
  // An RSC request without its cache-busting `_rsc` parameter is sent to the address with it.
  const location = res.headers.get("location");
  if (rsc && res.status === 307 && location?.includes("_rsc"))
    res = await fetch(new URL(location, app.url), { headers, redirect: "manual" });
  return { status: res.status, body: await res.text() };
}

function actionId(name: string): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, TEST_DIST_DIR, "server", "server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { filename: string; exportedName: string }>;
  };
  const found = Object.entries(manifest.node).find(([, a]) => a.filename === "app/invoices/[id]/actions.ts" && a.exportedName === name);
  if (!found) throw new Error(`no server action ${name} in the build`);
  return found[0];
}

/** The hidden fields of the edit form on a page the sender may see (their own invoice's). */
async function editFormFields(invoiceId: string, cookie: string): Promise<[string, string][]> {
  const html = (await page(`/invoices/${invoiceId}`, cookie)).body;
  const edit = html
    .split("<form")
    .slice(1)
    .map((f) => f.slice(0, f.indexOf("</form>")))
    .find((f) => f.includes('name="counterparty"'));
  if (!edit) throw new Error("no edit form on the invoice page");
  const unescape = (v: string) =>
    v
      .replace(/&quot;/g, '"')
      .replace(/&#x27;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
  return [...edit.matchAll(/<input[^>]*>/g)].map((m) => {
    const attr = (a: string) => new RegExp(`${a}="([^"]*)"`).exec(m[0])?.[1] ?? "";
    return [unescape(attr("name")), unescape(attr("value"))] as [string, string];
  });
}

/** A server action posted as a browser with JavaScript off posts it, to the page of `pagePath`. */
async function postAction(name: string, pagePath: string, cookie: string, fields: Record<string, string>, base: [string, string][] = []) {
  const form = new FormData();
  if (name !== "editInvoiceAction") form.append(`$ACTION_ID_${actionId(name)}`, "");
  for (const [k, v] of base) if (!(k in fields)) form.append(k, v);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${app.url}${pagePath}`, {
    method: "POST",
    headers: { cookie, origin: app.url },
    body: form,
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("location"), body: await res.text() };
}

const secretsOf = (w: Awaited<ReturnType<typeof world>>) => [
  w.northwind.counterparty,
  w.northwind.number,
  w.northwind.id,
  "Alice Martin",
  w.lease.id,
  "private proposal text",
];

describe("another organization's invoice page is the missing id's not-found page", () => {
  it("HTML and RSC payload: the same bytes (nonce and id aside), 404, none of the other organization's data", async () => {
    const w = await world();
    const missing = randomUUID();
    for (const rsc of [false, true]) {
      const crossed = await page(`/invoices/${w.northwind.id}`, w.bobCookie, rsc);
      const absent = await page(`/invoices/${missing}`, w.bobCookie, rsc);
      // The HTML is a 404; an RSC request (a client navigation) gets the not-found tree in a 200, as a missing id does.
      expect({ rsc, status: crossed.status }).toEqual({ rsc, status: absent.status });
      expect(absent.status).toBe(rsc ? 200 : 404);
      expect(normalized(crossed.body, [w.northwind.id])).toEqual(normalized(absent.body, [missing]));
      const shown = crossed.body.split(w.northwind.id).join("");
      for (const secret of secretsOf(w).filter((s) => s !== w.northwind.id))
        expect({ rsc, secret, found: shown.includes(secret) }).toEqual({ rsc, secret, found: false });
      if (!rsc) expect(crossed.body).toContain("Page not found");
    }
    // And the other way: Dave (Northwind) on Fabrikam's invoice.
    const crossed = await page(`/invoices/${w.fabrikam.id}`, w.daveCookie, true);
    const absent = await page(`/invoices/${missing}`, w.daveCookie, true);
    expect(crossed.status).toBe(absent.status);
    expect(normalized(crossed.body, [w.fabrikam.id])).toEqual(normalized(absent.body, [missing]));
    expect(crossed.body).not.toContain("Fabrikam Hidden Counterparty");
  });

  it("the list page of one organization shows none of the other's invoices", async () => {
    const w = await world();
    const bobs = await page("/invoices", w.bobCookie);
    expect(bobs.status).toBe(200);
    for (const secret of secretsOf(w)) expect(bobs.body).not.toContain(secret);
    const daves = await page("/invoices", w.daveCookie);
    expect(daves.body).toContain(w.northwind.number);
    expect(daves.body).toContain("Owner: Alice Martin");
    expect(daves.body).not.toContain(w.fabrikam.number);
  });
});

describe("server actions on another organization's ids answer as on missing ids and write nothing", () => {
  it("Summarize, Apply, Discard, Cancel and the edit, from Fabrikam on Northwind", async () => {
    const w = await world();
    const missingInvoice = randomUUID();
    const missingLease = randomUUID();
    const ids = [w.northwind.id, w.lease.id, missingInvoice, missingLease];
    const editBase = await editFormFields(w.fabrikam.id, w.bobCookie);
    const cases: { name: string; crossed: () => ReturnType<typeof postAction>; absent: () => ReturnType<typeof postAction> }[] = [
      {
        name: "summarizeAction",
        crossed: () => postAction("summarizeAction", `/invoices/${w.northwind.id}`, w.bobCookie, { invoice_id: w.northwind.id }),
        absent: () => postAction("summarizeAction", `/invoices/${missingInvoice}`, w.bobCookie, { invoice_id: missingInvoice }),
      },
      ...["applyAction", "discardAction", "cancelAction"].map((name) => ({
        name,
        crossed: () => postAction(name, `/invoices/${w.northwind.id}`, w.bobCookie, { lease_id: w.lease.id, invoice_id: w.northwind.id }),
        absent: () => postAction(name, `/invoices/${missingInvoice}`, w.bobCookie, { lease_id: missingLease, invoice_id: missingInvoice }),
      })),
      {
        name: "editInvoiceAction",
        crossed: () =>
          postAction(
            "editInvoiceAction",
            `/invoices/${w.northwind.id}`,
            w.bobCookie,
            { invoice_id: w.northwind.id, counterparty: "Hijacked" },
            editBase,
          ),
        absent: () =>
          postAction(
            "editInvoiceAction",
            `/invoices/${missingInvoice}`,
            w.bobCookie,
            { invoice_id: missingInvoice, counterparty: "Hijacked" },
            editBase,
          ),
      },
    ];
    for (const c of cases) {
      const before = await snapshot();
      const crossed = await c.crossed();
      const absent = await c.absent();
      const view = (r: Awaited<ReturnType<typeof postAction>>) => ({
        status: r.status,
        location: r.location && normalized(r.location, ids),
        body: normalized(r.body, ids),
      });
      expect({ action: c.name, ...view(crossed) }).toEqual({ action: c.name, ...view(absent) });
      expect(crossed.status).toBeLessThan(500);
      for (const secret of secretsOf(w).filter((s) => s !== w.northwind.id && s !== w.lease.id)) expect(crossed.body).not.toContain(secret);
      expect(await snapshot()).toEqual(before);
    }
  });

  it("a teammate's Apply, Discard and Cancel on the owner's lease answer as on a missing lease and write nothing", async () => {
    const w = await world();
    const missingLease = randomUUID();
    for (const cookie of [w.daveCookie, w.carolCookie]) {
      for (const name of ["applyAction", "discardAction", "cancelAction"]) {
        const before = await snapshot();
        const crossed = await postAction(name, `/invoices/${w.northwind.id}`, cookie, { lease_id: w.lease.id, invoice_id: w.northwind.id });
        const absent = await postAction(name, `/invoices/${w.northwind.id}`, cookie, {
          lease_id: missingLease,
          invoice_id: w.northwind.id,
        });
        expect({ name, status: crossed.status, location: crossed.location }).toEqual({
          name,
          status: absent.status,
          location: absent.location,
        });
        expect(crossed.location).toMatch(/notice=\w+\.lease_not_found$/);
        expect(await snapshot()).toEqual(before);
      }
    }
  });
});

describe("the teammate's invoice page", () => {
  it("shows the invoice, its owner and who holds the lease until when; no Summarize, Apply, Discard or edit form; nothing of the lease's id or proposal", async () => {
    const w = await world();
    for (const cookie of [w.daveCookie, w.carolCookie]) {
      for (const rsc of [false, true]) {
        const res = await page(`/invoices/${w.northwind.id}`, cookie, rsc);
        expect(res.status).toBe(200);
        expect(res.body).toContain("Northwind Hidden Counterparty");
        expect(res.body).toContain("Owner: Alice Martin");
        expect(res.body).toContain("Alice Martin, the owner, or an admin of your organization can edit this invoice.");
        // The teammate panel is a client component: its words are in the HTML, its props (a name,
        // a status, a deadline) in the RSC payload.
        if (!rsc) {
          expect(res.body).toContain("Only Alice Martin, the owner, can summarize this invoice.");
          expect(res.body).toContain("A summary by Alice Martin waits for their review until");
        } else expect(res.body).toContain('{"name":"Alice Martin","purpose":"summarize_invoice","status":"proposed","deadline_at":');
        expect(res.body).not.toContain(w.lease.id);
        // In HTML the apostrophe is escaped: look for what follows it.
        expect(res.body).not.toContain("private proposal text");
        if (!rsc) {
          expect(res.body).not.toMatch(/>(Summarize|Apply|Discard|Save changes)</);
          expect(res.body).not.toContain('name="counterparty"');
        }
      }
    }
    // The owner's own page still has the lease, its proposal and its buttons.
    const own = await page(`/invoices/${w.northwind.id}`, w.aliceCookie);
    expect(own.body).toContain(w.lease.id);
    expect(own.body).toContain("Alice&#x27;s private proposal text");
    expect(own.body).toContain(">Apply<");
  });

  it("the header names the organization and the role", async () => {
    const w = await world();
    expect((await page("/invoices", w.carolCookie)).body).toContain("· Approver");
    expect((await page("/invoices", w.daveCookie)).body).toContain("· Member");
    expect((await page("/invoices", w.bobCookie)).body).toContain("· Admin");
  });
});
