// How the history names an attempt (app/_lib/history-words.ts attemptWords): by its purpose, so
// a summary attempt is never a bare "Attempt 4" beside "Review attempt 2".
import { describe, expect, it } from "vitest";
import { attemptWords } from "@/app/_lib/history-words";
import { purposeOf, type Purpose } from "@/lib/purposes";

const words = (purpose: Purpose) => purposeOf(purpose).words;

describe("attemptWords", () => {
  it("names every attempt by its purpose, the summary's too", () => {
    expect(attemptWords(words("summarize_invoice"), 4)).toBe("Summary attempt 4");
    expect(attemptWords(words("review_invoice"), 2)).toBe("Review attempt 2");
    expect(attemptWords(words("categorize_lines"), 3)).toBe("Categories attempt 3");
  });
});
