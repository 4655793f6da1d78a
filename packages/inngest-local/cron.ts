// Standard 5-field cron (minute hour day-of-month month day-of-week), evaluated in
// UTC as Inngest does without a TZ prefix. Supports *, */n, n, a-b, a-b/n, lists,
// month/day names and the @hourly-style macros. A `TZ=`/`CRON_TZ=` prefix is
// rejected: silently running a schedule in the wrong zone would be worse than failing.

export type CronSchedule = {
  source: string;
  minute: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  month: Set<number>;
  dow: Set<number>;
  domAny: boolean;
  dowAny: boolean;
};

const MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};
const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

function parseField(field: string, min: number, max: number, names: string[], nameBase: number, what: string): Set<number> {
  const out = new Set<number>();
  const num = (s: string): number => {
    const idx = names.indexOf(s.toUpperCase());
    const n = idx >= 0 ? idx + nameBase : /^\d+$/.test(s) ? Number(s) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`cron ${what}: "${s}" is not in ${min}-${max}`);
    return n;
  };
  for (const part of field.split(",")) {
    const m = /^([^/]+)(?:\/(\d+))?$/.exec(part);
    if (!m) throw new Error(`cron ${what}: cannot parse "${part}"`);
    const [, range = "", stepStr] = m;
    const step = stepStr === undefined ? 1 : Number(stepStr);
    if (step < 1) throw new Error(`cron ${what}: step must be >= 1 in "${part}"`);
    let lo: number;
    let hi: number;
    if (range === "*") {
      lo = min;
      hi = max;
    } else if (range.includes("-")) {
      const [a = "", b = ""] = range.split("-");
      lo = num(a);
      hi = num(b);
      if (lo > hi) throw new Error(`cron ${what}: reversed range "${range}"`);
    } else {
      lo = num(range);
      // "5/15" means from 5 to the end, every 15 (Vixie cron).
      hi = stepStr === undefined ? lo : max;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

export function parseCron(source: string): CronSchedule {
  const trimmed = source.trim();
  if (/^(CRON_)?TZ=/i.test(trimmed)) {
    throw new Error(`cron "${source}": TZ= prefixes are not supported by inngest-local (schedules run in UTC)`);
  }
  const expanded = MACROS[trimmed.toLowerCase()] ?? trimmed;
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5) throw new Error(`cron "${source}": expected 5 fields, got ${fields.length}`);
  const [mi = "", h = "", dom = "", mon = "", dow = ""] = fields;
  const dowSet = parseField(dow, 0, 7, DAYS, 0, "day-of-week");
  if (dowSet.has(7)) dowSet.add(0); // 7 is Sunday too
  return {
    source,
    minute: parseField(mi, 0, 59, [], 0, "minute"),
    hour: parseField(h, 0, 23, [], 0, "hour"),
    dom: parseField(dom, 1, 31, [], 0, "day-of-month"),
    month: parseField(mon, 1, 12, MONTHS, 1, "month"),
    dow: dowSet,
    domAny: dom === "*" || dom === "?",
    dowAny: dow === "*" || dow === "?",
  };
}

function dayMatches(c: CronSchedule, d: Date): boolean {
  const domOk = c.dom.has(d.getUTCDate());
  const dowOk = c.dow.has(d.getUTCDay());
  // Vixie semantics: when both day fields are restricted, either may match.
  if (!c.domAny && !c.dowAny) return domOk || dowOk;
  return domOk && dowOk;
}

export function cronMatches(c: CronSchedule, d: Date): boolean {
  return (
    c.minute.has(d.getUTCMinutes()) && c.hour.has(d.getUTCHours()) && c.month.has(d.getUTCMonth() + 1) && dayMatches(c, d)
  );
}

/** The first minute strictly after `after` that matches, or null if none within ~5 years. */
export function nextCronTime(c: CronSchedule, after: Date): Date | null {
  const d = new Date(after.getTime());
  d.setUTCSeconds(0, 0);
  d.setUTCMinutes(d.getUTCMinutes() + 1);
  for (let i = 0; i < 200_000; i++) {
    if (!c.month.has(d.getUTCMonth() + 1)) {
      d.setUTCMonth(d.getUTCMonth() + 1, 1);
      d.setUTCHours(0, 0, 0, 0);
    } else if (!dayMatches(c, d)) {
      d.setUTCDate(d.getUTCDate() + 1);
      d.setUTCHours(0, 0, 0, 0);
    } else if (!c.hour.has(d.getUTCHours())) {
      d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
    } else if (!c.minute.has(d.getUTCMinutes())) {
      d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
    } else {
      return d;
    }
  }
  return null;
}
