// `npm run test:model [-- --runs N] [--seed S] [--path P] [--commands N] [--time-limit SECONDS] [--db pglite|postgres]`
// Runs the model-based test of the lease guarantee (tests/model/). On PostgreSQL when
// DATABASE_URL is set (or --db postgres, which defaults to the local server), else PGlite.
// A failure prints the seed and the shrunk counterexample's path; pass both back to replay it.
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const env: Record<string, string | undefined> = { ...process.env };
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
  const value = () => {
    const v = inline ?? args[++i];
    if (v === undefined) fail(`${flag} needs a value`);
    return v!;
  };
  switch (flag) {
    case "--runs":
      env.MODEL_RUNS = positive(flag, value());
      break;
    case "--seed":
      env.MODEL_SEED = String(Math.trunc(Number(value())));
      break;
    case "--path":
      env.MODEL_PATH = value();
      break;
    case "--time-limit":
      // Seconds; the run stops starting schedules then and reports how many it ran.
      env.MODEL_TIME_LIMIT_MS = String(Number(positive(flag, value())) * 1000);
      break;
    case "--commands":
      env.MODEL_COMMANDS = positive(flag, value());
      break;
    case "--db": {
      const kind = value();
      if (kind === "pglite") env.TEST_DB = "pglite";
      else if (kind === "postgres") {
        env.TEST_DB = "postgres";
        env.DATABASE_URL ??= "postgres://postgres@127.0.0.1:5432/postgres";
      } else fail(`--db is pglite or postgres`);
      break;
    }
    default:
      fail(`unknown argument ${flag}`);
  }
}

function positive(flag: string, v: string): string {
  if (!/^[1-9]\d*$/.test(v)) fail(`${flag} needs a positive integer`);
  return v;
}
function fail(message: string): never {
  console.error(
    `test:model: ${message}\nusage: npm run test:model -- [--runs N] [--seed S] [--path P] [--commands N] [--time-limit SECONDS] [--db pglite|postgres]`,
  );
  process.exit(2);
}

const result = spawnSync("node_modules/.bin/vitest", ["run", "--project", "model"], { stdio: "inherit", env: env as NodeJS.ProcessEnv });
process.exit(result.status ?? 1);
