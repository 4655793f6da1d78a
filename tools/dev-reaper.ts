// The watchdog of `npm run dev` (tools/dev.ts starts it first): stops dev's children when dev.ts
// dies without stopping them itself (`kill -9`, an out-of-memory kill, a crash). They run in
// process groups of their own, so nothing else would: an orphaned next-server kept its port and
// the PGlite folder, and the next `npm run dev` could not start ("in use by process …").
//
// dev.ts writes `pid <n>` on our stdin for each child it starts and `done` once it has stopped
// them; the pipe closes when dev.ts is gone, however it went. We run detached and ignore the
// terminal's signals, so a closed terminal or Ctrl-C reaches dev.ts, which stops everything in order.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Every process below `pid`: walked from the process table, so a child in another group is found too. */
export function descendants(pid: number): number[] {
  const table = spawnSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" }).stdout ?? "";
  const children = new Map<number, number[]>();
  for (const line of table.split("\n")) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    if (p && pp) children.set(pp, [...(children.get(pp) ?? []), p]);
  }
  const found: number[] = [];
  const walk = (id: number) => (children.get(id) ?? []).forEach((c) => (found.push(c), walk(c)));
  walk(pid);
  return found;
}

/** Signals `pid`'s descendants and its process group (dev starts each child as a group leader). */
export function killTree(pid: number, signal: NodeJS.Signals) {
  for (const id of [...descendants(pid), -pid]) {
    try {
      process.kill(id, signal);
    } catch {
      // already gone
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function watch() {
  const pids = new Set<number>();
  let done = false;
  let buffered = "";
  for (const signal of ["SIGHUP", "SIGINT", "SIGTERM"] as const) process.on(signal, () => {});
  process.stderr.on("error", () => {}); // the terminal may be closed by now
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      const [word, value] = line.trim().split(/\s+/);
      if (word === "pid" && Number(value) > 0) pids.add(Number(value));
      if (word === "done") done = true;
    }
  });
  process.stdin.on("close", () => {
    if (done) process.exit(0);
    const left = [...pids].filter(alive);
    if (left.length === 0) process.exit(0);
    try {
      process.stderr.write(`[dev] tools/dev.ts is gone; stopping what it started (process groups ${left.join(", ")}).\n`);
    } catch {
      // no terminal to say it on
    }
    left.forEach((pid) => killTree(pid, "SIGTERM"));
    const started = Date.now();
    const poll = setInterval(() => {
      const still = left.filter(alive);
      if (still.length > 0 && Date.now() - started < 5000) return;
      still.forEach((pid) => killTree(pid, "SIGKILL"));
      clearInterval(poll);
      process.exit(0);
    }, 200);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) watch();
