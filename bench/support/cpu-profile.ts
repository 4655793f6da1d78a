// Reads the .cpuprofile files `node --cpu-prof` wrote and sums self time by package (or our
// own source file) and by function: where a process spent its CPU, as a table for the bench.
import fs from "node:fs";
import path from "node:path";

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

/** Where a frame's code lives: an npm package, a file of ours in the build, node itself, or the engine. */
function owner(url: string): string {
  if (!url) return "(engine: gc, idle, program)";
  if (url.startsWith("node:")) return "node";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const chunk = /\.next[^/]*\/server\/(.*)$/.exec(url);
  if (chunk) return `app build: ${chunk[1]!.replace(/\[[^\]]+\]|_[0-9a-f]{6,}/g, "").slice(0, 60)}`;
  return path.basename(url);
}

export function summarizeProfiles(dir: string, top = 15) {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")) : [];
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  let wall = 0;
  for (const file of files) {
    const profile = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")) as Profile;
    wall += (profile.endTime - profile.startTime) / 1000;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    profile.samples.forEach((id, i) => {
      const node = nodes.get(id);
      const ms = (profile.timeDeltas[i] ?? 0) / 1000;
      if (!node) return;
      const { functionName, url, lineNumber } = node.callFrame;
      if (functionName === "(idle)") return;
      total += ms;
      const o = owner(url);
      byOwner.set(o, (byOwner.get(o) ?? 0) + ms);
      const f = `${functionName || "(anonymous)"} ${o}:${lineNumber + 1}`;
      byFunction.set(f, (byFunction.get(f) ?? 0) + ms);
    });
  }
  const rank = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), share: Math.round((ms / Math.max(1, total)) * 1000) / 10 }));
  return {
    files: files.length,
    busy_ms: Math.round(total),
    wall_ms: Math.round(wall),
    by_owner: rank(byOwner),
    by_function: rank(byFunction),
  };
}

/** The environment that makes a started app profile itself into `dir` (node refuses --cpu-prof in NODE_OPTIONS). */
export function cpuProfEnv(dir: string): Record<string, string> {
  return { NODE_OPTIONS: `--import ${path.resolve("bench/support/cpu-prof-preload.mjs")}`, CPU_PROF_DIR: path.resolve(dir) };
}

/** Prints a summary's tables: self time by package, then by function. */
export function printProfile(profile: ReturnType<typeof summarizeProfiles>) {
  console.info(`\napp CPU (node --cpu-prof, ${profile.files} processes, ${profile.busy_ms} ms busy in ${profile.wall_ms} ms): by package`);
  for (const r of profile.by_owner) console.info(`  ${String(r.share).padStart(5)} %  ${r.name}`);
  console.info("by function (self time)");
  for (const r of profile.by_function) console.info(`  ${String(r.share).padStart(5)} %  ${r.name}`);
}
