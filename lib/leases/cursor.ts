import "server-only";
// The `events_before` cursor as clients see it: the event id it stands for, sealed to its lease
// (docs/decisions/0046-a-cursor-is-sealed-to-its-lease.md). Event ids are one counter for every
// lease, so a bare id told a user how many events everyone else made between two of her reads.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { appEnv } from "@/lib/env";
import { canonicalKey } from "@/lib/ids";

type Keys = { cipher: Buffer; mac: Buffer };

const keysFor = new Map<string, Keys>();

/** Two keys of the session password (HKDF), so a cursor's key is never the cookie's. */
function keys(password: string): Keys {
  let k = keysFor.get(password);
  if (!k) {
    const bytes = Buffer.from(hkdfSync("sha256", password, "claimcheck", "events_before cursor v1", 64));
    k = { cipher: bytes.subarray(0, 32), mac: bytes.subarray(32) };
    keysFor.set(password, k);
  }
  return k;
}

/** The current key first, then the one being retired (SESSION_PASSWORD_PREVIOUS), as cookies open. */
function keyring(): Keys[] {
  const env = appEnv();
  const previous = Object.values(env.sessionPasswords).filter((p) => p !== env.sessionPassword);
  return [env.sessionPassword, ...previous].map(keys);
}

const tagOf = (k: Keys, leaseId: string) => createHmac("sha256", k.mac).update(canonicalKey(leaseId)).digest().subarray(0, 8);

/**
 * One AES block (a pseudorandom permutation: the same event always gives the same cursor, and
 * no two cursors show how far apart their events are): the event id, then 8 bytes that bind it
 * to the lease. 22 characters of base64url.
 */
export function sealEventsCursor(leaseId: string, eventId: number): string {
  const k = keyring()[0]!;
  const block = Buffer.alloc(16);
  block.writeBigUInt64BE(BigInt(eventId));
  tagOf(k, leaseId).copy(block, 8);
  const cipher = createCipheriv("aes-256-ecb", k.cipher, null).setAutoPadding(false);
  return Buffer.concat([cipher.update(block), cipher.final()]).toString("base64url");
}

const SEALED = /^[A-Za-z0-9_-]{22}$/;

/**
 * A cursor as a client sends it back for the lease `leaseId`: the event id, or "invalid" for
 * anything this app did not seal for that lease (garbage, another lease's cursor, a key long
 * retired). Absent (null) is the latest page. Decided without the database.
 */
export function openEventsCursor(leaseId: string, value: string | null): number | null | "invalid" {
  if (value === null) return null;
  if (!SEALED.test(value)) return "invalid";
  const sealed = Buffer.from(value, "base64url");
  for (const k of keyring()) {
    const decipher = createDecipheriv("aes-256-ecb", k.cipher, null).setAutoPadding(false);
    const block = Buffer.concat([decipher.update(sealed), decipher.final()]);
    if (!timingSafeEqual(block.subarray(8), tagOf(k, leaseId))) continue;
    const id = block.readBigUInt64BE();
    return id >= 1n && id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : "invalid";
  }
  return "invalid";
}
