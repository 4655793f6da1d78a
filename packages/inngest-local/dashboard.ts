// The stand-in's dashboard: server-rendered HTML from the same state the GraphQL API reads
// (gql.ts). Pages: functions and apps (/), runs (/ui/runs), one run with its step timeline
// (/ui/runs/:id), the event stream (/ui/events), one event (/ui/events/:id). Writes are form
// POSTs under /ui/ that server.ts accepts from this origin only. Its one script, LIVE_JS
// (/ui/live.js), keeps a page live: it fetches the page again each second while the tab is
// visible and swaps in each `data-live` part that changed; without it the pages work as
// before, reloaded by hand. Everything shown from an event or a step is attacker-influenced
// text, so all of it goes through esc().
import { CRON_EVENT, traceOf, type EventInfo, type LocalState } from "./gql";
import type { RunSummary } from "./types";

export interface DashboardActions {
  resync(): Promise<void>;
  cancel(runId: string): boolean;
  rerun(runId: string): string | undefined;
  send(event: { name: string; data: Record<string, unknown> }): string[];
  /** Whether the form's event key lets an event in (any in dev mode), as POST /e/:key checks it. */
  eventKeyOk(key: string): boolean;
}

const PAGE_SIZE = 20;
/** Path segments come from the address bar: a malformed escape is "no such run", not a 500. */
const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return "";
  }
};

export const esc = (v: unknown): string =>
  String(typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v)).replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
