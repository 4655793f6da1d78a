#!/usr/bin/env bash
# Builds a scratch harness that runs the Inngest JS SDK's own dev-server tests (inngest-js at a
# tag: packages/inngest/src/test/functions/* "examples" and src/test/integration/*) UNMODIFIED
# against packages/inngest-local, served by this repository's SDK (node_modules/inngest).
# Nothing upstream is copied into this repository: the test files come out of a local git
# mirror of inngest/inngest-js into DEST, outside it.
#
#   packages/inngest-local/upstream/build.sh <inngest-js git dir> [DEST] [TAG]
#   cd DEST && node run.mjs                # examples, then integration; or: node run.mjs examples
#
# DEST defaults to /work/scratch/upstream, TAG to inngest@4.18.1. The tests hard-code the Dev
# Server at http://localhost:8288 and the example app at http://localhost:3000, so run.mjs
# starts the stand-in and the example app there (unless something already answers on 8288)
# and stops them at the end. Every import of the SDK's source (packages/inngest/src outside
# src/test) is served by the built SDK file of the same path (vitest.config.ts below).
set -euo pipefail
MIRROR=${1:?usage: build.sh <inngest-js git dir> [DEST] [TAG]}
DEST=${2:-/work/scratch/upstream}
TAG=${3:-inngest@4.18.1}
REPO=$(cd "$(dirname "$0")/../../.." && pwd)

mkdir -p "$DEST"
cd "$DEST"
rm -rf packages
git --git-dir="$MIRROR" archive "$TAG" packages/inngest/src/test packages/test-harness | tar x
echo "$TAG" > TAG

cat > package.json <<'EOF'
{ "name": "inngest-upstream-harness", "private": true, "type": "module" }
EOF
# What the upstream tests import besides the SDK (versions as upstream's package.json allows).
npm install --no-audit --no-fund vitest@3 zod@3 nock@13 node-mocks-http@1 cross-fetch@4 @total-typescript/shoehorn@0.1 @types/express@5 express@4 >/dev/null
# The SDK and OpenTelemetry are this repository's copies (one instance each, so the SDK's
# span processor attaches to the provider the tests register); the harness package is upstream's.
rm -rf node_modules/inngest node_modules/@opentelemetry node_modules/@inngest/test-harness
mkdir -p node_modules/@inngest
ln -s "$REPO/node_modules/inngest" node_modules/inngest
ln -s "$REPO/node_modules/@opentelemetry" node_modules/@opentelemetry
ln -s ../../packages/test-harness node_modules/@inngest/test-harness

cat > vitest.config.ts <<'EOF'
import fs from "node:fs";
import path from "node:path";
import { defineConfig } from "vitest/config";

const SRC = path.resolve("packages/inngest/src");
const TEST = path.join(SRC, "test");
const SDK = fs.realpathSync(path.resolve("node_modules/inngest"));

/** packages/inngest/src/<p>.ts -> node_modules/inngest/<p>.js (or <p>/index.js). */
function toSdk(abs: string): string | undefined {
  const rel = path.relative(SRC, abs).replace(/\.(ts|js)$/, "");
  for (const c of [`${rel}.js`, `${rel}/index.js`]) {
    const p = path.join(SDK, c);
    if (fs.existsSync(p)) return p;
  }
  return undefined;
}

export default defineConfig({
  plugins: [
    {
      name: "sdk-src-to-dist",
      enforce: "pre",
      resolveId(source, importer) {
        if (!importer || !source.startsWith(".")) return null;
        const abs = path.resolve(path.dirname(importer), source);
        if (!abs.startsWith(SRC + path.sep) || abs.startsWith(TEST + path.sep)) return null;
        const hit = toSdk(abs);
        if (!hit) throw new Error(`harness: no built SDK file for ${path.relative(SRC, abs)} (from ${importer})`);
        return hit;
      },
    },
  ],
  test: {
    environment: "node",
    globals: true,
    include: ["packages/inngest/src/test/functions/**/*.test.ts", "packages/inngest/src/test/integration/**/*.test.ts"],
    testTimeout: 60000,
    hookTimeout: 30000,
    fileParallelism: false,
  },
});
EOF

cat > example-app.ts <<'EOF'
// The upstream example functions served at http://localhost:3000/api/inngest, as upstream's
// example apps serve them, with the SDK in node_modules.
import { createServer } from "inngest/node";
import { functions, inngest } from "./packages/inngest/src/test/functions/index.ts";

createServer({ client: inngest, functions }).listen(3000, () => console.log("example app on http://localhost:3000/api/inngest"));
EOF

cat > run.mjs <<EOF
// node run.mjs [examples|integration|<path under packages/inngest/src/test>...]
// Prints passed/total per test file (and each test that did not pass), then the sum.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
const REPO = ${REPO@Q};
const TSX = path.join(REPO, "node_modules/.bin/tsx");
const map = { examples: "packages/inngest/src/test/functions", integration: "packages/inngest/src/test/integration" };
const args = process.argv.slice(2);
const filters = (args.length ? args : ["examples", "integration"]).map((a) => map[a] ?? path.join("packages/inngest/src/test", a));

const up = async (url) => fetch(url).then((r) => r.ok, () => false);
const started = [];
if (!(await up("http://localhost:8288/health"))) {
  const log = fs.openSync("standin.log", "w");
  // The real retry schedule at 1/15 (1 s, 2 s, 4 s… plus up to 2 s), as the figures were measured.
  started.push(spawn(TSX, ["packages/inngest-local/main.ts", "--dev", "-u", "http://localhost:3000/api/inngest", "-p", "8288", "--poll", "0", "--retry-scale", "0.0667"], { cwd: REPO, stdio: ["ignore", log, log], detached: true }));
  const alog = fs.openSync("app.log", "w");
  started.push(spawn(TSX, ["example-app.ts"], { stdio: ["ignore", alog, alog], detached: true }));
  for (let i = 0; i < 60 && !(await up("http://localhost:8288/health")); i++) await new Promise((r) => setTimeout(r, 500));
  await new Promise((r) => setTimeout(r, 3000)); // the first sync of the example app
}
try {
  const out = \`results-\${Date.now()}.json\`;
  spawnSync("node_modules/.bin/vitest", ["run", "--reporter=json", \`--outputFile=\${out}\`, ...filters], { stdio: ["ignore", "ignore", "inherit"] });
  const r = JSON.parse(fs.readFileSync(out, "utf8"));
  let p = 0, t = 0;
  for (const f of r.testResults.sort((a, b) => a.name.localeCompare(b.name))) {
    const total = f.assertionResults.length;
    const passed = f.assertionResults.filter((a) => a.status === "passed").length;
    p += passed; t += total;
    const note = total === 0 ? \`  (\${(f.message || "no tests").split("\\n")[0].slice(0, 160)})\` : "";
    console.log(\`\${String(passed).padStart(3)}/\${String(total).padEnd(3)} \${path.relative("packages/inngest/src/test", f.name)}\${note}\`);
    for (const a of f.assertionResults) if (a.status !== "passed") console.log(\`        \${a.status}: \${a.fullName.slice(0, 200)}\`);
  }
  console.log(\`TOTAL \${p}/\${t}  (\${out})\`);
} finally {
  for (const c of started) try { process.kill(-c.pid); } catch {}
}
EOF
echo "harness ready in $DEST ($TAG): cd $DEST && node run.mjs"
