import "server-only";
import { z } from "zod";
import { DEV_INNGEST_ENCRYPTION_KEY } from "./dev-keys";

/** Used only outside production, so a fresh clone runs with no configuration. */
export const DEV_SESSION_PASSWORD = "claimcheck-dev-only-session-key-do-not-use-in-production";
/** The same for the key that encrypts step data at the Inngest server (inngest/encryption.ts): lib/dev-keys.ts. */
export { DEV_INNGEST_ENCRYPTION_KEY };

const intFromEnv = (fallback: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(fallback);

// An empty variable counts as unset, as the Inngest SDK treats it.
const optionalText = z.preprocess((v) => (v === "" ? undefined : v), z.string().optional());
const optionalUrl = (name: string) =>
  z.preprocess((v) => (v === "" ? undefined : v), z.url({ protocol: /^https?$/, error: `${name} must be an http(s) URL.` }).optional());

/**
 * The shape the SDK strips and hashes: `signkey-<env>-<hex>`; Inngest Cloud and `inngest start`
 * both use 32 random bytes. Checked here so a typo stops start-up instead of failing every call.
 */
const SIGNING_KEY = /^signkey-\w+-(?:[0-9a-f]{2}){16,}$/i;
/** Goes into the event URL path (`/e/<key>`). */
const EVENT_KEY = /^[\w-]{16,}$/;

const EnvSchema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    SESSION_PASSWORD: z.string().optional(),
    // Rotation: the key being retired; cookies sealed with it still open, new ones use SESSION_PASSWORD.
    SESSION_PASSWORD_PREVIOUS: z.string().min(32).optional(),
    SESSION_COOKIE_SECURE: z.enum(["true", "false"]).optional(),
    LEASE_TTL_SECONDS: intFromEnv(90, 1, 3600),
    // The public origin behind a Host-rewriting proxy (lib/origin.ts); checked here so a bad
    // value stops start-up instead of refusing every write.
    APP_URL: optionalUrl("APP_URL"),
    // Read per request by lib/rate-limit.ts; checked here so a typo stops start-up, not sign-in.
    TRUST_PROXY: z.preprocess(
      (v) => (v === "" ? undefined : v),
      z
        .string()
        .trim()
        .regex(/^\d{1,2}$/, "TRUST_PROXY must be the number of proxies in front of the app (0-99).")
        .optional(),
    ),
    // Read by the Inngest SDK itself; validated here so production never serves its route unsigned.
    INNGEST_DEV: optionalText,
    INNGEST_SIGNING_KEY: optionalText,
    INNGEST_SIGNING_KEY_FALLBACK: optionalText,
    INNGEST_EVENT_KEY: optionalText,
    INNGEST_BASE_URL: optionalUrl("INNGEST_BASE_URL"),
    INNGEST_API_BASE_URL: optionalUrl("INNGEST_API_BASE_URL"),
    INNGEST_EVENT_API_BASE_URL: optionalUrl("INNGEST_EVENT_API_BASE_URL"),
    // Step outputs and the run nonce, encrypted before they reach the Inngest server
    // (docs/decisions/0049); the fallback still decrypts while a key is rotated out.
    INNGEST_ENCRYPTION_KEY: optionalText,
    INNGEST_ENCRYPTION_KEY_FALLBACK: optionalText,
  })
  .transform((env, ctx) => {
    const inngestProblems = [...inngestConfigProblems(env), ...encryptionKeyProblems(env)];
    for (const message of inngestProblems) ctx.addIssue({ code: "custom", message });
    const sessionPassword = env.SESSION_PASSWORD ?? (env.NODE_ENV === "production" ? undefined : DEV_SESSION_PASSWORD);
    if (!sessionPassword) {
      ctx.addIssue({ code: "custom", message: "SESSION_PASSWORD must be set in production (32+ characters)." });
      return z.NEVER;
    }
    if (sessionPassword.length < 32) {
      ctx.addIssue({ code: "custom", message: "SESSION_PASSWORD must be at least 32 characters." });
      return z.NEVER;
    }
    if (env.NODE_ENV === "production" && sessionPassword === DEV_SESSION_PASSWORD) {
      ctx.addIssue({
        code: "custom",
        message: "SESSION_PASSWORD is the development default, which is refused in production.",
      });
      return z.NEVER;
    }
    if (inngestProblems.length) return z.NEVER;
    return {
      nodeEnv: env.NODE_ENV,
      sessionPassword,
      sessionPasswords: (env.SESSION_PASSWORD_PREVIOUS
        ? { "1": env.SESSION_PASSWORD_PREVIOUS, "2": sessionPassword }
        : { "1": sessionPassword }) as Record<string, string>,
      cookieSecure: env.SESSION_COOKIE_SECURE ? env.SESSION_COOKIE_SECURE === "true" : env.NODE_ENV === "production",
      leaseTtlSeconds: env.LEASE_TTL_SECONDS,
      /** The first encrypts; every one decrypts (a rotation keeps the old key as the fallback). */
      inngestEncryptionKeys: [
        env.INNGEST_ENCRYPTION_KEY ?? DEV_INNGEST_ENCRYPTION_KEY,
        ...(env.INNGEST_ENCRYPTION_KEY_FALLBACK ? [env.INNGEST_ENCRYPTION_KEY_FALLBACK] : []),
      ],
    };
  });

