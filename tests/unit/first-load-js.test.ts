// What `npm run build` reports as a page's first-load JavaScript (tools/first-load-js.ts), on
// a build laid out as Next 16 writes one. That this list is the one Chromium loads is checked
// against a real build by `npm run bench page`.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { firstLoadJs } from "@/tools/first-load-js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function write(dir: string, file: string, text: string) {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), text);
}

/** A build with the runtime (a, b), the invoice page's components (c, d), a polyfill and CSS. */
function fakeBuild(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cc-first-load-"));
  dirs.push(dir);
  write(dir, "BUILD_ID", "test");
  for (const [name, size] of [
    ["a", 3000],
    ["b", 1000],
    ["c", 500],
    ["d", 200],
    ["poly", 9000],
  ] as const) {
    write(dir, `static/chunks/${name}.js`, `/*${name}*/` + "x".repeat(size));
  }
  write(dir, "static/chunks/s.css", "body{}");
  write(
    dir,
    "build-manifest.json",
    JSON.stringify({
      polyfillFiles: ["static/chunks/poly.js"],
      rootMainFiles: ["static/chunks/a.js"],
      pagesChunkGroupBootstrapParams: { "/invoices/[id]/page": { otherChunks: ["static/chunks/a.js", "static/chunks/b.js"] } },
    }),
  );
  write(
    dir,
    "app-path-routes-manifest.json",
    JSON.stringify({ "/invoices/[id]/page": "/invoices/[id]", "/api/leases/route": "/api/leases" }),
  );
  const manifest = {
    clientModules: {},
    entryJSFiles: {
      "[project]/app/layout": ["static/chunks/c.js"],
      "[project]/app/invoices/[id]/page": ["static/chunks/c.js", "static/chunks/d.js"],
    },
    entryCSSFiles: { "[project]/app/layout": [{ path: "static/chunks/s.css" }] },
  };
  write(
    dir,
    "server/app/invoices/[id]/page_client-reference-manifest.js",
    `globalThis.__RSC_MANIFEST = globalThis.__RSC_MANIFEST || {};\nglobalThis.__RSC_MANIFEST["/invoices/[id]/page"] = ${JSON.stringify(manifest)};\n`,
  );
  return dir;
}

describe("a page's first-load JavaScript, from the build", () => {
  it("is the runtime and the page's component chunks, each once, gzipped: no polyfills, CSS or route handlers", () => {
    const dir = fakeBuild();
    const pages = firstLoadJs(dir);
    expect(pages.map((p) => p.route)).toEqual(["/invoices/[id]"]);
    const [page] = pages;
    expect(page!.scripts.map((s) => [s.file, s.part]).sort()).toEqual([
      ["static/chunks/a.js", "bootstrap"],
      ["static/chunks/b.js", "bootstrap"],
      ["static/chunks/c.js", "components"],
      ["static/chunks/d.js", "components"],
    ]);
    const gzip = (name: string) => zlib.gzipSync(fs.readFileSync(path.join(dir, `static/chunks/${name}.js`)), { level: 6 }).length;
    expect(page!.gzip).toBe(gzip("a") + gzip("b") + gzip("c") + gzip("d"));
    expect(page!.raw).toBe(3000 + 1000 + 500 + 200 + 4 * "/*a*/".length);
  });

  it("says so when there is no build", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cc-first-load-"));
    dirs.push(dir);
    expect(() => firstLoadJs(dir)).toThrow(/no production build/);
  });
});
