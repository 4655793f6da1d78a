// The lease's codes (lib/lease-codes.ts): the sets derived from the statuses, the page's and
// the list's states derived from the status and the closed reason, and the stored summary.
import { describe, expect, it } from "vitest";
import {
  CLOSED_REASONS,
  displayOf,
  IN_FLIGHT_STATUSES,
  isInFlight,
  isTerminal,
  LEASE_DISPLAYS,
  LEASE_STATUSES,
  LIST_STATES,
  listStateOf,
  summaryOf,
  TERMINAL_STATUSES,
} from "@/lib/lease-codes";

describe("lease codes", () => {
  it("every status is in flight or terminal, never both, in the order of the check constraint", () => {
    expect(LEASE_STATUSES).toEqual(["open", "proposed", "applied", "expired", "rejected"]);
    expect(IN_FLIGHT_STATUSES).toEqual(["open", "proposed"]);
    for (const status of LEASE_STATUSES) expect(isInFlight(status) !== isTerminal(status), status).toBe(true);
    expect([...TERMINAL_STATUSES].sort()).toEqual(["applied", "expired", "rejected"]);
    expect(isInFlight("nonsense") || isTerminal("nonsense")).toBe(false);
  });

  it("every status and reason has a display and a list state; a rejected lease is stopped in the list, whatever its display", () => {
    const displays = new Set<string>();
    for (const status of LEASE_STATUSES) {
      for (const closed_reason of [...CLOSED_REASONS, null]) {
        const display = displayOf({ status, closed_reason });
        displays.add(display);
        const state = listStateOf({ status, closed_reason });
        expect(LIST_STATES).toContain(state);
        if (status === "rejected") expect(state).toBe("stopped");
        else expect(state).toBe(display);
      }
    }
    expect([...displays].sort()).toEqual([...LEASE_DISPLAYS].sort());
  });

  it("summaryOf gives the stored summary as it is, and null for a proposal that holds none", () => {
    expect(summaryOf({ summary: "S", model: "m" })).toBe("S");
    expect(summaryOf({ summary: "" })).toBe("");
    for (const proposal of [null, undefined, "S", 7, {}, { summary: 7 }, []]) expect(summaryOf(proposal)).toBeNull();
  });
});
