// The invoice page's one date format (app/_lib/format.ts) and how the viewer's locale and
// zone are read (app/_lib/viewer.ts's pure parts).
import { describe, expect, it, vi } from "vitest";
import { datePattern, formatDate, formatDateTime, localizeDates, parseDate } from "@/app/_lib/format";

vi.mock("server-only", () => ({}));
vi.mock("next/headers", () => ({ cookies: vi.fn(), headers: vi.fn() }));
const { localeFrom, zoneFrom } = await import("@/app/_lib/viewer");

describe("one date format, the viewer's", () => {
  it("writes a calendar date the locale's numeric way, the same in every zone", () => {
    expect(formatDate("2026-11-18", "en-US")).toBe("11/18/2026");
    expect(formatDate("2026-11-18", "en-GB")).toBe("18/11/2026");
    expect(formatDate("2026-11-18", "de-DE")).toBe("18.11.2026");
    expect(formatDate("2026-02-31", "en-US")).toBe("2026-02-31"); // not a date: left as it was
  });

  it("writes a moment with the same date, the time and the zone", () => {
    expect(formatDateTime("2026-11-18T14:31:02Z", { locale: "en-US", timeZone: "America/New_York" })).toMatch(
      /^11\/18\/2026, 9:31:02\sAM EST$/,
    );
    expect(formatDateTime("2026-11-18T14:31:02Z", { locale: "de-DE", timeZone: "Europe/Berlin" })).toBe("18.11.2026, 15:31:02 MEZ");
  });

  it("reads back what it writes, ISO too, and refuses what is not a date", () => {
    for (const locale of ["en-US", "en-GB", "de-DE", "fr-FR", "ja-JP"]) {
      expect(parseDate(formatDate("2026-12-31", locale), locale), locale).toBe("2026-12-31");
      expect(parseDate("2026-12-31", locale), locale).toBe("2026-12-31");
    }
    expect(parseDate("12/31/2026", "en-US")).toBe("2026-12-31");
    expect(parseDate("1/2/2026", "en-US")).toBe("2026-01-02");
    expect(parseDate("31/12/2026", "en-US")).toBeNull();
    expect(parseDate("12/31/26", "en-US")).toBeNull();
    expect(parseDate("02/30/2026", "en-US")).toBeNull();
    expect(parseDate("tomorrow", "en-US")).toBeNull();
    expect(parseDate("", "en-US")).toBeNull();
    // What a locale writes after the last number may be typed or left out.
    expect(parseDate("2026. 11. 18", "ko-KR")).toBe("2026-11-18");
    expect(parseDate("18.11.2026", "bg-BG")).toBe("2026-11-18");
    expect(parseDate("18.11.2026 г.", "bg-BG")).toBe("2026-11-18");
    expect(datePattern("en-US")).toBe("MM/DD/YYYY");
    expect(datePattern("de-DE")).toBe("DD.MM.YYYY");
  });

  // Without calendar "gregory" a Thai browser got "02/11/2569", a Persian one
  // "1405/08/11", and an Ethiopic one "23/02/2019", which read back as another day (or not at all).
  const LOCALES = [
    "th-TH", "fa-IR", "ar-SA", "ar-EG", "am-ET-u-ca-ethiopic", "ja-JP-u-ca-japanese", "de-DE", "en-US", "en-GB",
    "hi-IN-u-nu-deva", "he-IL-u-ca-hebrew", "zh-TW-u-ca-roc", "en-US-u-ca-islamic", "ps-AF", "bn-BD", "my-MM",
    "ko-KR", "hu-HU", "bg-BG", "sr-Cyrl-RS", "fr-CA", "sv-SE", "zh-CN", "ja-JP",
  ];
  const DAYS = ["2026-11-02", "2026-12-02", "2024-02-29", "1999-01-09", "2026-12-31"];

  it.each(LOCALES)("%s: a date is written Gregorian, in Latin digits, and reads back as the same day", (locale) => {
    for (const day of DAYS) {
      const shown = formatDate(day, locale);
      expect(shown, `${locale} ${day}`).toContain(day.slice(0, 4));
      expect(shown, `${locale} ${day}`).toMatch(/^[\x20-\x7e\u200e\u200f\u061c\u0433\u0020]*$/);
      expect(parseDate(shown, locale), `${locale}: ${day} shown as ${JSON.stringify(shown)}`).toBe(day);
      expect(parseDate(day, locale), `${locale}: ISO`).toBe(day);
      expect(localizeDates(`due ${day}`, locale), locale).toBe(`due ${shown}`);
    }
    const pattern = datePattern(locale);
    expect(pattern, locale).toContain("YYYY");
    expect(pattern, locale).toContain("MM");
    expect(pattern, locale).toContain("DD");
    // A moment is written with the same Gregorian date.
    const moment = formatDateTime("2026-11-02T12:00:00Z", { locale, timeZone: "UTC" });
    expect(moment, locale).toContain(formatDate("2026-11-02", locale).replace(/\D+$/, ""));
  });

  it("shows the ISO dates in a text (the local model's) the viewer's way", () => {
    expect(localizeDates("issued 2026-11-01, due 2026-12-01 (30 days after issue)", "en-US")).toBe(
      "issued 11/01/2026, due 12/01/2026 (30 days after issue)",
    );
    expect(localizeDates("ref 2026-13-45 stays", "en-US")).toBe("ref 2026-13-45 stays");
  });
});

describe("the viewer", () => {
  it("takes the browser's first usable language by q-value, else en-GB", () => {
    expect(localeFrom("de-DE,de;q=0.9,en;q=0.8")).toBe("de-DE");
    expect(localeFrom("en;q=0.5, fr-CA")).toBe("fr-CA");
    expect(localeFrom("*")).toBe("en-GB");
    expect(localeFrom("not a tag!!, en-US;q=0.1")).toBe("en-US");
    expect(localeFrom(null)).toBe("en-GB");
  });

  it("takes a zone Intl knows, else UTC", () => {
    expect(zoneFrom("Europe/Berlin")).toBe("Europe/Berlin");
    expect(zoneFrom("Mars/Olympus_Mons")).toBe("UTC");
    expect(zoneFrom(undefined)).toBe("UTC");
    expect(zoneFrom("x".repeat(100))).toBe("UTC");
  });
});
