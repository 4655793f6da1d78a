// A reload loop, a silent first compile and a dead inngest-cli stub (the outside review of
// 2026-12-01): `npm run dev` as a newcomer meets it, several times over, each in a fresh
// clone (no .next, no .data, no next-env.d.ts) with no DATABASE_URL, so the embedded
// PGlite writes its .data/ inside the project tree while Next watches it.
//   the sign-in page loads once and stays (a reload loop, GET /sign-in ~3×/s with
//        Turbopack's `reloadPage: "HMR hash mismatch"`, was seen on 2 of 5 starts); signing in works.
//   the first page is compiled before the banner, saying so, so the newcomer does not wait
//        on a silent first request.
//   a stub `inngest-cli` left in node_modules/.bin by `npm ci --ignore-scripts` (it exits 1)
//        does not stop dev: it falls back to the local stand-in and says why.
// Each start compiles from nothing: about 1-2 minutes a start on a quiet 2-core machine.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Page, WebSocket } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { freshCheckout, startDevServer, type DevServer } from "./support/dev-server";
import { ALICE, DEMO_PASSWORD } from "./support/settings";

const STARTS = Number(process.env.E2E_DEV_STARTS ?? 3);
/** Stop-and-start cycles in one checkout for the reload loop's test. */
const RESTARTS = Number(process.env.E2E_DEV_RESTARTS ?? 2);
/** How long the page must stay without reloading once its JavaScript runs. */
const STABLE_MS = 15_000;

test.setTimeout(STARTS * 8 * 60_000);

// What inngest-cli 1.45.1's bin/inngest does when its postinstall (the binary download) was skipped.
const INNGEST_CLI_STUB = `#!/usr/bin/env node
console.error("Error: Inngest CLI binary not found.");
console.error("This happened because install scripts were skipped.");
process.exit(1);
`;

async function javaScriptRunning(page: Page, sockets: WebSocket[]) {
  await page.waitForFunction(() => Boolean((window as unknown as { next?: { version?: string } }).next?.version), null, { timeout: 180_000 });
  await expect
    .poll(() => sockets.filter((s) => /\/_next\/(webpack-)?hmr/.test(s.url()) && !s.isClosed()).length, { timeout: 60_000 })
    .toBeGreaterThan(0);
}

