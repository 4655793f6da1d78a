// The usage page's amounts and the budget refusal's words: the spend format (fractions of a
// cent), the budget form's dollars, and "resets at 00:00 UTC (in 3 h 12 min)" from the address.
import { describe, expect, it } from "vitest";
import { formatSpend } from "@/app/_lib/format";
import { budgetRefusal, durationWords, noticeOf } from "@/app/_lib/lease-words";
import { centsOf, dollarsOf } from "@/app/usage/dollars";
import { purposeOf } from "@/lib/purposes";

describe("formatSpend", () => {
  it("dollars with two to four decimals, and below a hundredth of a cent says so", () => {
    expect(formatSpend(0, "en-US")).toBe("$0.00");
    expect(formatSpend(1.23, "en-US")).toBe("$0.0123");
    expect(formatSpend(150, "en-US")).toBe("$1.50");
    expect(formatSpend(1234.5678, "en-US")).toBe("$12.3457");
    expect(formatSpend(0.004, "en-US")).toBe("< $0.0001");
    expect(formatSpend(0.005, "en-US")).toBe("$0.0001");
  });
});

describe("the budget form's amounts", () => {
  it.each([
    ["", null],
    ["  ", null],
    ["0", 0],
    ["25", 2500],
    ["25.5", 2550],
    ["$25.50", 2550],
    ["1,000", 100_000],
    ["1,250.05", 125_005],
    ["25,50", undefined],
    ["1.005", undefined],
    ["-5", undefined],
    ["5 dollars", undefined],
    ["1e3", undefined],
  ])("%j is %j cents", (typed, cents) => {
    expect(centsOf(typed)).toBe(cents);
  });
  it("shows whole cents as dollars, blank for no cap", () => {
    expect(dollarsOf(2550)).toBe("25.50");
    expect(dollarsOf(0)).toBe("0.00");
    expect(dollarsOf(null)).toBe("");
  });
});

describe("the budget refusal", () => {
  const now = new Date("2026-12-03T20:48:00Z");
  it("names whose budget, when it resets and how long that is", () => {
    expect(budgetRefusal({ cap: "organization_daily_cents", resets: "2026-12-04T00:00:00.000Z", now, locale: "en-US" })).toBe(
      "Your team's AI budget for today is used up, so nothing was started and nothing was charged. It resets at 00:00 UTC (in 3 h 12 min). An admin can raise it on the Usage page.",
    );
    expect(budgetRefusal({ cap: "member_monthly_cents", resets: "2027-01-01T00:00:00.000Z", now, locale: "en-US" })).toBe(
      "Your own AI budget for this month (each member's monthly limit) is used up, so nothing was started and nothing was charged. It resets on January 1 at 00:00 UTC (in 28 days 3 h). An admin can raise it on the Usage page.",
    );
  });
  it("a reset that has passed says to try again; an address that says nothing sensible gets the general words", () => {
    expect(budgetRefusal({ cap: "member_daily_cents", resets: "2026-12-03T00:00:00Z", now, locale: "en-US" })).toMatch(
      /It has reset since then: you can try again\.$/,
    );
    const general = budgetRefusal();
    expect(general).toMatch(/^Your team's AI budget is used up/);
    for (const context of [
      { cap: "toString", resets: "2026-12-04T00:00:00Z" },
      { cap: "member_daily_cents", resets: "tomorrow" },
      { cap: "member_daily_cents", resets: "2030-01-01T00:00:00Z" },
      { cap: "member_daily_cents" },
    ]) {
      expect(budgetRefusal({ ...context, now, locale: "en-US" })).toBe(general);
    }
  });
  it("is the Summarize notice's words, for every purpose's panel", () => {
    const budget = { cap: "organization_daily_cents", resets: "2026-12-04T00:00:00.000Z", now, locale: "en-US" };
    expect(noticeOf("summarize.budget_exhausted", null, undefined, purposeOf("review_invoice").words, { budget })?.text).toMatch(
      /^Your team's AI budget for today is used up.*\(in 3 h 12 min\)/,
    );
  });
  it("durations", () => {
    expect(durationWords(30_000)).toBe("less than a minute");
    expect(durationWords(45 * 60_000)).toBe("45 min");
    expect(durationWords(2 * 3_600_000)).toBe("2 h");
    expect(durationWords(86_400_000 + 60_000)).toBe("1 day");
  });
});