const pretty = (v: unknown) => esc(v === undefined ? "undefined" : JSON.stringify(v, null, 2));
const time = (iso?: string | null) => (iso ? `<time datetime="${esc(iso)}">${esc(iso.replace("T", " ").replace("Z", " UTC"))}</time>` : "—");
function duration(ms: number | null | undefined): string {
  if (ms == null) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
const STATUS_WORD: Record<string, string> = { running: "Running", completed: "Completed", failed: "Failed", cancelled: "Cancelled", QUEUED: "Queued", RUNNING: "Running", WAITING: "Waiting", COMPLETED: "Completed", FAILED: "Failed", CANCELLED: "Cancelled" };
const badge = (status: string) => `<span class="badge s-${esc(status.toLowerCase())}">${esc(STATUS_WORD[status] ?? status)}</span>`;
/** A code as words: `late_completion` → `late completion`. */
const words = (code: string) => code.replace(/[_-]+/g, " ");
/** A value the SDK's encryption middleware sealed: the server cannot read it. */
const isSealed = (v: unknown) => !!v && typeof v === "object" && (v as Record<string, unknown>).__ENCRYPTED__ === true;
const eventOf = (state: LocalState, id: string | undefined) => (id ? state.events().find((e) => e.internalId === id || e.event.id === id) : undefined);
/** Why a cancelled run stopped: the event (linked, with its payload's `reason`), or who pressed cancel. */
function cancelCause(state: LocalState, run: RunSummary): { short: string; html: string; note: string } {
  const e = eventOf(state, run.cancelledByEvent);
  if (!e) return { short: run.cancelledBy ?? "unknown", html: esc(run.cancelledBy ?? "unknown"), note: "" };
  const reason = typeof e.event.data.reason === "string" ? e.event.data.reason : undefined;
  return {
    short: `${e.event.name}${reason ? ` (${words(reason)})` : ""}`,
    html: `event <a href="/ui/events/${encodeURIComponent(e.internalId)}">${esc(e.event.name)}</a> <code>${esc(e.event.id)}</code>`,
    note: reason ? ` <span class="muted">The reason in its payload:</span> <code>${esc(reason)}</code>` : "",
  };
}
/**
 * A run's badge says how it ended: a completed run whose output names an `outcome` (and, when
 * it did not do its work, a `reason`) says so, green only without a reason; an output the
 * server cannot read says that; a cancelled run says what cancelled it.
 */
function runBadge(state: LocalState, run: RunSummary): string {
  const span = (cls: string, text: string) => `<span class="badge ${cls}">${esc(text)}</span>`;
  if (run.status === "completed") {
    const o = run.output as Record<string, unknown> | null | undefined;
    if (isSealed(o)) return span("s-sealed", "Completed (output encrypted)");
    if (o && typeof o === "object" && typeof o.outcome === "string") {
      const reason = typeof o.reason === "string" ? o.reason : undefined;
      return span(reason ? "s-stopped" : "s-completed", `Completed: ${words(o.outcome)}${reason ? ` (${words(reason)})` : ""}`);
    }
  }
  if (run.status === "cancelled") return span("s-cancelled", `Cancelled: ${cancelCause(state, run).short}`);
  return badge(run.status);
}
/** Whether a run's page can still change: running, or cancelled with its interrupted step not reported yet (for up to 5 min). */
const stillChanging = (run: RunSummary) =>
  run.status === "running" || (!!run.interrupted && !run.interrupted.reportedAt && Date.now() - Date.parse(run.interrupted.cancelledAt) < 5 * 60_000);
const OP_WORD: Record<string, string> = { RUN: "step.run", SLEEP: "step.sleep", WAIT_FOR_EVENT: "step.waitForEvent", INVOKE: "step.invoke" };
const isCron = (r: RunSummary) => r.eventName === CRON_EVENT;
const NOTICES: Record<string, string> = {
  resynced: "Apps resynced.",
  "resync-failed": "Resync failed: an app did not answer (see the server log).",
  cancelled: "Run cancelled.",
  "not-running": "The run had already ended; nothing to cancel.",
  rerun: "Rerun started.",
  "rerun-skipped": "Rerun not started (the function's idempotency key skipped it, or the function is gone).",
  sent: "Event sent.",
};

const CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa;--accent:#0b57d0;--ok:#116329;--okbg:#dafbe1;--bad:#a40e26;--badbg:#ffebe9;--run:#7d4e00;--runbg:#fff8c5;--off:#424a53;--offbg:#eaeef2}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:#fff}
a{color:var(--accent)}header.top{background:#111827;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;align-items:center}
header.top .brand{font-weight:700;color:#fff;text-decoration:none}header.top nav ul{display:flex;flex-wrap:wrap;gap:.2rem .9rem;list-style:none;margin:0;padding:0}
header.top nav a{color:#e5e7eb;text-decoration:none;padding:.2rem 0}header.top nav a[aria-current=page]{color:#fff;border-bottom:2px solid #93c5fd}
.mode{margin-left:auto;font-size:.8rem;background:#374151;color:#fff;border-radius:1rem;padding:.1rem .6rem}
main{max-width:1200px;margin:0 auto;padding:1rem}h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.6rem 0 .6rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.45rem .5rem;border-bottom:1px solid var(--line)}th{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.5rem;overflow:auto;max-height:20rem;margin:.3rem 0;white-space:pre-wrap;word-break:break-word}
.badge{display:inline-block;border-radius:1rem;padding:0 .55rem;font-size:.8rem;font-weight:600;white-space:nowrap}
.s-completed{background:var(--okbg);color:var(--ok)}.s-failed{background:var(--badbg);color:var(--bad)}.s-running,.s-waiting,.s-queued{background:var(--runbg);color:var(--run)}.s-cancelled,.s-sealed{background:var(--offbg);color:var(--off)}.s-stopped{background:#fff1e5;color:#8a3c00}
.muted{color:var(--muted)}.notice{background:#ddf4ff;border:1px solid #54aeff;border-radius:6px;padding:.5rem .8rem}.problem{color:var(--bad)}
button,.button{font:inherit;font-weight:600;border-radius:6px;border:1px solid #1f2937;background:#1f2937;color:#fff;padding:.35rem .9rem;cursor:pointer;min-height:2.25rem}
button.secondary{background:#fff;color:#1f2937}button.danger{background:var(--bad);border-color:var(--bad)}
form.inline{display:inline}.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.6rem 0}
label{font-weight:600;display:block;margin:.4rem 0 .2rem}input[type=text],select,textarea{font:inherit;width:100%;max-width:32rem;padding:.35rem .5rem;border:1px solid #6e7781;border-radius:6px}
textarea{font:13px/1.45 ui-monospace,monospace;min-height:6rem}.check{display:flex;gap:.4rem;align-items:center;font-weight:400}.check input{width:auto}
.filters{display:flex;flex-wrap:wrap;gap:.6rem 1rem;align-items:flex-end;background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem}.filters>div{min-width:10rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;word-break:break-word}
ol.timeline{list-style:none;padding:0;margin:0}ol.timeline>li{border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem;margin:.5rem 0}
dl.inline{display:flex;flex-wrap:wrap;gap:.1rem 1.4rem;margin:.3rem 0 0}dl.inline div{display:flex;gap:.4rem}dl.inline dt{color:var(--muted)}dl.inline dd{margin:0}
.step-head{display:flex;flex-wrap:wrap;gap:.3rem .8rem;align-items:baseline}.step-head h3{font-size:1rem;margin:0}
.bar{position:relative;height:6px;background:var(--bg);border-radius:3px;margin:.4rem 0}.bar span{position:absolute;top:0;height:6px;border-radius:3px;background:#0969da;min-width:3px}
.pager{display:flex;gap:1rem;margin:.8rem 0}.trig{display:block}.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:700px){main{padding:.7rem}table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}table.stack tr{border:1px solid var(--line);border-radius:8px;margin:.5rem 0;padding:.3rem .2rem}
table.stack td{border:0;padding:.15rem .5rem;display:flex;gap:.6rem;align-items:baseline}table.stack td>*{min-width:0;overflow-wrap:anywhere}table.stack td::before{content:attr(data-label);flex:0 0 5.5rem;font-size:.75rem;text-transform:uppercase;color:var(--muted)}table.stack td:has(details),table.stack td:has(.trig){display:block}table.stack td:has(details)::before,table.stack td:has(.trig)::before{display:block}
dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.3rem}}
`;

function layout(state: LocalState, current: string, title: string, body: string, notice?: string, live = false): string {
  const nav = [
    ["/", "Functions & apps"],
    ["/ui/runs", "Runs"],
    ["/ui/events", "Events"],
  ]
    .map(([href, label]) => `<li><a href="${href}"${href === current ? ' aria-current="page"' : ""}>${label}</a></li>`)
    .join("");
  const note = notice && NOTICES[notice] ? `<p class="notice" role="status">${esc(NOTICES[notice])}</p>` : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · inngest-local</title><style>${CSS}</style><script src="/ui/live.js" defer></script></head><body>
<header class="top"><a class="brand" href="/">inngest-local</a><nav aria-label="Dashboard"><ul>${nav}</ul></nav><span class="mode">${state.mode === "dev" ? "dev mode (unsigned)" : "self-hosted (signed)"}</span></header>
<main${live ? " data-poll" : ""}><h1>${esc(title)}</h1>${note}${body}</main></body></html>`;
}

function home(state: LocalState, notice?: string): string {
  const apps = state.apps();
  const appRows = apps
    .map(
      (a) => `<tr><td data-label="App"><strong>${esc(a.name)}</strong></td><td data-label="URL"><code>${esc(a.url)}</code></td>
<td data-label="SDK">${esc(a.sdk ?? "—")}${a.framework ? ` <span class="muted">(${esc(a.framework)})</span>` : ""}</td><td data-label="Functions">${a.functionIds.length}</td>
<td data-label="Last synced">${a.syncedAt ? time(a.syncedAt) : '<span class="problem">never: waiting for the app</span>'}</td></tr>`,
    )
    .join("");
  const fns = state.functions();
  const fnRows = fns
    .map((f) => {
      const trig = f.triggers
        .map((t) =>
          "cron" in t
            ? `<span class="trig">Cron <code>${esc(t.cron)}</code> <span class="muted">next run</span> ${time(t.next)}</span>`
            : `<span class="trig">Event <code>${esc(t.event)}</code>${t.if ? ` <span class="muted">if</span> <code>${esc(t.if)}</code>` : ""}</span>`,
        )
        .join("");
      const problems = f.problems.length ? `<p class="problem">Not supported here: ${esc(f.problems.join("; "))}</p>` : "";
      return `<tr><td data-label="Function"><strong>${esc(f.name)}</strong><br><code>${esc(f.id)}</code>${problems}</td><td data-label="Triggers">${trig || '<span class="muted">none</span>'}</td>
<td data-label="Retries">${f.maxAttempts - 1}</td><td data-label="Runs"><a href="/ui/runs?function=${encodeURIComponent(f.id)}${f.triggers.some((t) => "cron" in t) ? "&amp;cron=1" : ""}">Runs<span class="vh"> of ${esc(f.name)}</span></a></td></tr>`;
    })
    .join("");
  const body = `<section aria-labelledby="apps-h"><h2 id="apps-h">Apps</h2>
<div class="actions"><form class="inline" method="post" action="/ui/sync"><button type="submit">Resync apps</button></form></div>
<div data-live="apps"><table class="stack"><thead><tr><th scope="col">App</th><th scope="col">URL</th><th scope="col">SDK</th><th scope="col">Functions</th><th scope="col">Last synced</th></tr></thead><tbody>${appRows}</tbody></table></div></section>
<section aria-labelledby="fns-h" data-live="functions"><h2 id="fns-h">Functions (${fns.length})</h2>${
    fns.length
      ? `<table class="stack"><thead><tr><th scope="col">Function</th><th scope="col">Triggers</th><th scope="col">Retries</th><th scope="col">Runs</th></tr></thead><tbody>${fnRows}</tbody></table>`
      : '<p class="muted">No functions synced yet.</p>'
  }</section>
<section aria-labelledby="send-h"><h2 id="send-h">Send a test event</h2>
<form method="post" action="/ui/events"><label for="ev-name">Event name</label><input type="text" id="ev-name" name="name" required placeholder="app/something.happened" autocomplete="off">
<label for="ev-data">Data (JSON object)</label><textarea id="ev-data" name="data" spellcheck="false">{}</textarea>${
    state.mode === "self-hosted"
      ? '<label for="ev-key">Event key</label><input type="password" id="ev-key" name="eventKey" required autocomplete="off">'
      : ""
  }
<div class="actions"><button type="submit">Send event</button></div></form></section>`;
  return layout(state, "/", "Functions & apps", body, notice, true);
}

function runsPage(state: LocalState, q: URLSearchParams): string {
  const status = q.get("status") ?? "";
  const fnId = q.get("function") ?? "";
  const showCron = q.get("cron") === "1";
  const page = Math.max(1, Math.floor(Number(q.get("page")) || 1));
  const all = [...state.runs()].reverse().filter((r) => (!status || r.status === status) && (!fnId || r.functionId === fnId));
  const hiddenCron = showCron ? 0 : all.filter(isCron).length;
  const list = showCron ? all : all.filter((r) => !isCron(r));
  const shown = list.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const opt = (v: string, label: string, sel: string) => `<option value="${esc(v)}"${v === sel ? " selected" : ""}>${esc(label)}</option>`;
  const filters = `<form class="filters" method="get" action="/ui/runs" aria-label="Filter runs">
<div><label for="f-status">Status</label><select id="f-status" name="status">${opt("", "Any status", status)}${["running", "completed", "failed", "cancelled"].map((s) => opt(s, STATUS_WORD[s]!, status)).join("")}</select></div>
<div><label for="f-fn">Function</label><select id="f-fn" name="function">${opt("", "All functions", fnId)}${state
    .functions()
    .map((f) => opt(f.id, f.name, fnId))
    .join("")}</select></div>
<div><label class="check"><input type="checkbox" name="cron" value="1"${showCron ? " checked" : ""}> Show scheduled (cron) runs</label></div>
<div><button type="submit">Apply filters</button></div></form>`;
  const rows = shown
    .map((r) => {
      const trigger = isCron(r) ? `Cron <code>${esc((r.event.data as { cron?: unknown }).cron)}</code>` : `<code>${esc(r.eventName)}</code>`;
      return `<tr><td data-label="Run"><a href="/ui/runs/${encodeURIComponent(r.id)}"><code>${esc(r.id)}</code></a></td><td data-label="Function">${esc(r.functionName)}</td>
<td data-label="Trigger">${trigger}</td><td data-label="Status">${runBadge(state, r)}</td><td data-label="Started">${time(r.startedAt)}</td><td data-label="Duration">${duration(r.endedAt ? Date.parse(r.endedAt) - Date.parse(r.startedAt) : null)}</td></tr>`;
    })
    .join("");
  const base = new URLSearchParams(q);
  const link = (p: number) => {
    base.set("page", String(p));
    return `/ui/runs?${esc(base.toString())}`;
  };
  const pager = `<nav class="pager" aria-label="Pages of runs">${page > 1 ? `<a href="${link(page - 1)}" rel="prev">Newer runs</a>` : ""}${page * PAGE_SIZE < list.length ? `<a href="${link(page + 1)}" rel="next">Older runs</a>` : ""}</nav>`;
  const count = `<p class="muted" role="status">${list.length ? `Showing ${(page - 1) * PAGE_SIZE + 1}–${(page - 1) * PAGE_SIZE + shown.length} of ${list.length} runs, newest first.` : "No runs match."}${hiddenCron ? ` ${hiddenCron} scheduled (cron) run${hiddenCron === 1 ? " is" : "s are"} hidden.` : ""}</p>`;
  const table = shown.length
    ? `<table class="stack"><thead><tr><th scope="col">Run</th><th scope="col">Function</th><th scope="col">Trigger</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Duration</th></tr></thead><tbody>${rows}</tbody></table>`
    : "";
  return layout(state, "/ui/runs", "Runs", `${filters}<div data-live="runs">${count}${table}${pager}</div>`, undefined, true);
}

function runPage(state: LocalState, run: RunSummary, notice?: string): string {
  const trace = traceOf(run);
  const start = Date.parse(run.startedAt);
  const end = run.endedAt ? Date.parse(run.endedAt) : Date.now();
  const total = Math.max(1, end - start);
  const bar = (from: number, len: number) =>
    `<div class="bar" aria-hidden="true"><span style="left:${((from / total) * 100).toFixed(2)}%;width:${Math.max(0.5, (len / total) * 100).toFixed(2)}%"></span></div>`;
  const started = (iso: string) => `<div><dt>Started</dt><dd>${time(iso)} <span class="muted">(+${duration(Date.parse(iso) - start)})</span></dd></div>`;
  const cut = run.interrupted;
  const steps = trace.childrenSpans
    // The step a cancel interrupted is shown once, below, with what the app reported after.
    .filter((s) => s.step && !(cut?.stepId && s.step.id === cut.stepId))
    .map((s) => {
      const st = s.step!;
      const from = Date.parse(st.startedAt) - start;
      const len = (st.endedAt ? Date.parse(st.endedAt) : end) - Date.parse(st.startedAt);
      const result =
        st.error !== undefined && (st.status === "failed" || st.status === "retrying")
          ? `<p><strong>${st.status === "retrying" ? "Last error (retrying)" : "Error"}</strong></p><pre>${pretty(st.error)}</pre>`
          : st.output !== undefined && st.op !== "Sleep"
            ? `<p><strong>${st.op === "WaitForEvent" ? (st.output === null ? "Timed out (no event)" : "Event received") : "Output"}</strong></p><pre>${pretty(st.output)}</pre>`
            : "";
      return `<li data-key="${esc(st.id)}"><div class="step-head"><h3>${esc(s.name)}</h3><code>${esc(OP_WORD[s.stepType] ?? s.stepType)}</code>${badge(s.status)}</div>
<dl class="inline">${started(st.startedAt)}<div><dt>Duration</dt><dd>${st.endedAt ? duration(len) : `${duration(len)} so far`}</dd></div><div><dt>Attempts</dt><dd>${st.attempts}</dd></div></dl>
${st.status === "completed" && st.error !== undefined ? `<details><summary>Error of the attempt before the last</summary><pre>${pretty(st.error)}</pre></details>` : ""}${bar(from, len)}${result}</li>`;
    });
  // Under checkpointing the SDK runs a step inside the request and names it only when it
  // reports the result: until then the timeline shows the request's current step unnamed.
  if (run.status === "running" && run.inFlightSince) {
    const from = Date.parse(run.inFlightSince) - start;
    steps.push(`<li data-key="in-flight"><div class="step-head"><h3>Running now</h3><span class="muted">a step the app has not reported yet</span>${badge("RUNNING")}</div>
<dl class="inline">${started(run.inFlightSince)}<div><dt>Duration</dt><dd>${duration(end - Date.parse(run.inFlightSince))} so far</dd></div></dl>${bar(from, end - start - from)}
<p class="muted">The app is working on this run's request; the SDK names a step when it reports the step's result.</p></li>`);
  }
  if (cut) {
    const since = Date.parse(cut.since);
    const ran = Date.parse(cut.cancelledAt) - since;
    const late = cut.reportedAt && !cut.name
      ? `<p class="muted">The app answered ${duration(Date.parse(cut.reportedAt) - Date.parse(cut.cancelledAt))} after the cancel without reporting a step: the request was not running one.</p>`
      : cut.reportedAt
      ? `<p>The app reported it ${duration(Date.parse(cut.reportedAt) - Date.parse(cut.cancelledAt))} after the cancel (it ran ${duration(Date.parse(cut.reportedAt) - since)} in all); the server refused the result and the run stays cancelled.</p>${
          cut.error !== undefined ? `<p><strong>Error (discarded)</strong></p><pre>${pretty(cut.error)}</pre>` : `<p><strong>Output (discarded)</strong></p><pre>${pretty(cut.output)}</pre>`
        }`
      : `<p class="muted">The app has not reported it yet: the SDK names a step when it reports the step's result.</p>`;
    steps.push(`<li data-key="interrupted"><div class="step-head"><h3>${esc(cut.name ?? "A step not reported yet")}</h3><code>step.run</code><span class="badge s-cancelled">Cancelled while running</span></div>
<dl class="inline">${started(cut.since)}<div><dt>Duration</dt><dd>had run ${duration(ran)} when the run was cancelled</dd></div></dl>${bar(since - start, ran)}${late}</li>`);
  }
  const cause = run.status === "cancelled" ? cancelCause(state, run) : undefined;
  const outcome = cause
    ? `<h2>Cancelled</h2><p>Cancel reason: <strong>${cause.html}</strong>${cause.note}</p>`
    : run.status === "failed"
      ? `<h2>Error</h2><pre>${pretty(run.error)}</pre>`
      : run.status === "completed"
        ? `<h2>Output</h2><pre>${pretty(run.output)}</pre>${isSealed(run.output) ? '<p class="muted">The app encrypted its output before sending it: this server cannot read how the run ended.</p>' : ""}`
        : `<p class="muted">Still running: this page shows new steps as they come.<noscript> Reload it to see them.</noscript></p>`;
  const buttons = `<div class="actions">${
    run.status === "running" ? `<form class="inline" method="post" action="/ui/runs/${encodeURIComponent(run.id)}/cancel"><button type="submit" class="danger">Cancel run</button></form>` : ""
  }<form class="inline" method="post" action="/ui/runs/${encodeURIComponent(run.id)}/rerun"><button type="submit" class="secondary">Rerun</button></form></div>`;
  const trigger = isCron(run) ? `Cron <code>${esc((run.event.data as { cron?: unknown }).cron)}</code>` : `<code>${esc(run.eventName)}</code> <span class="muted">event</span> <code>${esc(run.eventId)}</code>`;
  const body = `<div data-live="actions">${buttons}</div><div data-live="facts"><dl class="facts"><dt>Run</dt><dd><code>${esc(run.id)}</code></dd><dt>Function</dt><dd>${esc(run.functionName)} <code>${esc(run.functionId)}</code></dd>
<dt>Status</dt><dd>${runBadge(state, run)}</dd><dt>Trigger</dt><dd>${trigger}</dd><dt>Started</dt><dd>${time(run.startedAt)}</dd><dt>Ended</dt><dd>${time(run.endedAt)}</dd>
<dt>Duration</dt><dd>${duration(run.endedAt ? end - start : null)}</dd><dt>Attempts</dt><dd>${run.attempts} of at most ${run.maxAttempts} per step</dd></dl></div>
<div data-live="outcome">${outcome}</div><h2>Timeline</h2><div data-live="timeline">${steps.length ? `<ol class="timeline" aria-label="Steps">${steps.join("")}</ol>` : '<p class="muted">No steps yet.</p>'}</div>
<h2>Trigger payload</h2><pre>${pretty(run.event)}</pre>`;
  return layout(state, "/ui/runs", `Run of ${run.functionName}`, body, notice, stillChanging(run));
}

/** One event: its payload, the runs it started and the runs it cancelled. */
function eventPage(state: LocalState, e: EventInfo): string {
  const list = (ids: string[], none: string) =>
    ids.length ? `<ul>${ids.map((id) => `<li><a href="/ui/runs/${encodeURIComponent(id)}"><code>${esc(id)}</code></a> ${runOrRunning(state, id)}</li>`).join("")}</ul>` : `<p class="muted">${none}</p>`;
  const cancelled = state.runs().filter((r) => r.status === "cancelled" && r.cancelledByEvent !== undefined && (r.cancelledByEvent === e.event.id || r.cancelledByEvent === e.internalId));
  const body = `<dl class="facts"><dt>Name</dt><dd><code>${esc(e.event.name)}</code></dd><dt>Id</dt><dd><code>${esc(e.event.id)}</code></dd><dt>Internal id</dt><dd><code>${esc(e.internalId)}</code></dd><dt>Received</dt><dd>${time(e.receivedAt)}</dd></dl>
<div data-live="runs"><section aria-labelledby="started-h"><h2 id="started-h">Runs it started</h2>${list(e.runs, "None.")}</section>
<section aria-labelledby="cancelled-h"><h2 id="cancelled-h">Runs it cancelled</h2>${list(cancelled.map((r) => r.id), "None.")}</section></div>
<h2>Payload</h2><pre>${pretty(e.event)}</pre>`;
  return layout(state, "/ui/events", `Event ${e.event.name}`, body, undefined, true);
}
const runOrRunning = (state: LocalState, id: string) => {
  const r = state.run(id);
  return r ? runBadge(state, r) : badge("running");
};

function eventsPage(state: LocalState, q: URLSearchParams, notice?: string): string {
  const showInternal = q.get("internal") === "1";
  const page = Math.max(1, Math.floor(Number(q.get("page")) || 1));
  const all = state.events().filter((e) => showInternal || !e.event.name.startsWith("inngest/"));
  const shown = all.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const items = shown
    .map((e) => {
      const runs = e.runs.length
        ? e.runs.map((id) => `<a href="/ui/runs/${encodeURIComponent(id)}"><code>${esc(id)}</code></a> ${runOrRunning(state, id)}`).join("<br>")
        : '<span class="muted">no runs</span>';
      return `<tr data-key="${esc(e.internalId)}"><td data-label="Event"><code>${esc(e.event.name)}</code><br><span class="muted">id</span> <code>${esc(e.event.id)}</code></td><td data-label="Received">${time(e.receivedAt)}</td>
<td data-label="Runs">${runs}</td><td data-label="Payload"><details><summary>Payload</summary><pre>${pretty(e.event)}</pre></details><a href="/ui/events/${encodeURIComponent(e.internalId)}">Event page<span class="vh"> of ${esc(e.event.name)} ${esc(e.event.id)}</span></a></td></tr>`;
    })
    .join("");
  const base = new URLSearchParams(q);
  const link = (p: number) => {
    base.set("page", String(p));
    return `/ui/events?${esc(base.toString())}`;
  };
  const body = `<form class="filters" method="get" action="/ui/events" aria-label="Filter events"><div><label class="check"><input type="checkbox" name="internal" value="1"${showInternal ? " checked" : ""}> Show internal <code>inngest/</code> events</label></div><div><button type="submit">Apply</button></div></form>
<div data-live="events"><p class="muted" role="status">${all.length ? `Showing ${(page - 1) * PAGE_SIZE + 1}–${(page - 1) * PAGE_SIZE + shown.length} of ${all.length} events, newest first.` : "No events yet."}</p>
${shown.length ? `<table class="stack"><thead><tr><th scope="col">Event</th><th scope="col">Received</th><th scope="col">Runs</th><th scope="col">Payload</th></tr></thead><tbody>${items}</tbody></table>` : ""}
<nav class="pager" aria-label="Pages of events">${page > 1 ? `<a href="${link(page - 1)}" rel="prev">Newer events</a>` : ""}${page * PAGE_SIZE < all.length ? `<a href="${link(page + 1)}" rel="next">Older events</a>` : ""}</nav></div>`;
  return layout(state, "/ui/events", "Events", body, notice, true);
}

/** The HTML for a dashboard GET, or undefined when the path is not a dashboard page. */
export function renderDashboard(state: LocalState, path: string, q: URLSearchParams): { status: number; html: string } | undefined {
  const notice = q.get("done") ?? undefined;
  if (path === "/") return { status: 200, html: home(state, notice) };
  if (path === "/ui/runs") return { status: 200, html: runsPage(state, q) };
  if (path === "/ui/events") return { status: 200, html: eventsPage(state, q, notice) };
  const ev = path.match(/^\/ui\/events\/([^/]+)$/);
  if (ev) {
    const e = eventOf(state, decode(ev[1]!));
    return e ? { status: 200, html: eventPage(state, e) } : { status: 404, html: layout(state, "/ui/events", "Event not found", '<p><a href="/ui/events">All events</a></p>') };
  }
  const m = path.match(/^\/ui\/runs\/([^/]+)$/);
  if (m) {
    const run = state.run(decode(m[1]!));
    return run ? { status: 200, html: runPage(state, run, notice) } : { status: 404, html: layout(state, "/ui/runs", "Run not found", '<p><a href="/ui/runs">All runs</a></p>') };
  }
  return undefined;
}

/**
 * A dashboard write (the caller has checked that it comes from this origin). Returns where
 * to send the browser next (303), or a 4xx with a message.
 */
export async function dashboardAction(actions: DashboardActions, path: string, form: URLSearchParams): Promise<{ location: string } | { status: number; message: string } | undefined> {
  if (path === "/ui/sync") {
    try {
      await actions.resync();
      return { location: "/?done=resynced" };
    } catch {
      return { location: "/?done=resync-failed" };
    }
  }
  if (path === "/ui/events") {
    const name = (form.get("name") ?? "").trim();
    // Checked first, so a request without the key learns nothing about the rest of its form.
    if (!actions.eventKeyOk(form.get("eventKey") ?? "")) return { status: 401, message: "Events need this server's event key, here as on POST /e/:key." };
    if (!name) return { status: 400, message: "The event needs a name." };
    let data: unknown;
    try {
      data = JSON.parse(form.get("data") || "{}");
    } catch (e) {
      return { status: 400, message: `The data is not JSON: ${(e as Error).message}` };
    }
    if (!data || typeof data !== "object" || Array.isArray(data)) return { status: 400, message: "The data must be a JSON object." };
    actions.send({ name, data: data as Record<string, unknown> });
    return { location: "/ui/events?done=sent" };
  }
  let m = path.match(/^\/ui\/runs\/([^/]+)\/cancel$/);
  if (m) {
    const id = decode(m[1]!);
    return { location: `/ui/runs/${encodeURIComponent(id)}?done=${actions.cancel(id) ? "cancelled" : "not-running"}` };
  }
  m = path.match(/^\/ui\/runs\/([^/]+)\/rerun$/);
  if (m) {
    const from = decode(m[1]!);
    const id = actions.rerun(from);
    return { location: id ? `/ui/runs/${encodeURIComponent(id)}?done=rerun` : `/ui/runs/${encodeURIComponent(from)}?done=rerun-skipped` };
  }
  return undefined;
}

export function errorPage(state: LocalState, status: number, message: string): string {
  return layout(state, "", status === 401 ? "Credential needed" : status === 403 ? "Refused" : "Not accepted", `<p>${esc(message)}</p><p><a href="/">Back to the dashboard</a></p>`);
}

/**
 * The dashboard's one script (GET /ui/live.js; the CSP allows scripts from this origin and no
 * other, none inline). A page whose <main> has `data-poll` is fetched again every second while
 * the tab is visible (none while hidden, at once when it shows again), and each `data-live`
 * part whose HTML changed is swapped in, keeping the focus and the open <details>. It stops when
 * the page says nothing more can change (no `data-poll`), or the server refuses (401 after a
 * restart: the login URL changed).
 */
export const LIVE_JS = `"use strict";
(() => {
  const main = document.querySelector("main[data-poll]");
  if (!main) return;
  const parts = () => document.querySelectorAll("[data-live]");
  const served = new Map([...parts()].map((el) => [el.dataset.live, el.innerHTML]));
  const keyOf = (el) => el.id || el.getAttribute("href") || (el.form ? el.form.getAttribute("action") + "|" : "") + el.textContent.trim();
  const detailsKey = (d) => (d.closest("[data-key]")?.getAttribute("data-key") ?? "") + "|" + (d.querySelector("summary")?.textContent ?? "");
  function swap(el, html) {
    const open = new Set([...el.querySelectorAll("details[open]")].map(detailsKey));
    const focused = el.contains(document.activeElement) ? keyOf(document.activeElement) : undefined;
    el.innerHTML = html;
    for (const d of el.querySelectorAll("details")) if (open.has(detailsKey(d))) d.open = true;
    if (focused !== undefined) for (const c of el.querySelectorAll("a,button,summary")) if (keyOf(c) === focused) { c.focus(); break; }
  }
  let live = true, timer = 0, busy = false;
  async function tick() {
    timer = 0;
    if (!live || busy || document.visibilityState !== "visible") return;
    busy = true;
    try {
      const res = await fetch(location.href, { cache: "no-store", credentials: "same-origin", headers: { accept: "text/html" } });
      if (!res.ok) { live = false; return; }
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      for (const el of parts()) {
        const next = doc.querySelector('[data-live="' + CSS.escape(el.dataset.live) + '"]');
        if (!next || served.get(el.dataset.live) === next.innerHTML) continue;
        served.set(el.dataset.live, next.innerHTML);
        swap(el, next.innerHTML);
      }
      if (!doc.querySelector("main[data-poll]")) live = false;
    } catch {
      // the server is restarting, or gone: try again on the next tick
    } finally {
      busy = false;
      schedule();
    }
  }
  function schedule(ms = 1000) {
    if (live && !timer && document.visibilityState === "visible") timer = setTimeout(tick, ms);
  }
  document.addEventListener("visibilitychange", () => schedule(0));
  schedule();
})();
`;
