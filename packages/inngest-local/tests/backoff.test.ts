// The stand-in's retry schedule against the real server's (inngest/inngest pkg/backoff,
// TableBackoff: 15 s, 30 s, 1 min, 2 min, 5 min, 10 min, 20 min, 40 min, 1 h, 2 h, then 2 h,
// each plus 0 to 30 s of jitter), and the one test knob that scales it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { RETRY_TABLE_MS, retryDelayMs, retryScaleFrom } from "../backoff";
import { createContext } from "../context";

const REAL_MS = [15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_200_000, 2_400_000, 3_600_000, 7_200_000];
const lowest = () => 0;
const highest = () => 0.999_999_9;

afterEach(() => vi.unstubAllEnvs());

describe("the stand-in's retry schedule", () => {
  it("waits what the real server waits after attempt n: its table entry, plus 0 to 30 s of jitter", () => {
    for (const [attempt, base] of REAL_MS.entries()) {
      expect(retryDelayMs(attempt, 1, lowest)).toBe(base);
      expect(retryDelayMs(attempt, 1, highest)).toBe(base + 29_999);
      const delay = retryDelayMs(attempt);
      expect(delay).toBeGreaterThanOrEqual(base);
      expect(delay).toBeLessThan(base + 30_000);
    }
    // Past the table, its last entry (2 h).
    expect(retryDelayMs(10, 1, lowest)).toBe(7_200_000);
    expect(retryDelayMs(50, 1, highest)).toBe(7_229_999);
  });

  it("spreads the jitter over the whole 30 s, not a fixed offset", () => {
    const delays = Array.from({ length: 200 }, () => retryDelayMs(0) - 15_000);
    expect(Math.min(...delays)).toBeLessThan(5_000);
    expect(Math.max(...delays)).toBeGreaterThan(25_000);
  });

  it("scales the whole schedule, jitter included, by the test knob", () => {
    expect(retryDelayMs(0, 0.01, lowest)).toBe(150);
    expect(retryDelayMs(0, 0.01, highest)).toBe(450);
    expect(retryDelayMs(2, 0.01, lowest)).toBe(600);
    expect(retryDelayMs(2, 0.01, highest)).toBe(900);
    expect(retryDelayMs(1, 1 / 15, lowest)).toBe(2_000);
  });

  it("reads INNGEST_LOCAL_RETRY_SCALE once, at start: unset means the real schedule, anything but a number > 0 is refused", () => {
    vi.stubEnv("INNGEST_LOCAL_RETRY_SCALE", "");
    expect(createContext({ appUrls: [] }).retryScale).toBe(1);
    vi.stubEnv("INNGEST_LOCAL_RETRY_SCALE", "0.02");
    expect(createContext({ appUrls: [] }).retryScale).toBe(0.02);
    expect(createContext({ appUrls: [], retryScale: 0.5 }).retryScale).toBe(0.5);
    for (const bad of ["0", "-1", "fast", "Infinity"]) {
      expect(() => retryScaleFrom(bad), bad).toThrow(/INNGEST_LOCAL_RETRY_SCALE must be a number > 0/);
    }
  });

  // The app's side of this check (its copy equals this one) is tests/unit/retry-schedule.test.ts.
  it("is the real server's table", () => {
    expect([...RETRY_TABLE_MS]).toEqual(REAL_MS);
  });
});
