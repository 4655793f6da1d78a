// Run as root, npm test's embedded PostgreSQL runs its server as the `postgres`
// user, who must be able to reach the binaries. Where that user cannot, the run says so in one
// line instead of dying of an unhandled spawn error. The path that works (a checkout under a
// folder only root may enter, no server reachable) runs in CI: `.ci/run`, stage 3.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EmbeddedPostgresError, startEmbeddedPostgres } from "@/tools/embedded-postgres";

const tmpdirBefore = process.env.TMPDIR;
afterEach(() => {
  if (tmpdirBefore === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpdirBefore;
});

// Only root hands the server to another user; as anyone else it runs as themselves.
describe.runIf(process.getuid?.() === 0)("the embedded PostgreSQL, run as root", () => {
  it("refuses in one line, naming the way out, when the postgres user cannot reach its folder", async () => {
    const privateDir = fs.mkdtempSync(path.join(os.tmpdir(), "cc-private-")); // mode 0700
    try {
      process.env.TMPDIR = privateDir;
      const started = startEmbeddedPostgres();
      await expect(started).rejects.toBeInstanceOf(EmbeddedPostgresError);
      const message = await started.then(() => "", (error: Error) => error.message);
      expect(message).not.toContain("\n");
      expect(message).toMatch(/the postgres user cannot reach .*set TMPDIR .* or set DATABASE_URL/);
      // Nothing is left behind: the run's folder (and its copy of the binaries) is removed.
      expect(fs.readdirSync(privateDir)).toEqual([]);
    } finally {
      fs.rmSync(privateDir, { recursive: true, force: true });
    }
  });
});
