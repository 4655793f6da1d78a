import { describe, expect, it } from "vitest";
import { DEV_SESSION_PASSWORD, parseEnv } from "@/lib/env";

describe("parseEnv", () => {
  it("uses the dev key outside production, so a fresh clone runs", () => {
    const env = parseEnv({ NODE_ENV: "development" });
    expect(env.sessionPassword).toBe(DEV_SESSION_PASSWORD);
    expect(env.leaseTtlSeconds).toBe(90);
    expect(env.cookieSecure).toBe(false);
  });

  it("refuses production without SESSION_PASSWORD, naming it", () => {
    expect(() => parseEnv({ NODE_ENV: "production" })).toThrow(/SESSION_PASSWORD must be set/);
  });

  it("refuses the dev default in production", () => {
    expect(() => parseEnv({ NODE_ENV: "production", SESSION_PASSWORD: DEV_SESSION_PASSWORD })).toThrow(/development default/);
  });

  it("refuses a key shorter than 32 characters", () => {
    expect(() => parseEnv({ NODE_ENV: "development", SESSION_PASSWORD: "short" })).toThrow(/at least 32/);
  });

  it("accepts a real key in production, with secure cookies and a rotation map", () => {
    const env = parseEnv({
      NODE_ENV: "production",
      SESSION_PASSWORD: "p".repeat(40),
      SESSION_PASSWORD_PREVIOUS: "o".repeat(40),
      LEASE_TTL_SECONDS: "30",
    });
    expect(env.cookieSecure).toBe(true);
    expect(env.sessionPasswords).toEqual({ "1": "o".repeat(40), "2": "p".repeat(40) });
    expect(env.leaseTtlSeconds).toBe(30);
  });

  it("refuses a nonsensical lease TTL", () => {
    for (const value of ["0", "-5", "abc", "1.5", "99999"]) {
      expect(() => parseEnv({ NODE_ENV: "development", LEASE_TTL_SECONDS: value })).toThrow(/LEASE_TTL_SECONDS/);
    }
  });
});
