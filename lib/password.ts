import "server-only";
// Password hashes: Argon2id (@node-rs/argon2) at OWASP's parameters, in the PHC string format
// (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`), so the algorithm and cost travel with each hash.
// Hashes from before (scrypt, `scrypt$N$r$p$salt$key`) still verify, and sign-in replaces
// them (needsRehash). Why: docs/decisions/0047-argon2id-passwords.md.
import { scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { hash, verify, type Algorithm } from "@node-rs/argon2";

/** OWASP Password Storage Cheat Sheet's first Argon2id option: 19 MiB, 2 passes, 1 lane. */
export const ARGON2ID = {
  // Algorithm.Argon2id; the package declares it a `const enum`, which isolated modules cannot read.
  algorithm: 2 satisfies Algorithm,
  memoryCost: 19 * 1024,
  timeCost: 2,
  parallelism: 1,
} as const;

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

export async function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2ID);
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (stored.startsWith("scrypt$")) return verifyScrypt(password, stored);
  if (!PHC.test(stored)) return false;
  try {
    // The cost is read from the stored string, so a hash made with other parameters still verifies.
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** Whether a stored hash is of an older kind or cost than hashPassword makes now: sign-in then stores a new one. */
export function needsRehash(stored: string): boolean {
  const phc = PHC.exec(stored);
  if (!phc) return true;
  const [m, t, p] = phc.slice(1).map(Number);
  return m! < ARGON2ID.memoryCost || t! < ARGON2ID.timeCost || p !== ARGON2ID.parallelism;
}

// Verifying against this when the email is unknown costs what a known user's check costs, so
// timing does not reveal which emails have accounts. Made by hashPassword, so it is always of
// today's kind.
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword("not-a-real-password");
  return dummyHash;
}

// ---------------------------------------------------------------------------------------
// scrypt hashes from before Argon2id (N=2^14, r=8, p=1): verified, never written.

function scrypt(password: string, salt: Buffer, keyLen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, keyLen, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

async function verifyScrypt(password: string, stored: string): Promise<boolean> {
  const [, n, r, p, saltB64, keyB64] = stored.split("$");
  if (!n || !r || !p || !saltB64 || !keyB64) return false;
  const expected = Buffer.from(keyB64, "base64");
  try {
    const actual = await scrypt(password, Buffer.from(saltB64, "base64"), expected.length, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
    });
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  } catch {
    return false;
  }
}
