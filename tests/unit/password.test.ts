import { randomBytes, scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ARGON2ID, hashPassword, needsRehash, verifyPassword } from "@/lib/password";
import { isUuid } from "@/lib/ids";

/** A hash as lib/password.ts wrote them before Argon2id (scrypt N=2^14, r=8, p=1), built here by hand. */
function legacyScryptHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 16384, r: 8, p: 1 });
  return `scrypt$16384$8$1$${salt.toString("base64")}$${key.toString("base64")}`;
}

describe("passwords", () => {
  it("hashes with Argon2id at OWASP's parameters or stronger, in the self-describing PHC format, with a fresh salt", async () => {
    const a = await hashPassword("s3cret pass");
    const b = await hashPassword("s3cret pass");
    expect(a).not.toBe(b);
    const phc = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(a);
    expect(phc).not.toBeNull();
    const [m, t, p] = phc!.slice(1).map(Number);
    // OWASP Password Storage Cheat Sheet: m=19 MiB, t=2, p=1 at least.
    expect(m).toBeGreaterThanOrEqual(19 * 1024);
    expect(t).toBeGreaterThanOrEqual(2);
    expect(p).toBe(1);
    expect({ m, t, p }).toEqual({ m: ARGON2ID.memoryCost, t: ARGON2ID.timeCost, p: ARGON2ID.parallelism });
    expect(await verifyPassword("s3cret pass", a)).toBe(true);
    expect(await verifyPassword("s3cret pasS", a)).toBe(false);
    expect(await verifyPassword("", a)).toBe(false);
    expect(needsRehash(a)).toBe(false);
  });

  it("still verifies an old scrypt hash, and marks it for rehashing", async () => {
    const old = legacyScryptHash("s3cret pass");
    expect(await verifyPassword("s3cret pass", old)).toBe(true);
    expect(await verifyPassword("s3cret pasS", old)).toBe(false);
    expect(needsRehash(old)).toBe(true);
  });

  it("marks an Argon2id hash with weaker parameters than today's for rehashing", () => {
    const weaker = "$argon2id$v=19$m=4096,t=3,p=1$c29tZXNhbHRzb21lc2FsdA$Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFy";
    expect(needsRehash(weaker)).toBe(true);
    expect(needsRehash(weaker.replace("argon2id", "argon2i"))).toBe(true);
  });

  it("rejects malformed stored hashes instead of throwing", async () => {
    for (const stored of ["", "plain", "bcrypt$x$y", "scrypt$16384$8$1$$", "$argon2id$v=19$m=19456,t=2,p=1$$", "$argon2id$garbage"]) {
      expect(await verifyPassword("x", stored)).toBe(false);
    }
  });
});

describe("isUuid", () => {
  it("accepts uuids and nothing else", () => {
    expect(isUuid("3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f")).toBe(true);
    for (const v of ["", "nope", "3f1c2d4e5a6b4c7d8e9f0a1b2c3d4e5f", "' or 1=1 --", 42, null, undefined]) expect(isUuid(v)).toBe(false);
  });
});
