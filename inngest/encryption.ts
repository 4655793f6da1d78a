// Step data encrypted before it leaves the app for the Inngest server (Inngest Cloud or a
// self-hosted one), with @inngest/middleware-encryption: every step output and the function's
// output, and the lease/opened event's run nonce. What stays plain, and how a key is rotated:
// docs/decisions/0049-step-data-encrypted-at-the-inngest-server.md.
import { encryptionMiddleware, isEncryptedValue, type EncryptionService } from "@inngest/middleware-encryption";
import { LibSodiumEncryptionService } from "@inngest/middleware-encryption/strategies/libSodium";
import { appEnv } from "@/lib/env";

/**
 * The middleware's own strategy (libsodium's secretbox, "inngest/libsodium"), built on first
 * use: the client is created when its module loads, the build included, and the keys come
 * from lib/env.ts, which is read once the server runs.
 */
class LazyLibSodium implements EncryptionService {
  readonly identifier = "inngest/libsodium";
  #service: LibSodiumEncryptionService | undefined;
  get #keys() {
    return (this.#service ??= new LibSodiumEncryptionService(appEnv().inngestEncryptionKeys));
  }
  encrypt(value: unknown) {
    return this.#keys.encrypt(value);
  }
  decrypt(value: string) {
    return this.#keys.decrypt(value);
  }
}

const service = new LazyLibSodium();

/** The event field encrypted: the run nonce. The lease id stays plain for cancelOn. */
export const ENCRYPTED_EVENT_FIELD = "runNonce";

export const StepDataEncryption = encryptionMiddleware({
  // Unused with a service of our own: the package reads `key` only to build its default one
  // (and its legacy v0 decryption, which no data here ever had).
  key: "",
  encryptionService: service,
  eventEncryptionField: ENCRYPTED_EVENT_FIELD,
});

/**
 * An event's data with its encrypted fields opened. The middleware opens the triggering
 * event only: a failure handler gets the event that failed nested in `inngest/function.failed`.
 */
export async function decryptEventData(data: unknown): Promise<unknown> {
  if (!data || typeof data !== "object" || Array.isArray(data)) return data;
  const entries = await Promise.all(
    Object.entries(data).map(async ([k, v]) => [k, isEncryptedValue(v) ? await service.decrypt(v.data) : v] as const),
  );
  return Object.fromEntries(entries);
}