test(`npm run dev from a fresh clone, ${STARTS} starts on PGlite: the sign-in page loads once and stays, sign-in works; first page warmed; a stub inngest-cli falls back`, async ({
  newContext,
}) => {
  const figures: string[] = [];
  const clones: ReturnType<typeof freshCheckout>[] = [];
  try {
    for (let i = 1; i <= STARTS; i++) {
      const clone = freshCheckout();
      clones.push(clone);
      const withStub = i === STARTS;
      if (withStub) {
        const stub = path.join(clone.dir, "node_modules", ".bin", "inngest-cli");
        fs.rmSync(stub, { force: true }); // a new file, never one hard-linked to the real tree
        fs.writeFileSync(stub, INNGEST_CLI_STUB, { mode: 0o755 });
      }
      const context = await newContext();
      const page = await context.newPage();
      let dev: DevServer | undefined;
      try {
        const started = Date.now();
        dev = await startDevServer({ bannerTimeoutMs: 6 * 60_000, checkout: clone.dir, logName: `npm-run-dev-fresh-${i}.log` });
        const bannerAt = Date.now();
        const out = dev.output().replace(/\x1b\[[0-9;]*m/g, ""); // Next colours its request lines
        const bannerIndex = out.indexOf("Claimcheck is running");

        // The first page was requested, and said so, before the banner.
        const warming = out.search(/\[dev\] compiling the first page/);
        expect.soft(warming, `start ${i}: dev says it compiles the first page before the banner`).toBeGreaterThan(-1);
        expect.soft(warming, `start ${i}: ... before the banner`).toBeLessThan(bannerIndex);
        const firstSignIn = out.search(/ GET \/sign-in 200 /);
        expect.soft(firstSignIn, `start ${i}: /sign-in was compiled before the banner`).toBeGreaterThan(-1);
        expect.soft(firstSignIn, `start ${i}: ... before the banner`).toBeLessThan(bannerIndex);

        if (withStub) {
          // The stub was tried, refused, and the stand-in runs instead.
          expect.soft(out).toMatch(/\[dev\] inngest-cli .*does not run.*local stand-in/);
          expect.soft(out).toContain("[inngest-local] listening on");
          expect.soft(out).not.toContain("inngest-cli dev exited");
        }

        // The reload loop: one load, and it stays.
        const sockets: WebSocket[] = [];
        const reloadOrders: string[] = [];
        page.on("websocket", (ws) => {
          sockets.push(ws);
          ws.on("framereceived", (f) => {
            const text = typeof f.payload === "string" ? f.payload : f.payload.toString("utf8");
            if (/reloadPage|HMR hash mismatch/.test(text)) reloadOrders.push(text.slice(0, 200));
          });
        });
        let documentLoads = 0;
        page.on("request", (r) => {
          if (r.isNavigationRequest() && r.frame() === page.mainFrame()) documentLoads++;
        });
        await page.goto(`${dev.url}/sign-in`, { timeout: 240_000 });
        const firstPageMs = Date.now() - bannerAt;
        await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
        await javaScriptRunning(page, sockets);
        await page.waitForTimeout(STABLE_MS);
        expect(reloadOrders, `start ${i}: the dev server ordered no reload`).toEqual([]);
        expect(documentLoads, `start ${i}: /sign-in loaded once in ${STABLE_MS / 1000} s after its JavaScript ran`).toBe(1);

        await page.getByLabel("Email").fill(ALICE);
        await page.getByLabel("Password").fill(DEMO_PASSWORD);
        await page.getByRole("button", { name: "Sign in", exact: true }).click();
        await expect(page).toHaveURL(`${dev.url}/invoices`, { timeout: 240_000 });
        await expect(page.getByRole("link", { name: /INV-2026-0142/ })).toBeVisible({ timeout: 60_000 });
        figures.push(
          `start ${i}${withStub ? " (stub inngest-cli)" : ""}: banner ${((bannerAt - started) / 1000).toFixed(1)} s after start, ` +
            `first page ${(firstPageMs / 1000).toFixed(1)} s after the banner, signed in ${((Date.now() - bannerAt) / 1000).toFixed(1)} s after it`,
        );
      } finally {
        await page.close();
        await context.close();
        await dev?.stop();
      }
    }
  } finally {
    console.info(figures.join("\n"));
    for (const clone of clones) {
      try {
        clone.remove();
      } catch (error) {
        console.warn(`could not remove ${clone.dir}: ${String(error)}`);
      }
    }
  }
});

// The reload loop itself: a start in the checkout of an earlier one that compiled pages and was
// stopped (Ctrl-C) before Turbopack had finished writing its cache to .next/dev/cache (10-20 s on
// this machine). With that cache, every new HMR subscription was answered with an update: the tab
// reloaded on each one ("HMR hash mismatch"), GET /sign-in 2-3 times a second for as long as dev
// ran. Reproduced 3 times in 3 this way (docs/notes/dev-reload-loop.md); a fresh clone never loops.
test(`npm run dev restarted in the same checkout after a Ctrl-C that cut Turbopack's cache write, ${RESTARTS} times: /sign-in loads once and stays`, async ({
  newContext,
}) => {
  test.setTimeout((RESTARTS * 2 + 1) * 6 * 60_000);
  const clone = freshCheckout();
  let dev: DevServer | undefined;
  try {
    // A first start that leaves a whole cache: stopped once Turbopack says it has written it
    // (it never does with the cache off; then after 90 s).
    dev = await startDevServer({ bannerTimeoutMs: 6 * 60_000, checkout: clone.dir, logName: "npm-run-dev-cache.log" });
    await expect.poll(() => /Finished writing to filesystem cache/.test(dev!.output()), { timeout: 90_000 }).toBe(true).catch(() => {});
    await dev.stop();
    for (let i = 1; i <= RESTARTS; i++) {
      // A run that compiles pages beyond /sign-in, stopped a moment later, as a newcomer looking round would.
      dev = await startDevServer({ bannerTimeoutMs: 6 * 60_000, checkout: clone.dir, logName: `npm-run-dev-cut-${i}.log` });
      for (const page of ["/invoices", "/", "/no-such-page"]) await fetch(`${dev.url}${page}`, { redirect: "manual", signal: AbortSignal.timeout(240_000) }).then((r) => r.arrayBuffer());
      await dev.stop();

      dev = await startDevServer({ bannerTimeoutMs: 6 * 60_000, checkout: clone.dir, logName: `npm-run-dev-after-cut-${i}.log` });
      const context = await newContext();
      const page = await context.newPage();
      const sockets: WebSocket[] = [];
      const reloadOrders: string[] = [];
      page.on("websocket", (ws) => {
        sockets.push(ws);
        ws.on("framereceived", (f) => {
          const text = typeof f.payload === "string" ? f.payload : f.payload.toString("utf8");
          if (/reloadPage|HMR hash mismatch/.test(text)) reloadOrders.push(text.slice(0, 200));
        });
      });
      let documentLoads = 0;
      page.on("request", (r) => {
        if (r.isNavigationRequest() && r.frame() === page.mainFrame()) documentLoads++;
      });
      await page.goto(`${dev.url}/sign-in`, { timeout: 240_000 });
      await javaScriptRunning(page, sockets);
      await page.waitForTimeout(STABLE_MS);
      const signInRequests = (dev.output().replace(/\x1b\[[0-9;]*m/g, "").match(/ GET \/sign-in /g) ?? []).length;
      expect(reloadOrders, `restart ${i}: the dev server ordered no reload`).toEqual([]);
      expect(documentLoads, `restart ${i}: /sign-in loaded once in ${STABLE_MS / 1000} s (GET /sign-in in the log: ${signInRequests})`).toBe(1);
      await context.close();
      await dev.stop();
      dev = undefined;
    }
  } finally {
    await dev?.stop();
    clone.remove();
  }
});

/**
 * The processes running in `dir` (next dev, next-server, the Inngest server, dev's watchdog): by
 * their working folder, since next-server renames itself ("next-server (v16…)") out of its args.
 */
function processesOf(dir: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) continue;
      found.push(`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim()}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** The pid of tools/dev.ts itself under npm (`npm run dev` runs `sh -c 'node --import tsx tools/dev.ts'`). */
function runnerPid(npmPid: number): number {
  const table = spawnSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" }).stdout ?? "";
  const rows = table.split("\n").map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)).filter((m) => m !== null);
  const below = new Set([npmPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [, pid, ppid] of rows) {
      if (!below.has(Number(ppid)) || below.has(Number(pid))) continue;
      below.add(Number(pid));
      grew = true;
    }
  }
  const runner = rows.find(([, pid, , args]) => below.has(Number(pid)) && /^\S*node .*tools\/dev\.ts/.test(args!));
  if (!runner) throw new Error(`no tools/dev.ts below npm ${npmPid}`);
  return Number(runner[1]);
}

async function leftRunning(dir: string, timeoutMs = 20_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && processesOf(dir).length > 0) await new Promise((r) => setTimeout(r, 250));
  return processesOf(dir);
}

// The starts after the first: a reviewer's dev ended by `kill -9` or a closed terminal (SIGHUP)
// rather than Ctrl-C. Its children run in process groups of their own, so a killed runner left
// next-server holding the port and .data/, and the next start could not open the database.
test("npm run dev killed outright (kill -9) or hung up (SIGHUP) leaves nothing running; the next start in that checkout works and does not reload", async ({
  newContext,
}) => {
  const clone = freshCheckout();
  let dev: DevServer | undefined;
  try {
    dev = await startDevServer({ bannerTimeoutMs: 6 * 60_000, checkout: clone.dir, logName: "npm-run-dev-kill-9.log" });
    expect(processesOf(clone.dir).length, "dev's processes are found by their folder").toBeGreaterThan(0);
    process.kill(runnerPid(dev.pid), "SIGKILL");
    expect(await leftRunning(clone.dir), "after kill -9 of tools/dev.ts nothing of it runs").toEqual([]);
    await dev.stop();

    // The next start in the same checkout, with the previous .next and .data/.
    dev = await startDevServer({ bannerTimeoutMs: 6 * 60_000, checkout: clone.dir, logName: "npm-run-dev-after-kill-9.log" });
    const context = await newContext();
    const page = await context.newPage();
    const sockets: WebSocket[] = [];
    page.on("websocket", (ws) => sockets.push(ws));
    let documentLoads = 0;
    page.on("request", (r) => {
      if (r.isNavigationRequest() && r.frame() === page.mainFrame()) documentLoads++;
    });
    await page.goto(`${dev.url}/sign-in`, { timeout: 240_000 });
    await javaScriptRunning(page, sockets);
    await page.waitForTimeout(STABLE_MS);
    expect(documentLoads, `/sign-in loaded once in ${STABLE_MS / 1000} s`).toBe(1);
    await context.close();

    process.kill(runnerPid(dev.pid), "SIGHUP");
    expect(await leftRunning(clone.dir), "after SIGHUP to tools/dev.ts nothing of it runs").toEqual([]);
  } finally {
    await dev?.stop();
    // Whatever is left is this test's own: stop it by pid before removing the folder.
    for (const line of processesOf(clone.dir)) {
      try {
        process.kill(Number(line.trim().split(/\s+/)[0]), "SIGKILL");
      } catch {
        // already gone
      }
    }
    clone.remove();
  }
});
