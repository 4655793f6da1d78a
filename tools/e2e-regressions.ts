// `npm run test:e2e-regressions [-- NN ...]`: proof that each walkthrough scenario can fail.
// For every patch in tests/e2e/regressions/ (each brings back, on today's code, the behaviour
// one observation of the new-user walkthrough described on e91648d), this makes a throwaway git worktree of
// HEAD under the OS temp dir, hard-links node_modules into it, applies the patch, runs exactly
// the scenarios mapped to it below (one Playwright run: one build, then the specs), and counts
// it as expected only if every one of those scenarios FAILS. Then the worktree is removed.
//
// A patch that no longer applies, a build that breaks, or a mapped scenario that did not run
// is an error, not a pass. A scenario that still passes with its fix reverted is a finding:
// the scenario does not test what it claims.
//
// Manual/periodic, not part of `npm test`: each patch costs a production build (3-4 min here).
// Tests what is committed (HEAD), not the working tree; the patches are read from this checkout.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PATCH_DIR = path.join(ROOT, "tests", "e2e", "regressions");

type Scenario = { spec: string; title: string };
type Regression = { id: string; observation: string; scenarios: Scenario[] };

/** Patch NN-*.patch → the observation it brings back and the scenarios that must then fail. */
const REGRESSIONS: Regression[] = [
  {
    id: "01",
    observation: "1. dev at the printed 127.0.0.1 address: no JavaScript",
    scenarios: [{ spec: "dev-server.spec.ts", title: "npm run dev: at the printed address" }],
  },
  {
    id: "02",
    observation: "2. buttons need JavaScript",
    scenarios: [
      { spec: "invoice-no-js.spec.ts", title: "with JavaScript off: Summarize, Cancel, Discard, Apply and Save work as plain form posts" },
      { spec: "invoice-no-js.spec.ts", title: "with JavaScript off, a refusal is shown in the page after the redirect, once" },
    ],
  },
  {
    id: "03",
    observation: "3. an edit leaves the proposal 'Ready for review'",
    scenarios: [
      { spec: "invoice-page.spec.ts", title: "an edit withdraws the waiting proposal at once, by push" },
      { spec: "invoice-page.spec.ts", title: "an edit while the summary is being written withdraws it too" },
      { spec: "races.spec.ts", title: "invoice edited in another tab while a proposal waits" },
    ],
  },
  {
    id: "04",
    observation: "4. no way to stop a generation",
    scenarios: [{ spec: "invoice-page.spec.ts", title: "Cancel while the summary is being written" }],
  },
  {
    id: "05",
    observation: "5. sign-out: no question, no confirmation, no return",
    scenarios: [
      { spec: "sign-out-return.spec.ts", title: "sign-out with a summary waiting asks first" },
      { spec: "sign-out-return.spec.ts", title: "a summary that arrives after the question was answered is not discarded unasked" },
      { spec: "sign-out-return.spec.ts", title: "sign-out with a summary waiting shows a confirmation page" },
      { spec: "sign-out-return.spec.ts", title: "a signed-out visit to an invoice comes back to it after signing in" },
    ],
  },
  {
    id: "06",
    observation: "6. history: latest attempt only, UTC clock times, no names",
    scenarios: [{ spec: "invoice-page.spec.ts", title: "history: every attempt, newest first, paged" }],
  },
  {
    id: "07",
    observation: "7. three date formats on one page",
    scenarios: [
      { spec: "invoice-page.spec.ts", title: "one date format, the viewer's, everywhere on the page" },
      { spec: "invoice-page.spec.ts", title: "the same page in another locale" },
    ],
  },
  {
    id: "08",
    observation: "8. list says only summarized / no summary yet",
    scenarios: [
      { spec: "invoice-list.spec.ts", title: "each invoice says where its summary stands" },
      { spec: "invoice-list.spec.ts", title: "the list filters and sorts by summary state and due date" },
      { spec: "invoice-list.spec.ts", title: "the list follows a summary live" },
    ],
  },
  {
    id: "09",
    observation: "9. 375 px: Apply below the first screen",
    scenarios: [{ spec: "invoice-page.spec.ts", title: "at 375 px the lease state, the countdown, Apply and Discard" }],
  },
  {
    id: "10",
    observation: "10. developer words on screen",
    scenarios: [
      { spec: "invoice-page.spec.ts", title: "words a finance user reads" },
      { spec: "finance-words.spec.ts", title: "sign-in, sign-out and the invoice list speak a finance user's words" },
      // The demo logins' words (SEED_PASSWORD) are shown in development only.
      { spec: "dev-server.spec.ts", title: "npm run dev: at the printed address" },
    ],
  },
  {
    id: "11",
    observation: "11. polling never returns to push; late expiry",
    scenarios: [
      { spec: "invoice-page.spec.ts", title: "push recovers: after falling back to polling" },
      { spec: "invoice-page.spec.ts", title: "the deadline reaches the page within 2 s even when the stream has gone quiet" },
    ],
  },
];

