// Security headers and cross-site refusals of the production build (proxy.ts, lib/origin.ts;
// docs/decisions/0011-cross-site-writes-and-headers.md): a nonce CSP on every page, strict
// headers on every API answer, no framing, HSTS only behind HTTPS, and server actions that
// refuse a foreign Origin even when X-Forwarded-Host is forged to match it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { APIResponse, BrowserContext } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { SignInPage } from "./support/pages";
import { ALICE } from "./support/settings";

const EVIL = "http://evil.example";

function directives(csp: string | undefined): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of (csp ?? "").split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) map.set(name, values);
  }
  return map;
}

function expectCommonHeaders(res: APIResponse) {
  const h = res.headers();
  expect(h["x-content-type-options"]).toBe("nosniff");
  expect(h["x-frame-options"]).toBe("DENY");
  expect(h["referrer-policy"]).toBe("same-origin");
  expect(h["permissions-policy"]).toContain("camera=()");
  expect(h["cross-origin-opener-policy"]).toBe("same-origin");
  expect(directives(h["content-security-policy"]).get("frame-ancestors")).toEqual(["'none'"]);
}

test("every page carries a nonce CSP, and every script on it carries that nonce", async ({ request }) => {
  const nonces = new Set<string>();
  for (const path of ["/sign-in", "/sign-in", "/no-such-page"]) {
    const res = await request.get(path);
    expectCommonHeaders(res);
    expect(res.headers()["strict-transport-security"], "no HSTS over plain HTTP").toBeUndefined();
    const csp = directives(res.headers()["content-security-policy"]);
    const scriptSrc = csp.get("script-src") ?? [];
    const nonce = scriptSrc.find((v) => v.startsWith("'nonce-"))?.slice(7, -1);
    expect(nonce, `script-src of ${path}: ${scriptSrc.join(" ")}`).toBeTruthy();
    expect(scriptSrc).toContain("'strict-dynamic'");
    expect(scriptSrc, "the production build allows no eval and no inline script").not.toContain("'unsafe-eval'");
    expect(scriptSrc).not.toContain("'unsafe-inline'");
    expect(csp.get("object-src")).toEqual(["'none'"]);
    expect(csp.get("base-uri")).toEqual(["'self'"]);
    expect(csp.get("form-action")).toEqual(["'self'"]);
    nonces.add(nonce!);

    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag, path).toContain(`nonce="${nonce}"`);
  }
  expect(nonces.size, "a fresh nonce per request").toBe(3);
});

test("API answers carry the headers and a CSP that allows nothing, on success and refusal alike", async ({
  request,
  signIn,
  context,
  baseURL,
}) => {
  for (const res of [
    await request.get("/api/session"),
    await request.get("/api/inngest"),
    await request.post("/api/leases", { data: {}, headers: { origin: EVIL } }),
  ]) {
    expectCommonHeaders(res);
    expect(directives(res.headers()["content-security-policy"]).get("default-src")).toEqual(["'none'"]);
  }
  expect((await request.post("/api/leases", { data: {}, headers: { origin: EVIL } })).status()).toBe(403);
  await signIn(context, ALICE);
  const ok = await context.request.get(`${baseURL}/api/invoices`);
  expect(ok.status()).toBe(200);
  expectCommonHeaders(ok);
});

test("HSTS and upgrade-insecure-requests when served over HTTPS (X-Forwarded-Proto from the TLS proxy)", async ({ request }) => {
  for (const path of ["/sign-in", "/api/session"]) {
    const res = await request.get(path, { headers: { "x-forwarded-proto": "https" } });
    expect(res.headers()["strict-transport-security"]).toBe("max-age=31536000; includeSubDomains");
  }
  const page = await request.get("/sign-in", { headers: { "x-forwarded-proto": "https" } });
  expect(directives(page.headers()["content-security-policy"]).has("upgrade-insecure-requests")).toBe(true);
});

test("the app cannot be framed by another site", async ({ browser, baseURL }) => {
  // Another origin: a page served from another port of this machine (a real local server, so
  // Chromium's local-network rules, which block public pages framing local ones, play no part:
  // only the app's own headers can refuse the frame).
  const framer = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><title>framer</title><iframe id="app" src="${baseURL}/sign-in"></iframe>`);
  });
  await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve));
  // A context of its own, not watched: the refused frame is the point of this test.
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`);
    // Chromium puts its error page in the frame instead of the sign-in form.
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    await expect.poll(() => frame.url()).toMatch(/^chrome-error:/);
    expect(await frame.locator("input[type=password]").count()).toBe(0);
  } finally {
    await context.close();
    await new Promise((resolve) => framer.close(resolve));
  }
});

/** The sign-out form's server action id, as the signed-in page renders it. */
async function signOutActionField(context: BrowserContext, baseURL: string): Promise<string> {
  const html = await (await context.request.get(`${baseURL}/invoices`)).text();
  const field = /name="(\$ACTION_ID_[0-9a-f]+)"/.exec(html)?.[1];
  expect(field, "the sign-out form names its server action").toBeTruthy();
  return field!;
}

test("a cross-site server action is refused, even with X-Forwarded-Host forged to match its Origin", async ({
  signIn,
  context,
  baseURL,
  page,
}) => {
  await signIn(context, ALICE);
  const field = await signOutActionField(context, baseURL!);
  const actionId = field.slice("$ACTION_ID_".length);
  const attempts: { name: string; headers: Record<string, string>; multipart?: Record<string, string>; data?: string }[] = [
    // A plain cross-site <form> post (no JavaScript), as a page on evil.example would send it.
    { name: "form post", headers: { origin: EVIL, "x-forwarded-host": "evil.example" }, multipart: { [field]: "" } },
    { name: "form post, no forged host", headers: { origin: EVIL }, multipart: { [field]: "" } },
    // The router's fetch form of the same action.
    {
      name: "fetch action",
      headers: { origin: EVIL, "x-forwarded-host": "evil.example", "next-action": actionId, "content-type": "text/plain;charset=UTF-8" },
      data: "[]",
    },
    { name: "opaque origin", headers: { origin: "null", "next-action": actionId, "content-type": "text/plain;charset=UTF-8" }, data: "[]" },
  ];
  for (const a of attempts) {
    const res = await context.request.post(`${baseURL}/invoices`, {
      headers: a.headers,
      multipart: a.multipart,
      data: a.data,
      maxRedirects: 0,
    });
    expect(res.status(), a.name).toBe(403);
    // The session survived: the action (sign-out) never ran.
    expect((await context.request.get(`${baseURL}/api/session`)).status(), a.name).toBe(200);
  }

  // Our own page still signs out through the same action.
  await page.goto("/invoices");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`/sign-in?signed-out=1&next=${encodeURIComponent("/invoices")}`);
  expect((await context.request.get(`${baseURL}/api/session`)).status()).toBe(401);
  await new SignInPage(page).signIn(ALICE);
});
