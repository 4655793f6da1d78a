import "server-only";
import { z } from "zod";

/** Used only outside production, so a fresh clone runs with no configuration. */
export const DEV_SESSION_PASSWORD = "claimcheck-dev-only-session-key-do-not-use-in-production";

const intFromEnv = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const EnvSchema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    SESSION_PASSWORD: z.string().optional(),
    // Rotation: the key being retired; cookies sealed with it still open, new ones use SESSION_PASSWORD.
    SESSION_PASSWORD_PREVIOUS: z.string().min(32).optional(),
    SESSION_COOKIE_SECURE: z.enum(["true", "false"]).optional(),
    LEASE_TTL_SECONDS: intFromEnv(90, 1, 3600),
  })
  .transform((env, ctx) => {
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
    return {
      nodeEnv: env.NODE_ENV,
      sessionPassword,
      sessionPasswords: (env.SESSION_PASSWORD_PREVIOUS
        ? { "1": env.SESSION_PASSWORD_PREVIOUS, "2": sessionPassword }
        : { "1": sessionPassword }) as Record<string, string>,
      cookieSecure: env.SESSION_COOKIE_SECURE ? env.SESSION_COOKIE_SECURE === "true" : env.NODE_ENV === "production",
      leaseTtlSeconds: env.LEASE_TTL_SECONDS,
    };
  });

export type AppEnv = z.output<typeof EnvSchema>;

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
