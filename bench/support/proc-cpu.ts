// CPU time from /proc, to say where a phase's CPU went: the app (`next start` and its
// children), the bench's own process (its clients and, in the lifecycle bench, the Inngest
// stand-in), PostgreSQL (every `postgres` process, so its background writers too), and the
// machine as a whole (/proc/stat), whose remainder is everything else running beside.
// Linux only; a backend that exits between two snapshots takes its CPU with it, so the
// benches keep their connections open across a phase.
import fs from "node:fs";

const TICK_MS = 1000 / 100; // USER_HZ: /proc counts CPU time in hundredths of a second

function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return [stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), ...stat.slice(stat.lastIndexOf(")") + 2).split(" ")];
  } catch {
    return undefined; // gone between the listing and the read
  }
}

/** CPU ms (user + system) of a process and its descendants so far. */
export function processTreeCpuMs(pid: number): number {
  let ticks = 0;
  const visit = (p: number) => {
    const fields = statFields(p);
    if (!fields) return;
    ticks += Number(fields[12]) + Number(fields[13]); // utime, stime (stat fields 14 and 15)
    for (const task of fs.readdirSync(`/proc/${p}/task`)) {
      const children = fs.readFileSync(`/proc/${p}/task/${task}/children`, "utf8").trim();
      for (const child of children ? children.split(" ") : []) visit(Number(child));
    }
  };
  visit(pid);
  return ticks * TICK_MS;
}

/** CPU ms of every process named `postgres` (the server, its backends and workers). */
export function postgresCpuMs(): number {
  let ticks = 0;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields?.[0] === "postgres") ticks += Number(fields[12]) + Number(fields[13]);
  }
  return ticks * TICK_MS;
}

/** The machine's busy and total CPU ms so far, summed over its CPUs (/proc/stat). */
export function machineCpuMs(): { busy: number; total: number } {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy: busy * TICK_MS, total: (busy + idle! + iowait!) * TICK_MS };
}

export interface CpuSnapshot {
  app: number;
  bench: number;
  postgres: number;
  machine: { busy: number; total: number };
}

/** CPU ms (user + system) of this process so far. */
export function ownCpuMs(): number {
  const own = process.cpuUsage();
  return (own.user + own.system) / 1000;
}

export function cpuSnapshot(appPid: number | undefined): CpuSnapshot {
  return {
    app: appPid ? processTreeCpuMs(appPid) : 0,
    bench: ownCpuMs(),
    postgres: postgresCpuMs(),
    machine: machineCpuMs(),
  };
}

export interface CpuSpent {
  /** CPU ms per unit of work (a lifecycle, a read), by where it ran. */
  per_unit_ms: { app: number; bench: number; postgres: number; other: number; total: number };
  /** How busy the machine's CPUs were over the phase, 0–1. */
  machine_busy: number;
}

export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot, units: number): CpuSpent {
  const r = (x: number) => Math.round(x * 100) / 100;
  const app = after.app - before.app;
  const bench = after.bench - before.bench;
  const postgres = after.postgres - before.postgres;
  const busy = after.machine.busy - before.machine.busy;
  const other = Math.max(0, busy - app - bench - postgres);
  const n = Math.max(1, units);
  return {
    per_unit_ms: { app: r(app / n), bench: r(bench / n), postgres: r(postgres / n), other: r(other / n), total: r(busy / n) },
    machine_busy: r(busy / Math.max(1, after.machine.total - before.machine.total)),
  };
}
