// Password hashes over sign-in, through the real route on a real database: an old scrypt hash
// is replaced by an Argon2id one at the first successful sign-in, and an unknown email costs
// the same verification as a known one (asserted by what is verified, not by a stopwatch).
import { randomBytes, randomUUID, scryptSync } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { appUser } from "@/db/schema";
import * as password from "@/lib/password";
import { api } from "../../support/api";
import { makeUser, openTestDb, PASSWORD, type TestDb } from "../../support/db";

// Every verification sign-in makes, seen as it happens (the real function still runs).
vi.mock("@/lib/password", async (original) => {
  const real = await original<typeof import("@/lib/password")>();
  return { ...real, verifyPassword: vi.fn(real.verifyPassword) };
});
const verifyCalls = () => vi.mocked(password.verifyPassword).mock.calls.map(([, stored]) => stored);

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
});
afterAll(() => t?.close());

/** A hash as lib/password.ts wrote them before Argon2id (scrypt N=2^14, r=8, p=1), built here by hand. */
function legacyScryptHash(secret: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(secret, salt, 32, { N: 16384, r: 8, p: 1 });
  return `scrypt$16384$8$1$${salt.toString("base64")}$${key.toString("base64")}`;
}

/** The hash's kind and cost, without its salt and key. */
const kindOf = (stored: string) => stored.split("$").slice(0, 4).join("$");

const signIn = (email: string, secret: string) => api("POST", "/api/session", { json: { email, password: secret } });
const storedHash = async (id: string) =>
  (await t.db.select({ hash: appUser.passwordHash }).from(appUser).where(eq(appUser.id, id)))[0]!.hash;

describe("an old scrypt hash", () => {
  it("is replaced by Argon2id at the next successful sign-in, and the sign-in after that still works", async () => {
    const user = await makeUser(t.db, "Legacy");
    const old = legacyScryptHash(PASSWORD);
    await t.db.update(appUser).set({ passwordHash: old }).where(eq(appUser.id, user.id));

    // A wrong password leaves the old hash alone.
    expect((await signIn(user.email, "wrong")).status).toBe(401);
    expect(await storedHash(user.id)).toBe(old);

    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    const upgraded = await storedHash(user.id);
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/);
    expect(password.needsRehash(upgraded)).toBe(false);

    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    expect(await storedHash(user.id)).toBe(upgraded);
    expect((await signIn(user.email, "wrong")).status).toBe(401);
  });
});

describe("an unknown email", () => {
  it("is verified against a hash of today's kind and cost, exactly as a known user's password is", async () => {
    const user = await makeUser(t.db, "Known");
    vi.mocked(password.verifyPassword).mockClear();
    expect((await signIn(user.email, "wrong")).status).toBe(401);
    expect((await signIn(`nobody-${randomUUID().slice(0, 8)}@example.test`, "wrong")).status).toBe(401);
    const [known, unknown] = verifyCalls();
    expect(verifyCalls()).toHaveLength(2);
    expect(kindOf(unknown!)).toBe(kindOf(known!));
    expect(kindOf(unknown!)).toBe(kindOf(await password.hashPassword("any")));
    expect(password.needsRehash(unknown!)).toBe(false);
  });
});
