import { describe, expect, it } from "vitest";
import { DEV_INNGEST_ENCRYPTION_KEY, DEV_SESSION_PASSWORD, parseEnv } from "@/lib/env";

const SIGNING_KEY = `signkey-prod-${"ab".repeat(32)}`;
const EVENT_KEY = "event-key-0123456789abcdef";
const ENCRYPTION_KEY = "e".repeat(40);
/** What production needs besides the session key: signed Inngest, with its step data encrypted. */
const INNGEST = { INNGEST_SIGNING_KEY: SIGNING_KEY, INNGEST_EVENT_KEY: EVENT_KEY, INNGEST_ENCRYPTION_KEY: ENCRYPTION_KEY };

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
      ...INNGEST,
    });
    expect(env.cookieSecure).toBe(true);
    expect(env.sessionPasswords).toEqual({ "1": "o".repeat(40), "2": "p".repeat(40) });
    expect(env.leaseTtlSeconds).toBe(30);
  });

  it("refuses a TRUST_PROXY that is not a count of proxies, naming it", () => {
    for (const value of ["yes", "-1", "1.5", "100", "10.0.0.1"]) {
      expect(() => parseEnv({ NODE_ENV: "development", TRUST_PROXY: value })).toThrow(/TRUST_PROXY must be the number of proxies/);
    }
    expect(() => parseEnv({ NODE_ENV: "development", TRUST_PROXY: "2" })).not.toThrow();
    expect(() => parseEnv({ NODE_ENV: "development", TRUST_PROXY: "" })).not.toThrow();
  });

  it("refuses an APP_URL that is not an http(s) URL, naming it", () => {
    for (const value of ["claimcheck.example.com", "ftp://claimcheck.example.com", "https://"]) {
      expect(() => parseEnv({ NODE_ENV: "development", APP_URL: value })).toThrow(/APP_URL must be an http\(s\) URL/);
    }
    expect(() => parseEnv({ NODE_ENV: "development", APP_URL: "https://claimcheck.example.com" })).not.toThrow();
  });

  it("refuses a nonsensical lease TTL", () => {
    for (const value of ["0", "-5", "abc", "1.5", "99999"]) {
      expect(() => parseEnv({ NODE_ENV: "development", LEASE_TTL_SECONDS: value })).toThrow(/LEASE_TTL_SECONDS/);
    }
  });

  describe("Inngest in production", () => {
    const prod = { NODE_ENV: "production", SESSION_PASSWORD: "p".repeat(40) } as const;

    it("refuses INNGEST_DEV, whatever its value, naming it", () => {
      for (const value of ["1", "http://127.0.0.1:8288", "false"]) {
        expect(() => parseEnv({ ...prod, ...INNGEST, INNGEST_DEV: value })).toThrow(/INNGEST_DEV must not be set in production/);
      }
    });

    it("requires INNGEST_SIGNING_KEY and INNGEST_EVENT_KEY, naming each", () => {
      expect(() => parseEnv({ ...prod, INNGEST_EVENT_KEY: EVENT_KEY })).toThrow(/INNGEST_SIGNING_KEY must be set in production/);
      expect(() => parseEnv({ ...prod, INNGEST_SIGNING_KEY: SIGNING_KEY })).toThrow(/INNGEST_EVENT_KEY must be set in production/);
      expect(() => parseEnv({ ...prod, INNGEST_SIGNING_KEY: "", INNGEST_EVENT_KEY: EVENT_KEY })).toThrow(/INNGEST_SIGNING_KEY must be set/);
    });

    it("refuses a signing key that is not signkey-<env>-<hex>", () => {
      for (const key of [
        "abcdef",
        `signkey-prod-${"zz".repeat(32)}`,
        `signkey-prod-${"a".repeat(63)}`,
        "signkey-prod-abcd",
        `${"ab".repeat(32)}`,
      ]) {
        expect(() => parseEnv({ ...prod, ...INNGEST, INNGEST_SIGNING_KEY: key })).toThrow(/INNGEST_SIGNING_KEY must look like/);
      }
      expect(() => parseEnv({ ...prod, ...INNGEST, INNGEST_SIGNING_KEY_FALLBACK: "nope" })).toThrow(/INNGEST_SIGNING_KEY_FALLBACK/);
    });

    it("accepts a self-hosted server: INNGEST_BASE_URL with both keys", () => {
      const env = parseEnv({ ...prod, ...INNGEST, INNGEST_BASE_URL: "http://127.0.0.1:8288" });
      expect(env.nodeEnv).toBe("production");
      expect(() => parseEnv({ ...prod, ...INNGEST, INNGEST_BASE_URL: "not a url" })).toThrow(/INNGEST_BASE_URL must be an http\(s\) URL/);
    });

    it("reports every problem at once", () => {
      expect(() => parseEnv({ NODE_ENV: "production", INNGEST_DEV: "1" })).toThrow(
        /INNGEST_DEV[\s\S]*INNGEST_SIGNING_KEY[\s\S]*INNGEST_EVENT_KEY[\s\S]*SESSION_PASSWORD/,
      );
    });

    it("requires INNGEST_ENCRYPTION_KEY (32+ characters, not the dev default), naming it; a fallback decrypts", () => {
      const { INNGEST_ENCRYPTION_KEY: _, ...unencrypted } = INNGEST;
      expect(() => parseEnv({ ...prod, ...unencrypted })).toThrow(/INNGEST_ENCRYPTION_KEY must be set in production/);
      expect(() => parseEnv({ ...prod, ...INNGEST, INNGEST_ENCRYPTION_KEY: DEV_INNGEST_ENCRYPTION_KEY })).toThrow(
        /INNGEST_ENCRYPTION_KEY is the development default/,
      );
      expect(() => parseEnv({ ...prod, ...INNGEST, INNGEST_ENCRYPTION_KEY: "short" })).toThrow(
        /INNGEST_ENCRYPTION_KEY must be at least 32/,
      );
      expect(() => parseEnv({ ...prod, ...INNGEST, INNGEST_ENCRYPTION_KEY_FALLBACK: "short" })).toThrow(
        /INNGEST_ENCRYPTION_KEY_FALLBACK must be at least 32/,
      );
      expect(parseEnv({ ...prod, ...INNGEST }).inngestEncryptionKeys).toEqual([ENCRYPTION_KEY]);
      expect(parseEnv({ ...prod, ...INNGEST, INNGEST_ENCRYPTION_KEY_FALLBACK: "o".repeat(40) }).inngestEncryptionKeys).toEqual([
        ENCRYPTION_KEY,
        "o".repeat(40),
      ]);
      // Outside production a fresh clone runs with the dev-only key.
      expect(parseEnv({ NODE_ENV: "development" }).inngestEncryptionKeys).toEqual([DEV_INNGEST_ENCRYPTION_KEY]);
    });

    it("leaves dev mode alone outside production", () => {
      expect(parseEnv({ NODE_ENV: "development", INNGEST_DEV: "http://127.0.0.1:8288" }).nodeEnv).toBe("development");
    });
  });
});
