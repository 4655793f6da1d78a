// The scenarios' fixtures: which app server they talk to, the database, a sign-in that
// goes through the API (the sign-in page has its own scenario), and a watch on the
// browser console — any console.error or uncaught page error that a test did not expect
// fails it, and any Content-Security-Policy violation fails it whatever the test expects.
import fs from "node:fs";
import path from "node:path";
import { test as base, expect, type BrowserContext, type ConsoleMessage, type Page } from "@playwright/test";
import { connect, createInvoice, type InvoiceRow, type Sql } from "./db";
import { InvoicePage } from "./pages";
import { ROOT } from "./stack";
import { DEMO_PASSWORD, type ServerName } from "./settings";

type Fixtures = {
  /** Which app server this test runs against (test.use({ server: "short" })). */
  server: ServerName;
  sql: Sql;
  /** Signs a browser context in as `email` through POST /api/session. */
  signIn: (context: BrowserContext, email: string) => Promise<void>;
  /** A fresh invoice owned by `email`. */
  newInvoice: (email: string, counterparty?: string) => Promise<InvoiceRow>;
  /** The usual start: a fresh invoice of `email`'s, the default page signed in as them and on it. */
  openInvoice: (email: string) => Promise<{ invoice: InvoiceRow; inv: InvoicePage }>;
  /** Console errors matching these are expected in this test (a deliberate 404, say). */
  allowConsoleErrors: (...patterns: RegExp[]) => void;
  /** Another browser context (another device or browser), watched like the default one. */
  newContext: () => Promise<BrowserContext>;
  consoleAllowList: RegExp[];
  consoleProblems: string[];
  /** CSP violations seen in any watched page; never allowed (see consoleGuard). */
  cspViolations: string[];
  watchConsole: (context: BrowserContext) => Promise<void>;
  consoleGuard: void;
};

export const test = base.extend<Fixtures, { workerSql: Sql }>({
  server: ["main", { option: true }],
  baseURL: async ({ server }, use) => {
    const url = server === "short" ? process.env.E2E_SHORT_URL : process.env.E2E_MAIN_URL;
    if (!url) throw new Error("E2E_MAIN_URL / E2E_SHORT_URL unset: run through `npx playwright test`");
    await use(url);
  },
  workerSql: [
    async ({}, use) => {
      const sql = connect();
      await use(sql);
      await sql.end({ timeout: 5 });
    },
    { scope: "worker" },
  ],
  sql: async ({ workerSql }, use) => use(workerSql),
  signIn: async ({ baseURL }, use) => {
    await use(async (context, email) => {
      const res = await context.request.post(`${baseURL}/api/session`, { data: { email, password: DEMO_PASSWORD } });
      expect(res.status(), `sign in as ${email}`).toBe(200);
    });
  },
  newInvoice: async ({ sql }, use) => use((email, counterparty) => createInvoice(sql, email, counterparty)),
  openInvoice: async ({ page, context, signIn, newInvoice }, use) => {
    await use(async (email) => {
      const invoice = await newInvoice(email);
      await signIn(context, email);
      const inv = new InvoicePage(page);
      await inv.goto(invoice.id);
      return { invoice, inv };
    });
  },

  consoleAllowList: async ({}, use) => use([]),
  allowConsoleErrors: async ({ consoleAllowList }, use) => use((...patterns) => void consoleAllowList.push(...patterns)),
  consoleProblems: async ({}, use) => use([]),
  cspViolations: async ({}, use) => use([]),
  watchConsole: async ({ consoleAllowList, consoleProblems, cspViolations }, use) => {
    await use(async (context) => {
      const watch = (page: Page) => {
        page.on("pageerror", (error) => consoleProblems.push(`pageerror on ${page.url()}: ${error.message}`));
      };
      // The page's own report of each violation (blocked scripts, styles, frames, eval), sent
      // through a binding, which the page's CSP cannot block.
      await context.exposeBinding("__reportCspViolation", ({ page }, violation: string) => {
        cspViolations.push(`on ${page.url()}: ${violation}`);
      });
      await context.addInitScript(() => {
        document.addEventListener("securitypolicyviolation", (e) => {
          const report = (window as unknown as { __reportCspViolation?: (v: string) => void }).__reportCspViolation;
          report?.(
            `${e.effectiveDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})${e.sample ? `: ${e.sample}` : ""}`,
          );
        });
      });
      context.on("console", (message: ConsoleMessage) => {
        if (message.type() !== "error") return;
        const text = `${message.text()} (${message.location().url})`;
        // Chromium also logs every violation; those are never an expected error.
        if (/Content Security Policy/i.test(text)) cspViolations.push(`console on ${message.page()?.url()}: ${text}`);
        else if (!consoleAllowList.some((pattern) => pattern.test(text)))
          consoleProblems.push(`console.error on ${message.page()?.url()}: ${text}`);
      });
      context.pages().forEach(watch);
      context.on("page", watch);
    });
  },
  newContext: async ({ browser, watchConsole, baseURL, viewport }, use) => {
    const opened: BrowserContext[] = [];
    await use(async () => {
      const context = await browser.newContext({ baseURL, viewport });
      await watchConsole(context);
      opened.push(context);
      return context;
    });
    for (const context of opened) await context.close();
  },
  consoleGuard: [
    async ({ context, watchConsole, consoleProblems, cspViolations }, use) => {
      await watchConsole(context);
      await use();
      expect(cspViolations, "Content-Security-Policy violations in the page").toEqual([]);
      expect(consoleProblems, "unexpected console errors in the page").toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };

/** Runs axe-core in the page; fails on any violation, minor ones included, and logs every result. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  // Evaluated through the debugging protocol, not added as a <script>: the page's CSP would
  // (rightly) refuse an inline script without its nonce.
  await page.evaluate(`${fs.readFileSync(path.join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8")}\n;void 0`);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<AxeResult> } }).axe;
    type AxeResult = {
      violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
      passes: unknown[];
    };
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return {
      passes: r.passes.length,
      violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) })),
    };
  });
  const entry = { label, url: page.url(), ...result };
  fs.appendFileSync(path.join(ROOT, "test-results", "e2e-axe.jsonl"), `${JSON.stringify(entry)}\n`);
  expect(result.violations, `axe: violations on ${label}`).toEqual([]);
}

// Each run saves every lease state under test-results/; `E2E_SCREENSHOT_DIR=docs/screenshots`
// refreshes the committed ones.
export const SCREENSHOT_DIR = process.env.E2E_SCREENSHOT_DIR ?? path.join(ROOT, "test-results", "screenshots");

/** Saves the page as docs/screenshots/<name>.png: the run's picture of each lease state. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true, animations: "disabled", caret: "hide" });
}
