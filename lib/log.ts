// One JSON line per notable event (pino), so operators can grep and ship them: `level` as a
// word, `time` in ISO 8601, `msg`, then the fields. Every line written while a request is
// handled carries its `request_id`, and every line written inside withLogContext() the fields
// given there (a lease's `lease_id`): lib/log-context.ts. Secrets never reach a line: the
// fields named in REDACT are replaced, at any depth pino can address (top level and one below).
// `info` to stdout, `warn` and `error` to stderr, as before.
//   LOG_LEVEL   trace | debug | info (default) | warn | error | silent
//   LOG_FORMAT  json (default) | pretty (one short line per event, for a terminal: npm run dev's default)
import { Writable } from "node:stream";
import pino, { type DestinationStream, type LevelWithSilent } from "pino";
import { logContext } from "./log-context";

type Fields = Record<string, unknown>;

/** Field names whose values are secrets (cookies, credentials, keys, tokens), wherever they appear. */
export const SECRET_FIELDS = [
  "cookie",
  "set-cookie",
  "authorization",
  "password",
  "passwordHash",
  "password_hash",
  "secret",
  "token",
  "apiKey",
  "api_key",
  "signingKey",
  "signing_key",
  "eventKey",
  "event_key",
  "encryptionKey",
  "encryption_key",
  "sessionPassword",
];
const REDACT = SECRET_FIELDS.flatMap((name) => {
  const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : `["${name}"]`;
  const nested = key.startsWith("[") ? `*${key}` : `*.${key}`;
  return [key, nested, `headers${key.startsWith("[") ? key : `.${key}`}`, `*.headers${key.startsWith("[") ? key : `.${key}`}`];
});

const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

/** A human line for a terminal: `12:00:00.123 WARN  message  key=value …`, JSON values kept as JSON. */
export function prettyLine(json: string): string {
  try {
    const { level, time, msg, ...fields } = JSON.parse(json) as Fields;
    const clock = typeof time === "string" ? time.slice(11, 23) : "";
    const rest = Object.entries(fields).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    return `${clock} ${String(level).toUpperCase().padEnd(5)} ${String(msg)}${rest.length ? `  ${rest.join(" ")}` : ""}\n`;
  } catch {
    return json;
  }
}

function stream(fd: 1 | 2, pretty: boolean): DestinationStream {
  const out = pino.destination({ dest: fd, sync: true });
  if (!pretty) return out;
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) out.write(prettyLine(line));
      done();
    },
  });
}

/** The logger; options from the environment unless given (tests pass their own destination). */
export function createLogger(opts: { level?: string; pretty?: boolean; destination?: DestinationStream } = {}) {
  const env = process.env;
  const wanted = (opts.level ?? env.LOG_LEVEL ?? "info").toLowerCase();
  const level: LevelWithSilent = (LEVELS as readonly string[]).includes(wanted) ? (wanted as LevelWithSilent) : "info";
  const pretty = opts.pretty ?? env.LOG_FORMAT === "pretty";
  const destination =
    opts.destination ??
    pino.multistream(
      [
        { level: "trace", stream: stream(1, pretty) },
        { level: "warn", stream: stream(2, pretty) },
      ],
      { dedupe: true },
    );
  return pino(
    {
      level,
      base: undefined, // no pid and hostname on every line: the platform adds where it ran
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => logContext(),
      redact: { paths: REDACT, censor: "[redacted]" },
    },
    destination,
  );
}

let logger: pino.Logger | undefined;
const instance = () => (logger ??= createLogger());

export const log = {
  info: (message: string, fields: Fields = {}) => instance().info(fields, message),
  warn: (message: string, fields: Fields = {}) => instance().warn(fields, message),
  error: (message: string, fields: Fields = {}) => instance().error(fields, message),
};
