// The framework's floor for `npm run bench page`: the smallest App Router apps this Next.js
// and React can make, built and served in production the way the app is, so the page's
// first-load JavaScript can be set against what any page on this version must load.
//   empty        a root layout and a page with one heading: no client code of ours at all
//   link+client  the same with one next/link and one client component (a useState button):
//                the least a page that navigates and does anything in the browser loads
// Each is written to a fresh folder under the system's temporary directory (removed after),
// with this checkout's node_modules linked in, and built with `next build` (Turbopack).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, ROOT } from "@/tests/harness/app-server";

export type FloorVariant = "empty" | "link+client";

const NEXT_BIN = path.join(ROOT, "node_modules", "next", "dist", "bin", "next");

const LAYOUT = `export default function RootLayout({ children }) {
  return (<html lang="en"><body>{children}</body></html>);
}
`;
const PAGES: Record<FloorVariant, Record<string, string>> = {
  empty: { "page.jsx": `export default function Page() { return <h1>Floor</h1>; }\n` },
  "link+client": {
    "page.jsx": `import Link from "next/link";
import { Counter } from "./counter";
export default function Page() { return (<><h1>Floor</h1><Link href="/">Home</Link><Counter /></>); }
`,
    "counter.jsx": `"use client";
import { useState } from "react";
export function Counter() { const [n, setN] = useState(0); return <button onClick={() => setN(n + 1)}>{n}</button>; }
`,
  },
};

/** The deepest folder holding both paths: Turbopack compiles only files under its root. */
function commonRoot(a: string, b: string): string {
  const x = a.split(path.sep);
  const y = b.split(path.sep);
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return x.slice(0, i).join(path.sep) || path.sep;
}

function run(child: ChildProcess, what: string): Promise<void> {
  const output: string[] = [];
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${what} failed (${code}):\n${output.join("").slice(-3000)}`))));
  });
}

/** Builds the floor app `variant` and serves it with `next start`; `stop()` ends the server and removes the folder. */
export async function startFloorApp(variant: FloorVariant): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cc-floor-"));
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" } as NodeJS.ProcessEnv;
  delete env.NEXT_DIST_DIR;
  let server: ChildProcess | undefined;
  const stop = async () => {
    if (server?.pid && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server!.once("exit", resolve));
      process.kill(-server.pid, "SIGTERM");
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    fs.mkdirSync(path.join(dir, "app"));
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: `floor-${variant.replace("+", "-")}`, private: true, type: "module" }));
    fs.writeFileSync(path.join(dir, "next.config.mjs"), `export default { turbopack: { root: ${JSON.stringify(commonRoot(dir, ROOT))} } };\n`);
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
    fs.writeFileSync(path.join(dir, "app", "layout.jsx"), LAYOUT);
    for (const [name, text] of Object.entries(PAGES[variant])) fs.writeFileSync(path.join(dir, "app", name), text);
    await run(spawn(process.execPath, [NEXT_BIN, "build"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] }), `next build of the ${variant} floor app`);
    const port = await freePort();
    server = spawn(process.execPath, [NEXT_BIN, "start", "-p", String(port), "-H", "127.0.0.1"], { cwd: dir, env, detached: true, stdio: "ignore" });
    const url = `http://127.0.0.1:${port}`;
    for (let tries = 0; ; tries++) {
      try {
        if ((await fetch(url)).ok) break;
      } catch {
        // not listening yet
      }
      if (tries > 150 || server.exitCode !== null) throw new Error(`the ${variant} floor app did not start`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
