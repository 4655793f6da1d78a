// `npm run bench page [-- --loads 7] [-- --floor no] [-- --label name]`: the invoice page's
// weight and paint in Chromium. The built app (tests/harness/app-server.ts) on a fresh
// PostgreSQL database with one seeded actor; Chromium (Playwright, /usr/bin/chromium) signs in
// and loads /invoices/<id> with an empty cache `--loads` times. Reports:
//   - first-load JavaScript: every script the page loads, as sent (the server's encoding)
//     and gzipped here (zlib level 6, how `next build` used to report it), summed
//   - the same figure read from the build by tools/first-load-js.ts (what `npm run build`
//     prints), and whether its list of scripts is exactly the one Chromium loaded
//   - the framework's floor: the same measurement of the smallest App Router pages this
//     Next.js makes (bench/support/floor-app.ts), unless `--floor no`
//   - LCP: the largest-contentful-paint entry (PerformanceObserver, buffered) of each load,
//     median and max
// Writes bench/results/page-<date>-<label>.json.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser } from "@playwright/test";
import { option, withOneActorDb } from "@/bench/support/bench-db";
import { startFloorApp, type FloorVariant } from "@/bench/support/floor-app";
import { startAppServer, TEST_DIST_DIR } from "@/tests/harness/app-server";
import { signIn } from "@/tests/harness/app-client";
import { firstLoadJs, gzipSize, INVOICE_PAGE, kb, TARGET_GZIP_KB } from "@/tools/first-load-js";

const LOADS = Number(option("loads", "7"));
const LABEL = option("label", new Date().toISOString().slice(11, 16).replace(":", ""));
const FLOOR = option("floor", "yes") !== "no";
const PASSWORD = "claimcheck-bench-password";

type Script = { url: string; sent: number; gzip: number; raw: number };
type Load = { scripts: Script[]; lcpMs: number; lcpElement: string };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const total = (scripts: Script[], key: "sent" | "gzip" | "raw") => kb(scripts.reduce((s, x) => s + x[key], 0));
const chunks = (scripts: Script[]) => [...scripts].sort((a, b) => b.gzip - a.gzip).map((s) => ({ url: s.url, gzip_kb: kb(s.gzip), raw_kb: kb(s.raw) }));

/** One cold load of `url` in a fresh context: the scripts it fetched and its LCP entry. */
async function loadOnce(browser: Browser, url: string, cookie?: string): Promise<Load> {
  const context = await browser.newContext();
  try {
    if (cookie) {
      const [name, ...value] = cookie.split("=");
      await context.addCookies([{ name: name!, value: value.join("="), url }]);
    }
    const page = await context.newPage();
    const scripts: Promise<Script>[] = [];
    page.on("response", (res) => {
      if (res.request().resourceType() !== "script") return;
      scripts.push(
        (async () => {
          const body = await res.body();
          const sizes = await res.request().sizes();
          return { url: new URL(res.url()).pathname, sent: sizes.responseBodySize, gzip: gzipSize(body), raw: body.length };
        })(),
      );
    });
    await page.goto(url, { waitUntil: "networkidle" });
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
    return { scripts: await Promise.all(scripts), lcpMs: lcp.ms, lcpElement: lcp.element };
  } finally {
    await context.close();
  }
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium" });
try {
  const loads = await withOneActorDb("cc_bench_page", PASSWORD, async ({ url, email, invoiceId }) => {
    const app = await startAppServer({ databaseUrl: url, name: "bench-page" });
    try {
      const cookie = await signIn(app.url, email, PASSWORD);
      const out: Load[] = [];
      for (let i = 0; i < LOADS; i++) out.push(await loadOnce(browser, `${app.url}/invoices/${invoiceId}`, cookie));
      return out;
    } finally {
      await app.stop();
    }
  });
  const first = loads[0]!;

  // What `npm run build` reports for the page, read from the same build, against what Chromium loaded.
  const built = firstLoadJs(TEST_DIST_DIR).find((p) => p.route === INVOICE_PAGE);
  if (!built) throw new Error(`${TEST_DIST_DIR} has no ${INVOICE_PAGE} page`);
  const builtFiles = new Set(built.scripts.map((s) => `/_next/${s.file}`));
  const loadedFiles = new Set(first.scripts.map((s) => s.url));

  const floor: Partial<Record<FloorVariant, { gzip_kb: number; raw_kb: number; scripts: number; chunks: ReturnType<typeof chunks> }>> = {};
  if (FLOOR) {
    for (const variant of ["empty", "link+client"] as const) {
      const app = await startFloorApp(variant);
      try {
        const { scripts } = await loadOnce(browser, `${app.url}/`);
        floor[variant] = { gzip_kb: total(scripts, "gzip"), raw_kb: total(scripts, "raw"), scripts: scripts.length, chunks: chunks(scripts) };
      } finally {
        await app.stop();
      }
    }
  }

  const result = {
    at: new Date().toISOString(),
    label: LABEL,
    machine: { cpus: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100), node: process.version, chromium: browser.version() },
    page: INVOICE_PAGE,
    scripts: first.scripts.length,
    first_load_js_kb: { gzip: total(first.scripts, "gzip"), sent: total(first.scripts, "sent"), raw: total(first.scripts, "raw") },
    target_gzip_kb: TARGET_GZIP_KB,
    build_report: {
      gzip_kb: kb(built.gzip),
      scripts: built.scripts.length,
      same_scripts_as_chromium: builtFiles.size === loadedFiles.size && [...builtFiles].every((f) => loadedFiles.has(f)),
      only_in_build: [...builtFiles].filter((f) => !loadedFiles.has(f)),
      only_in_chromium: [...loadedFiles].filter((f) => !builtFiles.has(f)),
    },
    floor,
    lcp_ms: { median: Math.round(median(loads.map((l) => l.lcpMs))), max: Math.round(Math.max(...loads.map((l) => l.lcpMs))), samples: loads.map((l) => Math.round(l.lcpMs)), element: first.lcpElement },
    chunks: chunks(first.scripts),
  };
  console.info(`first-load JS of ${INVOICE_PAGE}: ${result.first_load_js_kb.gzip} kB gzip (${result.first_load_js_kb.raw} kB raw, ${result.scripts} scripts; target ≤ ${TARGET_GZIP_KB} kB)`);
  for (const c of result.chunks) console.info(`  ${String(c.gzip_kb).padStart(6)} kB gzip  ${c.url}`);
  const { build_report: b } = result;
  console.info(
    `the build's report (tools/first-load-js.ts): ${b.gzip_kb} kB in ${b.scripts} scripts, ${b.same_scripts_as_chromium ? "the same scripts Chromium loaded" : `NOT the scripts Chromium loaded (only in the build: ${b.only_in_build.join(", ") || "none"}; only in Chromium: ${b.only_in_chromium.join(", ") || "none"})`}`,
  );
  for (const [variant, f] of Object.entries(floor)) console.info(`floor, ${variant} App Router page on this Next.js: ${f.gzip_kb} kB gzip (${f.scripts} scripts)`);
  console.info(`LCP in Chromium (${LOADS} cold loads): median ${result.lcp_ms.median} ms, max ${result.lcp_ms.max} ms (element ${result.lcp_ms.element})`);
  const out = path.join("bench", "results", `page-${new Date().toISOString().slice(0, 10)}-${LABEL}.json`);
  fs.writeFileSync(out, JSON.stringify(result, null, 2) + "\n");
  console.info(`wrote ${out}`);
} finally {
  await browser.close();
}
