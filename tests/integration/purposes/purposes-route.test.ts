// GET /api/purposes through its real route handler on a real database (PGlite or PostgreSQL, per
// run): the registry's purposes the caller's role may request, 401 without a session. The list
// agrees with open: a purpose it leaves out is one POST /api/leases refuses the caller.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/purposes/route";
import { appEnv } from "@/lib/env";
import { PURPOSE_DEFINITIONS, PURPOSES } from "@/lib/purposes";
import { api, signInCookie } from "../../support/api";
import { joinOrgOf, makeUser, openTestDb, type TestDb } from "../../support/db";
import { invoiceWith } from "./purpose-support";

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

async function listPurposes(cookie?: string) {
  const res = await GET(new Request("http://127.0.0.1:3000/api/purposes", { headers: cookie ? { cookie } : {} }), {
    params: Promise.resolve({}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe("GET /api/purposes", () => {
  it("signed out, or with a cookie that names no session: 401 not_signed_in", async () => {
    expect(await listPurposes()).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
    expect(await listPurposes("claimcheck_session=garbage")).toMatchObject({ status: 401, body: { detail: "not_signed_in" } });
  });

  it("signed in: every purpose of the registry, in its order, with its title, description, roles, target, lifetime and prompt version", async () => {
    const alice = await makeUser(t.db, "Alice");
    const { status, body } = await listPurposes(await signInCookie(alice.email));
    expect(status).toBe(200);
    expect(body).toEqual(
      PURPOSES.map((name) => {
        const p = PURPOSE_DEFINITIONS[name];
        return {
          name,
          title: p.title,
          description: p.description,
          roles: [...p.roles],
          target: [...p.target],
          ttl_seconds: p.ttlSeconds ?? appEnv().leaseTtlSeconds,
          prompt_version: p.promptVersion,
        };
      }),
    );
    // Concretely, so a registry that loses a purpose or a target shows here too.
    expect(body.map((p: { name: string; target: string[] }) => [p.name, p.target])).toEqual([
      ["summarize_invoice", ["invoice.summary", "invoice.summary_version"]],
      ["review_invoice", ["invoice.review_notes", "invoice.review_notes_version"]],
      ["categorize_lines", ["invoice_line.category"]],
    ]);
    // Never the prompt itself.
    expect(JSON.stringify(body)).not.toContain(PURPOSE_DEFINITIONS.summarize_invoice.instructions.slice(0, 40));
  });

  describe("only the purposes the caller's role may request", () => {
    const review = PURPOSE_DEFINITIONS.review_invoice as { roles: readonly string[] };
    const saved = review.roles;
    afterEach(() => {
      review.roles = saved;
    });

    it("review_invoice for admins only: an admin sees it, a member does not, and open refuses the member", async () => {
      review.roles = ["admin"];
      const alice = await makeUser(t.db, "Alice");
      const bob = await makeUser(t.db, "Bob");
      await joinOrgOf(t.db, bob, alice, "member");
      const carol = await makeUser(t.db, "Carol");
      await joinOrgOf(t.db, carol, alice, "approver");

      const names = async (email: string) => (await listPurposes(await signInCookie(email))).body.map((p: { name: string }) => p.name);
      expect(await names(alice.email)).toEqual(["summarize_invoice", "review_invoice", "categorize_lines"]);
      expect(await names(bob.email)).toEqual(["summarize_invoice", "categorize_lines"]);
      expect(await names(carol.email)).toEqual(["summarize_invoice", "categorize_lines"]);

      const bobCookie = await signInCookie(bob.email);
      const inv = await invoiceWith(t.db, bob.id, { issuedOn: "2026-01-01", dueOn: "2099-01-01" });
      const refused = await api("POST", "/api/leases", { cookie: bobCookie, json: { invoice_id: inv.id, purpose: "review_invoice" } });
      expect(refused.status).toBe(403);
      const listed = await api("POST", "/api/leases", { cookie: bobCookie, json: { invoice_id: inv.id, purpose: "categorize_lines" } });
      expect(listed.status).toBe(201);
    });
  });
});
