// docs/contract.md against the code: every error code the app answers is in the one status map
// and in the contract with that status, every closed_reason has its row in the lifecycle table,
// and the rows the review found untrue say what the code does.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_STATUS, problem, RETRY_AFTER_S } from "@/app/_lib/http";
import { CLOSED_REASONS } from "@/lib/lease-codes";

const ROOT = path.resolve(import.meta.dirname, "../..");
const contract = fs.readFileSync(path.join(ROOT, "docs/contract.md"), "utf8");

/** `409 \`a\` / \`b\``: each code the contract names after a status, with the statuses it gives it. */
function documentedCodes(): Map<string, Set<number>> {
  const found = new Map<string, Set<number>>();
  for (const m of contract.matchAll(/\b([1-5]\d\d)\s+((?:`[a-z_]+`(?:\s*\/\s*)?)+)/g)) {
    for (const code of m[2]!.matchAll(/`([a-z_]+)`/g)) {
      const statuses = found.get(code[1]!) ?? new Set<number>();
      statuses.add(Number(m[1]));
      found.set(code[1]!, statuses);
    }
  }
  return found;
}

/** Every `detail: "<code>"` written out in the app's sources (the codes not sent through problem()). */
function literalCodes(dir: string): string[] {
  const codes: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) codes.push(...literalCodes(file));
    else if (/\.tsx?$/.test(entry.name)) {
      for (const m of fs.readFileSync(file, "utf8").matchAll(/detail: "([a-z_]+)"/g)) codes.push(m[1]!);
    }
  }
  return codes;
}

/** The contract's row (one line of a table) that starts with `start`. */
const row = (start: string) => contract.split("\n").find((line) => line.startsWith(start)) ?? "";

describe("docs/contract.md says what the code answers", () => {
  it("every code a route sends is in the status map (ERROR_STATUS)", () => {
    for (const code of literalCodes(path.join(ROOT, "app"))) expect(ERROR_STATUS, code).toHaveProperty(code);
  });

  it("every code of the status map is in the contract with its status, and the contract names no other", () => {
    const documented = documentedCodes();
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      // A bug's answer: the contract promises there is none.
      if (code === "internal_error") continue;
      expect({ code, statuses: [...(documented.get(code) ?? [])] }).toEqual({ code, statuses: expect.arrayContaining([status]) });
    }
    for (const code of documented.keys()) expect(ERROR_STATUS, code).toHaveProperty(code);
  });

  it("POST /api/leases: 409 lease_in_flight names who holds it; the 200 carries the lease's current status", () => {
    const open = row("| `POST /api/leases`");
    expect(open).toContain("409 `lease_in_flight`");
    expect(open).toContain("held_by");
    expect(open).toMatch(/200[^|]*"proposed"/);
    expect(row("| `GET /api/invoices/:id`")).toContain("lease_held_by");
  });

  it("the event stream: 503 events_unavailable with Retry-After; too_many_streams counted per app process", () => {
    const stream = row("| `GET /api/leases/:id/events`");
    expect(stream).toContain("503 `events_unavailable` + `Retry-After`");
    expect(stream).toMatch(/429 `too_many_streams` \+ `Retry-After` \([^)]*per app process/);
  });

  it("every code the contract answers with a Retry-After has its seconds in RETRY_AFTER_S, and problem() sends them", () => {
    const withRetry = new Set([...contract.matchAll(/`([a-z_]+)` \+ `Retry-After`/g)].map((m) => m[1]!));
    // The rate limiter's own figure, and the time until a budget's period resets: the route passes them.
    withRetry.delete("too_many_attempts");
    withRetry.delete("budget_exhausted");
    expect([...withRetry].sort()).toEqual(Object.keys(RETRY_AFTER_S).sort());
    for (const code of withRetry) {
      expect(problem(code as keyof typeof ERROR_STATUS).headers.get("retry-after"), code).toBe(
        String(RETRY_AFTER_S[code as keyof typeof ERROR_STATUS]),
      );
    }
    expect(problem("too_many_attempts", new Headers({ "retry-after": "42" })).headers.get("retry-after")).toBe("42");
  });

  it("every closed_reason has its row in the lifecycle table", () => {
    const reasons = new Set([...contract.matchAll(/^\| `(?:expired|rejected)` \| `([a-z_]+)` \|/gm)].map((m) => m[1]!));
    expect([...reasons].sort()).toEqual([...CLOSED_REASONS].sort());
  });
});
