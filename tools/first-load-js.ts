// Each page's first-load JavaScript, read from a production build: the scripts its HTML
// makes the browser load before the page runs, gzipped (zlib level 6, as `next build` used to
// report them) and summed. `next build` on Next 16 prints no sizes (Turbopack removed them,
// and `experimental.gzipSize` is a no-op), so `npm run build` runs this after it (postbuild),
// and `npm run size [-- --dist-dir .next-test] [-- --files]` reads an existing build.
//
// A page's scripts are the App Router's bootstrap (build-manifest.json: rootMainFiles, and the
// page's pagesChunkGroupBootstrapParams) and the chunks of every client component its
// segments render (the page's client reference manifest: entryJSFiles of the root layout, the
// page, and the error, not-found and global-error boundaries around it). The nomodule
// polyfills are left out: a browser that runs modules never fetches them. `npm run bench page`
// checks this list against the scripts Chromium actually loads (bench/page.ts).
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

/** The performance target for the invoice page's first-load JavaScript, gzip (decision 0042). */
export const INVOICE_PAGE = "/invoices/[id]";
export const TARGET_GZIP_KB = 120;

/** `bootstrap`: the React and Next.js runtime every page loads; `components`: the client components its segments render. */
export type Script = { file: string; raw: number; gzip: number; part: "bootstrap" | "components" };
export type PageWeight = { route: string; scripts: Script[]; raw: number; gzip: number };

export const kb = (bytes: number) => Math.round((bytes / 1024) * 10) / 10;
export const gzipSize = (body: Buffer) => zlib.gzipSync(body, { level: 6 }).length;

type BuildManifest = {
  rootMainFiles: string[];
  pagesChunkGroupBootstrapParams?: Record<string, { otherChunks?: string[] }>;
};

/** The first-load JavaScript of every App Router page in the build at `distDir`, largest first. */
export function firstLoadJs(distDir: string): PageWeight[] {
  const read = (...parts: string[]) => fs.readFileSync(path.join(distDir, ...parts), "utf8");
  if (!fs.existsSync(path.join(distDir, "BUILD_ID"))) throw new Error(`${distDir} holds no production build (run \`next build\` first)`);
  const build = JSON.parse(read("build-manifest.json")) as BuildManifest;
  const appPaths = JSON.parse(read("app-path-routes-manifest.json")) as Record<string, string>;
  const sizes = new Map<string, { raw: number; gzip: number }>();
  const sized = (file: string) => {
    let size = sizes.get(file);
    if (!size) {
      const body = fs.readFileSync(path.join(distDir, file));
      sizes.set(file, (size = { raw: body.length, gzip: gzipSize(body) }));
    }
    return size;
  };
  const pages: PageWeight[] = [];
  for (const [entry, route] of Object.entries(appPaths)) {
    if (!entry.endsWith("/page")) continue; // route handlers ship no JavaScript
    const manifestFile = path.join(distDir, "server", "app", `${entry}_client-reference-manifest.js`);
    if (!fs.existsSync(manifestFile)) continue;
    // The manifest is a script that assigns globalThis.__RSC_MANIFEST[entry]; run it in an empty context.
    const context: { __RSC_MANIFEST?: Record<string, { entryJSFiles?: Record<string, string[]> }> } = {};
    vm.runInNewContext(fs.readFileSync(manifestFile, "utf8"), context, { filename: manifestFile });
    const entryJs = context.__RSC_MANIFEST?.[entry]?.entryJSFiles;
    if (!entryJs) throw new Error(`${manifestFile}: no entryJSFiles for ${entry} (has the manifest's shape changed?)`);
    const bootstrap = new Set([...build.rootMainFiles, ...(build.pagesChunkGroupBootstrapParams?.[entry]?.otherChunks ?? [])]);
    const files = new Set([...bootstrap, ...Object.values(entryJs).flat()]);
    const scripts: Script[] = [...files]
      .filter((f) => f.endsWith(".js"))
      .map((file) => ({ file, ...sized(file), part: bootstrap.has(file) ? "bootstrap" : "components" }));
    pages.push({
      route,
      scripts: scripts.sort((a, b) => b.gzip - a.gzip),
      raw: scripts.reduce((s, x) => s + x.raw, 0),
      gzip: scripts.reduce((s, x) => s + x.gzip, 0),
    });
  }
  return pages.sort((a, b) => b.gzip - a.gzip || a.route.localeCompare(b.route));
}

function report(distDir: string, withFiles: boolean): void {
  const pages = firstLoadJs(distDir);
  const width = Math.max(...pages.map((p) => p.route.length), 5);
  console.info(`First-load JavaScript per page (${distDir}; gzip level 6, the scripts a browser that runs modules loads):`);
  for (const page of pages) {
    const components = page.scripts.filter((s) => s.part === "components").reduce((sum, s) => sum + s.gzip, 0);
    const verdict = kb(page.gzip) <= TARGET_GZIP_KB ? "met" : `over by ${kb(page.gzip - TARGET_GZIP_KB * 1024)} kB`;
    const mark = page.route === INVOICE_PAGE ? `  target ≤ ${TARGET_GZIP_KB} kB: ${verdict}` : "";
    console.info(
      `  ${page.route.padEnd(width)}  ${String(kb(page.gzip)).padStart(6)} kB  (${page.scripts.length} scripts; runtime ${kb(page.gzip - components)} kB, components ${kb(components)} kB)${mark}`,
    );
    if (withFiles || page.route === INVOICE_PAGE) {
      for (const s of page.scripts) console.info(`  ${"".padEnd(width)}    ${String(kb(s.gzip)).padStart(6)} kB  ${s.file}  (${s.part})`);
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--dist-dir");
  const distDir = at >= 0 && args[at + 1] ? args[at + 1]! : process.env.NEXT_DIST_DIR || ".next";
  try {
    report(distDir, args.includes("--files"));
  } catch (error) {
    console.error(`first-load-js: ${(error as Error).message}`);
    process.exit(1);
  }
}
