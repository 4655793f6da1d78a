import { describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "@/lib/password";
import { isUuid } from "@/lib/ids";

describe("passwords", () => {
  it("hashes with a fresh salt and verifies only the right password", async () => {
    const a = await hashPassword("s3cret pass");
    const b = await hashPassword("s3cret pass");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword("s3cret pass", a)).toBe(true);
    expect(await verifyPassword("s3cret pasS", a)).toBe(false);
    expect(await verifyPassword("", a)).toBe(false);
  });

  it("rejects malformed stored hashes instead of throwing", async () => {
    for (const stored of ["", "plain", "bcrypt$x$y", "scrypt$16384$8$1$$"]) {
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
