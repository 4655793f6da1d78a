import { describe, expect, it } from "vitest";
import { safeReturnPath, signInPath } from "@/lib/return-path";

describe("safeReturnPath: where signing in may send the user", () => {
  it.each([
    ["/invoices", "/invoices"],
    ["/invoices/0b6f2c1e-6a44-4a43-9d2c-0c8a7f3f0a11", "/invoices/0b6f2c1e-6a44-4a43-9d2c-0c8a7f3f0a11"],
    ["/invoices?state=proposed&sort=due-soonest", "/invoices?state=proposed&sort=due-soonest"],
    ["/invoices?_rsc=abc&state=none", "/invoices?state=none"],
    ["/invoices#history", "/invoices"],
  ])("keeps our own page %j", (value, expected) => {
    expect(safeReturnPath(value)).toBe(expected);
  });

  it.each([
    "//evil.example",
    "//evil.example/invoices",
    "///evil.example",
    "/\\evil.example",
    "/\\/evil.example",
    "\\\\evil.example",
    "\\/evil.example",
    "https://evil.example",
    "https://evil.example/invoices",
    "HTTPS://evil.example",
    "http:evil.example",
    "http:/invoices",
    "/%2F%2Fevil.example",
    "/%2f%2fevil.example",
    "/%5Cevil.example",
    "/invoices/..%2F..%2F%2Fevil.example",
    "/invoices/../../evil.example",
    "/invoices/%2e%2e/%2e%2e/evil.example",
    "/invoices/..",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "/invoices\r\nSet-Cookie: x=1",
    "/invoices\nLocation: //evil.example",
    "/invoices%0d%0aSet-Cookie:%20x=1",
    "/invoices\u0000",
    "/invoices\u2028",
    " /invoices",
    "\t//evil.example",
    "/invoices /x",
    "/api/session",
    "/sign-in",
    "/sign-out",
    "/",
    "/invoicesx",
    "",
    "x".repeat(3000),
    undefined,
    null,
    42,
    ["/invoices"],
  ])("refuses %j", (value) => {
    expect(safeReturnPath(value)).toBeNull();
  });
});

describe("signInPath", () => {
  it("adds next only when there is one, encoded", () => {
    expect(signInPath(null)).toBe("/sign-in");
    expect(signInPath("/invoices?state=none")).toBe("/sign-in?next=%2Finvoices%3Fstate%3Dnone");
    expect(signInPath("/invoices", { "signed-out": "1" })).toBe("/sign-in?signed-out=1&next=%2Finvoices");
  });
});