type Row = { observation: string; scenario: string; result: string; line: string };

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(cmd, args, { cwd, env, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

function mustRun(cmd: string, args: string[], cwd: string) {
  const result = run(cmd, args, cwd);
  if (result.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed (${result.status}):\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "");

type JsonError = { message?: string; stack?: string; location?: { file: string; line: number; column: number } };
type JsonTest = { status: string; results: { status: string; errors?: JsonError[]; error?: JsonError }[] };
type JsonSpec = { title: string; file: string; tests: JsonTest[] };
type JsonSuite = { title: string; specs?: JsonSpec[]; suites?: JsonSuite[] };
type JsonReport = { suites?: JsonSuite[]; errors?: JsonError[] };

function specsOf(suites: JsonSuite[] = [], parents: string[] = []): { titlePath: string; spec: JsonSpec }[] {
  return suites.flatMap((suite) => [
    ...(suite.specs ?? []).map((spec) => ({ titlePath: [...parents, suite.title, spec.title].join(" › "), spec })),
    ...specsOf(suite.suites, [...parents, suite.title]),
  ]);
}

/** The statement that ends on `line` (1-based): back to the line where its `expect` starts. */
function statementAt(file: string, line: number): string {
  if (!fs.existsSync(file)) return "";
  const lines = fs.readFileSync(file, "utf8").split("\n");
  let start = line - 1;
  for (let i = line - 1; i >= Math.max(0, line - 6); i--) {
    if (/\bexpect\b|\bawait\b/.test(lines[i]!)) {
      start = i;
      break;
    }
  }
  return lines.slice(start, line).map((l) => l.trim()).join(" ");
}

/**
 * `spec:line  statement` where the first error of a failed test was thrown, with the test's
 * own line when the assertion is in a helper, and the first line of the error message.
 */
function firstFailure(worktree: string, test: JsonTest): string {
  const errors = test.results.flatMap((r) => r.errors ?? (r.error ? [r.error] : []));
  // A test timeout has no location; the action it interrupted (the next error) has one.
  const error = errors.find((e) => e.location) ?? errors[0];
  if (!error) return "(no error recorded)";
  const firstLine = (e: JsonError) => stripAnsi(e.message ?? "").split("\n").find((l) => l.trim()) ?? "";
  // A custom message hides what was found: the received value says it.
  const received = stripAnsi(error.message ?? "").split("\n").find((l) => /^Received( string)?:/.test(l.trim()))?.trim();
  const message = [...new Set([errors[0]!, error].map(firstLine)), ...(received ? [received] : [])].map((m) => m.slice(0, 120)).join(" / ");
  const location = error.location;
  if (!location) return message;
  const file = path.relative(worktree, location.file);
  // The JSON report's `errors` carry no stack of their own; their message ends with it.
  const trace = stripAnsi(`${error.stack ?? ""}\n${error.message ?? ""}`);
  const frames = [...trace.matchAll(/(tests\/e2e\/[\w./-]+\.spec\.ts):(\d+):\d+/g)];
  // An assertion in a helper (support/pages.ts, or a function in the spec): the test's own line too.
  const caller = frames.find((f) => !(f[1] === file && Number(f[2]) === location.line));
  const from = caller ? ` (from ${caller[1] === file ? "line " : `${caller[1]}:`}${caller[2]})` : "";
  return `${file}:${location.line}${from}  ${statementAt(location.file, location.line)}  — ${message}`;
}

function runRegression(regression: Regression): Row[] {
  const patches = fs.readdirSync(PATCH_DIR).filter((f) => f.startsWith(`${regression.id}-`) && f.endsWith(".patch"));
  if (patches.length !== 1) throw new Error(`expected one tests/e2e/regressions/${regression.id}-*.patch, found ${patches.length}`);
  const patch = path.join(PATCH_DIR, patches[0]!);
  const worktree = fs.mkdtempSync(path.join(os.tmpdir(), `claimcheck-regression-${regression.id}-`));
  const errorRows = (result: string, line: string) =>
    regression.scenarios.map((s) => ({ observation: regression.observation, scenario: `${s.spec}: ${s.title}`, result, line }));
  try {
    mustRun("git", ["worktree", "add", "--detach", "--quiet", worktree, "HEAD"], ROOT);
    // Hard links: a copy in a second, not the 1 GB node_modules again.
    mustRun("cp", ["-al", path.join(ROOT, "node_modules"), path.join(worktree, "node_modules")], ROOT);
    const check = run("git", ["apply", "--check", patch], worktree);
    if (check.status !== 0) return errorRows("ERROR: patch does not apply", stripAnsi(check.stderr).trim().split("\n")[0] ?? "");
    mustRun("git", ["apply", patch], worktree);
    console.log(`\n== ${patches[0]}: applied in ${worktree}; building and running ${regression.scenarios.length} scenario(s)`);

    const files = [...new Set(regression.scenarios.map((s) => path.join("tests", "e2e", s.spec)))];
    const grep = regression.scenarios.map((s) => escapeRegExp(s.title)).join("|");
    const env = {
      ...process.env,
      DATABASE_URL: process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
      E2E_REBUILD: "1",
      E2E_SCREENSHOT_DIR: path.join(worktree, "test-results", "screenshots"),
      CI: "",
    };
    const playwright = run(path.join(worktree, "node_modules", ".bin", "playwright"), ["test", ...files, "--grep", grep], worktree, env);
    const output = stripAnsi(`${playwright.stdout}${playwright.stderr}`);
    fs.writeFileSync(path.join(os.tmpdir(), `claimcheck-regression-${regression.id}.log`), output);
    const reportFile = path.join(worktree, "test-results", "e2e-results.json");
    if (!fs.existsSync(reportFile)) return errorRows("ERROR: no Playwright report", output.trim().split("\n").slice(-3).join(" / "));
    const report = JSON.parse(fs.readFileSync(reportFile, "utf8")) as JsonReport;
    const ran = specsOf(report.suites);
    return regression.scenarios.map((scenario): Row => {
      const base = { observation: regression.observation, scenario: `${scenario.spec}: ${scenario.title}` };
      const found = ran.filter(({ spec }) => spec.file.endsWith(scenario.spec) && spec.title.startsWith(scenario.title));
      if (found.length !== 1 || found[0]!.spec.tests.length !== 1) {
        const setup = report.errors?.[0]?.message;
        return { ...base, result: `ERROR: ran ${found.length} matching scenarios`, line: setup ? stripAnsi(setup).split("\n")[0]! : "" };
      }
      const test = found[0]!.spec.tests[0]!;
      const last = test.results.at(-1)?.status ?? "none";
      if (last === "failed" || last === "timedOut") return { ...base, result: "PASS-as-expected (scenario failed)", line: firstFailure(worktree, test) };
      if (last === "passed") return { ...base, result: "FINDING: scenario passed with its fix reverted", line: "" };
      return { ...base, result: `ERROR: scenario ${last}`, line: "" };
    });
  } finally {
    fs.rmSync(worktree, { recursive: true, force: true });
    run("git", ["worktree", "prune"], ROOT);
  }
}

const wanted = process.argv.slice(2).filter((a) => /^\d{1,2}$/.test(a)).map((a) => a.padStart(2, "0"));
const unknown = wanted.filter((id) => !REGRESSIONS.some((r) => r.id === id));
if (unknown.length) {
  console.error(`unknown regression(s): ${unknown.join(", ")}; known: ${REGRESSIONS.map((r) => r.id).join(" ")}`);
  process.exit(2);
}
const selected = wanted.length ? REGRESSIONS.filter((r) => wanted.includes(r.id)) : REGRESSIONS;
const head = mustRun("git", ["rev-parse", "--short", "HEAD"], ROOT).trim();
console.log(`e2e regressions on ${head} (${new Date().toISOString()}): ${selected.map((r) => r.id).join(" ")}`);

const rows: Row[] = [];
for (const regression of selected) {
  const started = Date.now();
  let result: Row[];
  try {
    result = runRegression(regression);
  } catch (error) {
    result = [{ observation: regression.observation, scenario: "-", result: "ERROR", line: String((error as Error).message).split("\n")[0]! }];
  }
  rows.push(...result);
  for (const row of result) console.log(`   ${row.result}  ${row.scenario}\n     ${row.line}`);
  console.log(`   (${((Date.now() - started) / 1000).toFixed(0)} s)`);
}

const cell = (text: string) => text.replaceAll("|", "\\|");
console.log(`\nWalkthrough scenarios with their fix reverted, on ${head}:\n`);
console.log("| Observation | Scenario | Result | First failing assertion |");
console.log("|---|---|---|---|");
for (const row of rows) console.log(`| ${cell(row.observation)} | ${cell(row.scenario)} | ${cell(row.result)} | ${cell(row.line)} |`);
const bad = rows.filter((r) => !r.result.startsWith("PASS-as-expected"));
console.log(bad.length ? `\n${bad.length} of ${rows.length} not as expected.` : `\nAll ${rows.length} scenarios failed with their fix reverted, as they must.`);
process.exit(bad.length ? 1 : 0);
