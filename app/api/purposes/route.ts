import { authedRoute, json } from "@/app/_lib/http";
import { appEnv } from "@/lib/env";
import { PURPOSE_DEFINITIONS, PURPOSES } from "@/lib/purposes";

// GET /api/purposes – the registry's purposes the caller's role may request, in the registry's
// order. Only what a client needs to offer and explain them: never the prompt's text. A purpose
// with no lifetime of its own gets the one open gives it (LEASE_TTL_SECONDS), so the figure
// shown is the one the lease will have.
export const GET = authedRoute(async ({ actor }) =>
  json(
    PURPOSES.map((name) => PURPOSE_DEFINITIONS[name])
      .filter((purpose) => (purpose.roles as readonly string[]).includes(actor.role))
      .map((purpose) => ({
        name: purpose.name,
        title: purpose.title,
        description: purpose.description,
        roles: purpose.roles,
        target: purpose.target,
        ttl_seconds: purpose.ttlSeconds ?? appEnv().leaseTtlSeconds,
        prompt_version: purpose.promptVersion,
      })),
  ),
);