/** Like SESSION_PASSWORD: a dev-only default, which production refuses; 32+ characters. */
function encryptionKeyProblems(env: {
  NODE_ENV: string;
  INNGEST_ENCRYPTION_KEY?: string;
  INNGEST_ENCRYPTION_KEY_FALLBACK?: string;
}): string[] {
  const problems: string[] = [];
  const production = env.NODE_ENV === "production";
  if (env.INNGEST_ENCRYPTION_KEY === undefined) {
    if (production)
      problems.push("INNGEST_ENCRYPTION_KEY must be set in production (32+ characters): it encrypts step data at the Inngest server.");
  } else if (env.INNGEST_ENCRYPTION_KEY.length < 32) {
    problems.push("INNGEST_ENCRYPTION_KEY must be at least 32 characters.");
  } else if (production && env.INNGEST_ENCRYPTION_KEY === DEV_INNGEST_ENCRYPTION_KEY) {
    problems.push("INNGEST_ENCRYPTION_KEY is the development default, which is refused in production.");
  }
  if (env.INNGEST_ENCRYPTION_KEY_FALLBACK !== undefined && env.INNGEST_ENCRYPTION_KEY_FALLBACK.length < 32) {
    problems.push("INNGEST_ENCRYPTION_KEY_FALLBACK must be at least 32 characters.");
  }
  return problems;
}

export type AppEnv = z.output<typeof EnvSchema>;

/**
 * Production talks to Inngest only in its signed mode: every call to /api/inngest must carry
 * a valid X-Inngest-Signature, and events need the event key. Dev mode (INNGEST_DEV) serves
 * the route to anyone, so production refuses it outright rather than trusting its value.
 */
function inngestConfigProblems(env: {
  NODE_ENV: string;
  INNGEST_DEV?: string;
  INNGEST_SIGNING_KEY?: string;
  INNGEST_SIGNING_KEY_FALLBACK?: string;
  INNGEST_EVENT_KEY?: string;
}): string[] {
  const problems: string[] = [];
  const keyShape = "signkey-<env>-<hex>, at least 32 hex digits";
  if (env.INNGEST_SIGNING_KEY !== undefined && !SIGNING_KEY.test(env.INNGEST_SIGNING_KEY)) {
    problems.push(`INNGEST_SIGNING_KEY must look like ${keyShape}.`);
  }
  if (env.INNGEST_SIGNING_KEY_FALLBACK !== undefined && !SIGNING_KEY.test(env.INNGEST_SIGNING_KEY_FALLBACK)) {
    problems.push(`INNGEST_SIGNING_KEY_FALLBACK must look like ${keyShape}.`);
  }
  if (env.INNGEST_EVENT_KEY !== undefined && !EVENT_KEY.test(env.INNGEST_EVENT_KEY)) {
    problems.push("INNGEST_EVENT_KEY must be at least 16 letters, digits, '-' or '_'.");
  }
  if (env.NODE_ENV !== "production") return problems;
  if (env.INNGEST_DEV !== undefined) {
    problems.push(
      "INNGEST_DEV must not be set in production: it serves /api/inngest unsigned. Use INNGEST_SIGNING_KEY and INNGEST_EVENT_KEY (and INNGEST_BASE_URL for a self-hosted server).",
    );
  }
  if (env.INNGEST_SIGNING_KEY === undefined) {
    problems.push("INNGEST_SIGNING_KEY must be set in production: it authenticates every call to /api/inngest.");
  }
  if (env.INNGEST_EVENT_KEY === undefined) {
    problems.push("INNGEST_EVENT_KEY must be set in production: Inngest refuses events without it.");
  }
  return problems;
}

export function parseEnv(env: NodeJS.ProcessEnv): AppEnv {
  const result = EnvSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "env"}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  return result.data;
}

let cached: AppEnv | undefined;
export function appEnv(): AppEnv {
  cached ??= parseEnv(process.env);
  return cached;
}
