// Integration tests run against one database kind per run: PostgreSQL when DATABASE_URL is
// set and TEST_DB is not "pglite", otherwise embedded PGlite. For PostgreSQL a fresh,
// migrated template database is made for this run; each test file clones its own from it.
import type { TestProject } from "vitest/node";
import postgres from "postgres";

declare module "vitest" {
  export interface ProvidedContext {
    dbKind: "postgres" | "pglite";
    pgTemplate: string;
    pgAdminUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const url = process.env.DATABASE_URL;
  const usePostgres = Boolean(url) && process.env.TEST_DB !== "pglite";
  project.provide("dbKind", usePostgres ? "postgres" : "pglite");
  project.provide("pgAdminUrl", url ?? "");
  project.provide("pgTemplate", "");
  if (!usePostgres || !url) return;

  const template = `cc_tpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${template}`);
  const templateUrl = new URL(url);
  templateUrl.pathname = `/${template}`;
  // Migrate through the app's own code path, in a child so `server-only` resolves empty.
  const { execFileSync } = await import("node:child_process");
  const { TSX_SERVER_FLAGS } = await import("../../tools/tsx-server");
  execFileSync("npx", ["tsx", ...TSX_SERVER_FLAGS, "tools/db-migrate.ts"], {
    env: { ...process.env, DATABASE_URL: templateUrl.toString() },
    stdio: "inherit",
  });
  project.provide("pgTemplate", template);

  return async () => {
    const clones = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like ${`cc_t_${template.slice(7)}%`} or datname = ${template}`;
    for (const { datname } of clones) await admin.unsafe(`drop database if exists ${datname} with (force)`);
    await admin.end();
  };
}
