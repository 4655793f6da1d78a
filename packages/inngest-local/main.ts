// CLI for the local Inngest server stand-in (see README.md beside this file).
//   tsx packages/inngest-local/main.ts [-u http://127.0.0.1:3000/api/inngest]... [-p 8288]
//       [--host 127.0.0.1] [--poll 5000] [--retry-scale 1] [--no-checkpointing]
//       [--signing-key signkey-...] [--event-key KEY]... [--dev]
// With a signing key and an event key (flags, or INNGEST_SIGNING_KEY / INNGEST_EVENT_KEY as
// `inngest start` reads them) it runs self-hosted: signed calls, event key checked.
import { startInngestLocal } from "./server";

const USAGE = `usage: tsx packages/inngest-local/main.ts [options]
  -u, --url <url>        app serve URL to sync and call (repeatable; default http://127.0.0.1:3000/api/inngest)
  -p, --port <n>         port to listen on (default 8288; 0 = any free port)
      --host <h>         host to bind (default 127.0.0.1)
      --poll <ms>        re-sync the apps every <ms> (default 5000; 0 = off)
      --retry-scale <f>  factor on the real server's retry schedule, 15 s, 30 s, 1 min… + up to 30 s
                         (default $INNGEST_LOCAL_RETRY_SCALE or 1; tests use e.g. 0.01)
      --no-checkpointing do not send ctx.fn_id (one step per request)
      --signing-key <k>  self-hosted mode: sign every call to the app (default $INNGEST_SIGNING_KEY)
      --event-key <k>    self-hosted mode: accept events sent with this key (repeatable; default $INNGEST_EVENT_KEY)
      --dev              dev mode (unsigned, any event key), ignoring the two variables above
  -h, --help`;

function parseArgs(argv: string[]) {
  const out = {
    urls: [] as string[],
    port: 8288,
    host: "127.0.0.1",
    poll: 5000,
    retryScale: undefined as number | undefined,
    checkpointing: undefined as boolean | undefined,
    signingKey: undefined as string | undefined,
    eventKeys: [] as string[],
    dev: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes("=") ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const num = () => {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 0) throw new Error(`${flag} needs a non-negative integer`);
      return v;
    };
    switch (flag) {
      case "-u":
      case "--url":
      case "--sdk-url":
        out.urls.push(value());
        break;
      case "-p":
      case "--port":
        out.port = num();
        break;
      case "--host":
        out.host = value();
        break;
      case "--poll":
        out.poll = num();
        break;
      case "--retry-scale": {
        const v = Number(value());
        if (!Number.isFinite(v) || v <= 0) throw new Error(`${flag} needs a number > 0`);
        out.retryScale = v;
        break;
      }
      case "--no-checkpointing":
        out.checkpointing = false;
        break;
      case "--signing-key":
        out.signingKey = value();
        break;
      case "--event-key":
        out.eventKeys.push(value());
        break;
      case "--dev":
        out.dev = true;
        break;
      case "-h":
      case "--help":
        console.log(USAGE);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${a}`);
    }
  }
  if (!out.urls.length) out.urls.push("http://127.0.0.1:3000/api/inngest");
  if (out.dev) {
    if (out.signingKey || out.eventKeys.length) throw new Error("--dev takes no --signing-key or --event-key");
  } else {
    out.signingKey ??= process.env.INNGEST_SIGNING_KEY || undefined;
    if (!out.eventKeys.length && process.env.INNGEST_EVENT_KEY) out.eventKeys.push(process.env.INNGEST_EVENT_KEY);
  }
  return out;
}

async function main() {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`inngest-local: ${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const stamp = () => new Date().toISOString().slice(11, 23);
  let local: Awaited<ReturnType<typeof startInngestLocal>>;
  try {
    local = await startInngestLocal({
      appUrls: args.urls,
      port: args.port,
      host: args.host,
      pollMs: args.poll,
      retryScale: args.retryScale,
      checkpointing: args.checkpointing,
      signingKey: args.signingKey,
      eventKeys: args.eventKeys,
      log: (line) => (line.startsWith("ERROR") ? console.error : console.log)(`${stamp()} [inngest-local] ${line}`),
    });
  } catch (e) {
    console.error(`inngest-local: ${(e as Error).message}`);
    process.exit(2);
  }
  // Self-hosted, the dashboard needs its login URL (logged above by the server), the JSON API a bearer.
  const open = local.loginUrl ?? `${local.url}/`;
  const auth = local.loginUrl ? " with Authorization: Bearer <signing key>" : "";
  console.log(`${stamp()} [inngest-local] dashboard: ${open}  (JSON${auth}: ${local.url}/runs; GraphQL: POST ${local.url}/v0/gql; re-sync: POST ${local.url}/sync)`);
  const stop = async (signal: string) => {
    console.log(`${stamp()} [inngest-local] ${signal}: shutting down`);
    await local.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((e) => {
  console.error(`inngest-local: ${(e as Error).stack ?? e}`);
  process.exit(1);
});
