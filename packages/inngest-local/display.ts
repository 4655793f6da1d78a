// Dev mode only: the app's own encryption key(s) (given as `displayKeys`, or
// INNGEST_LOCAL_DISPLAY_KEYS to the CLI), so the dashboard can show what an encrypted output or
// step output says (docs/decisions/0049 seals them before they reach the server). For display
// only: the stored run, the JSON and GraphQL APIs and what is sent back to the app stay the
// ciphertext. The middleware's own strategy opens them, as the app seals them.
import { LibSodiumEncryptionService } from "@inngest/middleware-encryption/strategies/libSodium";

/** A value the SDK's encryption middleware sealed: `{"__ENCRYPTED__": true, data, …}`. */
export const isSealed = (v: unknown): v is { __ENCRYPTED__: true; data: string; __STRATEGY__?: string } =>
  !!v && typeof v === "object" && (v as Record<string, unknown>).__ENCRYPTED__ === true;

/** A sealed value as opened with a display key, or undefined (no key, or none opens it). */
export type Open = (v: unknown) => { value: unknown } | undefined;

export interface Display {
  /** Whether there are keys at all. */
  readonly on: boolean;
  /** Opens each sealed value among `values` not tried yet (remembered by its ciphertext). */
  prime(values: Iterable<unknown>): Promise<void>;
  /** What prime() opened, synchronously, for the renderer. */
  open: Open;
}

const LIMIT = 10_000;

export function createDisplay(keys: string[]): Display {
  const usable = keys.map((k) => k.trim()).filter(Boolean);
  if (!usable.length) return { on: false, prime: async () => {}, open: () => undefined };
  const service = new LibSodiumEncryptionService(usable);
  /** Ciphertext → what it opened to, or null when no key opened it. */
  const tried = new Map<string, { value: unknown } | null>();
  const sealedData = (v: unknown) =>
    isSealed(v) && typeof v.data === "string" && (v.__STRATEGY__ ?? service.identifier) === service.identifier ? v.data : undefined;
  return {
    on: true,
    async prime(values) {
      const todo = new Set<string>();
      for (const v of values) {
        const data = sealedData(v);
        if (data !== undefined && !tried.has(data)) todo.add(data);
      }
      await Promise.all(
        [...todo].map(async (data) => {
          const opened = await service.decrypt(data).then(
            (value: unknown) => ({ value }),
            () => null,
          );
          if (tried.size >= LIMIT) tried.delete(tried.keys().next().value!);
          tried.set(data, opened);
        }),
      );
    },
    open(v) {
      const data = sealedData(v);
      return data === undefined ? undefined : (tried.get(data) ?? undefined);
    },
  };
}
