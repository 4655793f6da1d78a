// The app's step data as the Inngest server keeps it is ciphertext (inngest/encryption.ts,
// docs/decisions/0049): the test servers run with this key, and the tests open what they
// read back from the stand-in with it.
import { isEncryptedValue } from "@inngest/middleware-encryption";
import { LibSodiumEncryptionService } from "@inngest/middleware-encryption/strategies/libSodium";

export const TEST_INNGEST_ENCRYPTION_KEY = "claimcheck-integration-tests-inngest-encryption-key-0123456789";
/** lib/env.ts's DEV_INNGEST_ENCRYPTION_KEY, which in-process tests run with (lib/env.ts is server-only). */
const DEV_KEY = "claimcheck-dev-only-inngest-encryption-key-do-not-use-in-production";
const service = new LibSodiumEncryptionService([TEST_INNGEST_ENCRYPTION_KEY, DEV_KEY]);

/** A value as the app wrote it: an encrypted output opened, an event's encrypted fields opened. */
export async function opened<T = unknown>(value: unknown): Promise<T> {
  if (isEncryptedValue(value)) return (await service.decrypt(value.data)) as T;
  if (!value || typeof value !== "object" || Array.isArray(value)) return value as T;
  const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, isEncryptedValue(v) ? await service.decrypt(v.data) : v] as const));
  return Object.fromEntries(entries) as T;
}
