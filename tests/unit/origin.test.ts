// Which Origin counts as ours (lib/origin.ts): the Host header, or APP_URL when set; never
// X-Forwarded-Host.
import { afterEach, describe, expect, it, vi } from "vitest";
import { configuredOrigin, isForeignOrigin, isStateChanging } from "@/lib/origin";

const URL_ = "http://127.0.0.1:3000/api/leases";
const h = (init: Record<string, string>) => new Headers(init);

afterEach(() => vi.unstubAllEnvs());

describe("isForeignOrigin without APP_URL: the Host header names us", () => {
  it("no Origin is not foreign (curl, the Inngest server)", () => {
    expect(isForeignOrigin(h({ host: "app.example" }), URL_)).toBe(false);
  });
  it("an Origin whose host is the Host header is ours, whatever the scheme", () => {
    expect(isForeignOrigin(h({ host: "app.example", origin: "https://app.example" }), URL_)).toBe(false);
    expect(isForeignOrigin(h({ host: "APP.example:8080", origin: "http://app.example:8080" }), URL_)).toBe(false);
  });
  it("another host, another port, a look-alike, 'null' and garbage are foreign", () => {
    for (const origin of ["http://evil.example", "http://app.example:8081", "http://app.example.evil.example", "null", "not a url"]) {
      expect(isForeignOrigin(h({ host: "app.example:8080", origin }), URL_), origin).toBe(true);
    }
  });
  it("X-Forwarded-Host is not trusted", () => {
    expect(isForeignOrigin(h({ host: "app.example", origin: "http://evil.example", "x-forwarded-host": "evil.example" }), URL_)).toBe(true);
  });
  it("without a Host header the request URL's host is ours", () => {
    expect(isForeignOrigin(h({ origin: "http://127.0.0.1:3000" }), URL_)).toBe(false);
    expect(isForeignOrigin(h({ origin: "http://localhost:3000" }), URL_)).toBe(true);
  });
});

describe("isForeignOrigin with APP_URL: exactly that origin", () => {
  it("accepts the configured origin only, whatever Host says", () => {
    vi.stubEnv("APP_URL", "https://claimcheck.example/");
    expect(isForeignOrigin(h({ host: "127.0.0.1:3000", origin: "https://claimcheck.example" }), URL_)).toBe(false);
    expect(isForeignOrigin(h({ host: "evil.example", origin: "https://evil.example" }), URL_)).toBe(true);
    expect(isForeignOrigin(h({ host: "claimcheck.example", origin: "http://claimcheck.example" }), URL_)).toBe(true);
  });
  it("refuses a malformed APP_URL loudly", () => {
    expect(() => configuredOrigin("claimcheck.example")).toThrow(/APP_URL/);
    expect(() => configuredOrigin("ftp://claimcheck.example")).toThrow(/APP_URL/);
    expect(configuredOrigin("http://127.0.0.1:3000/x")).toBe("http://127.0.0.1:3000");
  });
});

it("only GET, HEAD and OPTIONS are safe", () => {
  expect(["GET", "HEAD", "OPTIONS", "get"].map(isStateChanging)).toEqual([false, false, false, false]);
  expect(["POST", "PUT", "PATCH", "DELETE"].map(isStateChanging)).toEqual([true, true, true, true]);
});
