// `npm run bench page [-- --loads 7]`: the invoice page's weight and paint in Chromium.
// The built app (tests/support/app-server.ts) on a fresh PostgreSQL database with one seeded
// actor; Chromium (Playwright, /usr/bin/chromium) signs in and loads /invoices/<id> with an
// empty cache `--loads` times. Reports:
//   - first-load JavaScript: every script the page loads, as sent (the server's encoding)
//     and gzipped here (zlib level 6, how `next build` used to report it), summed
//   - LCP: the largest-contentful-paint entry (PerformanceObserver, buffered) of each load,
//     median and max
// Writes bench/results/page-<date>-<label>.json.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { chromium } from "@playwright/test";
import postgres from "postgres";
import { eq } from "drizzle-orm";
import { openDb } from "@/db/client";
import { migrateDb } from "@/db/migrate";
import { loadActorEmail, seedActors } from "@/db/seed";
import { appUser, invoice } from "@/db/schema";
import { startAppServer } from "@/tests/support/app-server";
import { signIn } from "@/tests/support/app-client";

const args = process.argv.slice(3);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const LOADS = Number(opt("loads", "7"));
const LABEL = opt("label", new Date().toISOString().slice(11, 16).replace(":", ""));
const PASSWORD = "claimcheck-bench-password";
const TARGET_GZIP_KB = 120;

const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const dbName = `cc_bench_page_${Date.now().toString(36)}`;
const url = new URL(adminUrl);
url.pathname = `/${dbName}`;
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${dbName}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
try {
  const handle = await openDb({ kind: "postgres", url: url.toString() });
  let invoiceId: string;
  try {
    await migrateDb(handle);
    await seedActors(handle.db, 1, { password: PASSWORD, invoicesEach: 1 });
    const [user] = await handle.db.select({ id: appUser.id }).from(appUser).where(eq(appUser.email, loadActorEmail(1)));
    invoiceId = (await handle.db.select({ id: invoice.id }).from(invoice).where(eq(invoice.ownerId, user!.id)))[0]!.id;
  } finally {
    await handle.close();
  }
  const app = await startAppServer({ databaseUrl: url.toString(), name: "bench-page" });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" });
  try {
    const cookie = await signIn(app.url, loadActorEmail(1), PASSWORD);
    const [name, ...value] = cookie.split("=");
    const loads: { scripts: { url: string; sent: number; gzip: number; raw: number }[]; lcpMs: number; lcpElement: string }[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext();
      await context.addCookies([{ name: name!, value: value.join("="), url: app.url }]);
      const page = await context.newPage();
      const scripts: Promise<{ url: string; sent: number; gzip: number; raw: number }>[] = [];
      page.on("response", (res) => {
        if (res.request().resourceType() !== "script") return;
        scripts.push(
          (async () => {
            const body = await res.body();
            const sizes = await res.request().sizes();
            return { url: new URL(res.url()).pathname, sent: sizes.responseBodySize, gzip: zlib.gzipSync(body, { level: 6 }).length, raw: body.length };
          })(),
        );
      });
      await page.goto(`${app.url}/invoices/${invoiceId}`, { waitUntil: "networkidle" });
      const lcp = await page.evaluate(
        () =>
          new Promise<{ ms: number; element: string }>((resolve) => {
            new PerformanceObserver((list) => {
              const last = list.getEntries().at(-1) as PerformanceEntry & { element?: Element | null };
              resolve({ ms: last.startTime, element: last.element ? `${last.element.tagName.toLowerCase()}${last.element.id ? `#${last.element.id}` : ""}` : "?" });
            }).observe({ type: "largest-contentful-paint", buffered: true });
            setTimeout(() => resolve({ ms: NaN, element: "none" }), 3_000);
          }),
      );
      loads.push({ scripts: await Promise.all(scripts), lcpMs: lcp.ms, lcpElement: lcp.element });
      await context.close();
    }
    const first = loads[0]!;
    const kb = (b: number) => Math.round((b / 1024) * 10) / 10;
    const result = {
      at: new Date().toISOString(),
      label: LABEL,
      machine: { cpus: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100), node: process.version, chromium: browser.version() },
      page: "/invoices/[id]",
      scripts: first.scripts.length,
      first_load_js_kb: { gzip: kb(first.scripts.reduce((s, x) => s + x.gzip, 0)), sent: kb(first.scripts.reduce((s, x) => s + x.sent, 0)), raw: kb(first.scripts.reduce((s, x) => s + x.raw, 0)) },
      target_gzip_kb: TARGET_GZIP_KB,
      lcp_ms: { median: Math.round(median(loads.map((l) => l.lcpMs))), max: Math.round(Math.max(...loads.map((l) => l.lcpMs))), samples: loads.map((l) => Math.round(l.lcpMs)), element: first.lcpElement },
      chunks: first.scripts.sort((a, b) => b.gzip - a.gzip).map((s) => ({ url: s.url, gzip_kb: kb(s.gzip), raw_kb: kb(s.raw) })),
    };
    console.info(`first-load JS of /invoices/[id]: ${result.first_load_js_kb.gzip} kB gzip (${result.first_load_js_kb.raw} kB raw, ${result.scripts} scripts; target ≤ ${TARGET_GZIP_KB} kB)`);
    console.info(`LCP in Chromium (${LOADS} cold loads): median ${result.lcp_ms.median} ms, max ${result.lcp_ms.max} ms (element ${result.lcp_ms.element})`);
    for (const c of result.chunks) console.info(`  ${String(c.gzip_kb).padStart(6)} kB gzip  ${c.url}`);
    const out = path.join("bench", "results", `page-${new Date().toISOString().slice(0, 10)}-${LABEL}.json`);
    fs.writeFileSync(out, JSON.stringify(result, null, 2) + "\n");
    console.info(`wrote ${out}`);
  } finally {
    await browser.close();
    await app.stop();
  }
} finally {
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
