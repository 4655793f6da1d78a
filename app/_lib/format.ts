// Money, dates and times for the viewer: in their locale (the browser's Accept-Language) and,
// for moments, their time zone (a cookie the invoice page sets from the browser; UTC until
// then). One date format everywhere: the locale's numeric date ("11/18/2026" in en-US,
// "18/11/2026" in en-GB, "18.11.2026" in de), the form Chromium's own date fields use, which
// the edit form's date fields show and accept too. Client-safe: the lease panel uses it.
// The Gregorian calendar and Latin digits always, whatever the locale asks for ("th-TH" counts
// Buddhist years, "fa-IR" Persian ones, "-u-ca-ethiopic" and "-u-nu-deva" ask in the tag), so
// what is shown is the stored day and can be typed back and parsed (a Thai browser's
// edit form once rewrote an invoice's dates; decision 0014).

export type Viewer = { locale: string; timeZone: string };

/** Before anything is known of the viewer. */
export const DEFAULT_LOCALE = "en-GB";
export const DEFAULT_VIEWER: Viewer = { locale: DEFAULT_LOCALE, timeZone: "UTC" };

const cache = new Map<string, Intl.DateTimeFormat | Intl.NumberFormat>();
function memo<T extends Intl.DateTimeFormat | Intl.NumberFormat>(key: string, make: () => T): T {
  let value = cache.get(key) as T | undefined;
  if (!value) cache.set(key, (value = make()));
  return value;
}

// Options win over the locale tag's own -u-ca and -u-nu keys.
const GREGORIAN = { calendar: "gregory", numberingSystem: "latn" } as const;

const dateParts = (locale: string) =>
  memo(
    `date:${locale}`,
    () =>
      new Intl.DateTimeFormat(locale, {
        ...GREGORIAN,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        timeZone: "UTC",
      }),
  );

export function formatMoney(cents: number, currency: string, locale: string = DEFAULT_LOCALE): string {
  try {
    return memo(
      `money:${locale}:${currency}`,
      () => new Intl.NumberFormat(locale, { style: "currency", currency, numberingSystem: "latn" }),
    ).format(cents / 100);
  } catch {
    return `${(cents / 100).toFixed(2)} ${currency}`;
  }
}

/** "EUR 12,340.00": the currency's code rather than its sign, for sums of several currencies side by side. */
export function formatMoneyWithCode(cents: number, currency: string, locale: string = DEFAULT_LOCALE): string {
  try {
    return memo(
      `money-code:${locale}:${currency}`,
      () => new Intl.NumberFormat(locale, { style: "currency", currency, currencyDisplay: "code", numberingSystem: "latn" }),
    ).format(cents / 100);
  } catch {
    return `${currency} ${(cents / 100).toFixed(2)}`;
  }
}

function isoDay(isoDate: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate);
  if (!match) return null;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(y, m - 1, d));
  // Date.UTC rolls 2026-02-31 over to March: not a date.
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d ? date : null;
}

/** "11/02/2026" (en-US) from "2026-11-02": a calendar date, the same in every time zone. */
export function formatDate(isoDate: string, locale: string = DEFAULT_LOCALE): string {
  const date = isoDay(isoDate);
  return date ? dateParts(locale).format(date) : isoDate;
}

function uses24Hours(locale: string): boolean {
  const cycle = new Intl.DateTimeFormat(locale, { hour: "numeric" }).resolvedOptions().hourCycle;
  return cycle === "h23" || cycle === "h24";
}

/** "11/18/2026, 9:31:02 AM EST": the date as formatDate writes it, the time, and the zone. */
export function formatDateTime(iso: string, viewer: Viewer): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const format = memo(
    `moment:${viewer.locale}:${viewer.timeZone}`,
    () =>
      new Intl.DateTimeFormat(viewer.locale, {
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        // Two digits where the locale counts 24 hours ("00:52:30", as German writes it), else as
        // the locale writes it ("9:31:02 AM").
        hour: uses24Hours(viewer.locale) ? "2-digit" : "numeric",
        minute: "2-digit",
        second: "2-digit",
        timeZone: viewer.timeZone,
        timeZoneName: "short",
        ...GREGORIAN,
      }),
  );
  return format.format(date);
}

/** How a date is typed in this locale: "MM/DD/YYYY", "DD.MM.YYYY"... */
export function datePattern(locale: string = DEFAULT_LOCALE): string {
  return dateParts(locale)
    .formatToParts(new Date(Date.UTC(2026, 10, 18)))
    .map((p) => (p.type === "day" ? "DD" : p.type === "month" ? "MM" : p.type === "year" ? "YYYY" : p.value))
    .join("");
}

/**
 * A date typed in the locale's numeric form (any separators), or as ISO "2026-11-18", to
 * ISO; null when it is not a real date.
 */
export function parseDate(text: string, locale: string = DEFAULT_LOCALE): string | null {
  // Direction marks are invisible (ar-SA writes "18\u200f/11\u200f/2026") and mean nothing here.
  let value = text.replace(/[\u200e\u200f\u061c]/g, "").trim();
  if (isoDay(value)) return value;
  const parts = dateParts(locale).formatToParts(new Date(Date.UTC(2026, 10, 18)));
  // What the locale writes before the first number or after the last ("2026. 11. 18." in
  // ko-KR, "18.11.2026 г." in bg-BG) may be typed or left out.
  const literal = (p: Intl.DateTimeFormatPart | undefined) => (p?.type === "literal" ? p.value.trim() : "");
  const [head, tail] = [literal(parts[0]), literal(parts.at(-1))];
  if (head && value.startsWith(head)) value = value.slice(head.length).trim();
  if (tail && value.endsWith(tail)) value = value.slice(0, -tail.length).trim();
  const numbers = value.match(/\d+/g);
  if (!numbers || numbers.length !== 3 || !/^\d+\D+\d+\D+\d+$/.test(value)) return null;
  const order = parts.map((p) => p.type).filter((t) => t === "day" || t === "month" || t === "year");
  const get = (type: "day" | "month" | "year") => numbers[order.indexOf(type)] ?? "";
  const [year, month, day] = [get("year"), get("month"), get("day")];
  if (year.length !== 4 || month.length > 2 || day.length > 2) return null;
  const iso = `${year}-${month.padStart(2, "0")}-${day.padStart(2, "0")}`;
  return isoDay(iso) ? iso : null;
}

/**
 * Text that names dates the ISO way ("due 2026-12-01": the local model writes them so, since
 * it writes for no one locale), with each date in the viewer's format.
 */
export function localizeDates(text: string, locale: string = DEFAULT_LOCALE): string {
  return text.replace(/\b\d{4}-\d{2}-\d{2}\b/g, (iso) => (isoDay(iso) ? formatDate(iso, locale) : iso));
}

/**
 * A model call's cost or a spend, given in (fractional) USD cents: dollars with two to four
 * decimals ("$0.0123", "$1.50", "$12.3457"), and "< $0.0001" for a cost above zero that four
 * decimals would show as nothing. The same rule for every amount on the usage page.
 */
export function formatSpend(cents: number, locale: string = DEFAULT_LOCALE): string {
  const format = memo(
    `spend:${locale}`,
    () =>
      new Intl.NumberFormat(locale, {
        style: "currency",
        currency: "USD",
        minimumFractionDigits: 2,
        maximumFractionDigits: 4,
        numberingSystem: "latn",
      }),
  );
  if (cents > 0 && cents < 0.005) return `< ${format.format(0.0001)}`;
  return format.format(cents / 100);
}
