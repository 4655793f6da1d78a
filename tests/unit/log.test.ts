import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, prettyLine, SECRET_FIELDS } from "@/lib/log";
import { logContext, saneRequestId, withLogContext } from "@/lib/log-context";

/** A logger writing into an array of parsed lines. */
function capture(opts: { level?: string; pretty?: boolean } = {}) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ ...opts, destination });
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("log", () => {
  it("writes one JSON line: level as a word, ISO time, msg, the fields", () => {
    const { logger, parsed } = capture();
    logger.warn({ lease_id: "l1", code: "lease_closed" }, "completion not proposed");
    const [line] = parsed();
    expect(line).toEqual({ level: "warn", time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), msg: "completion not proposed", lease_id: "l1", code: "lease_closed" });
  });

  it("puts the request id and the lease id of the work under way on every line, nested contexts merged", () => {
    const { logger, parsed } = capture();
    withLogContext({ request_id: "req-1" }, () => {
      logger.info("outside the lease");
      withLogContext({ lease_id: "lease-1" }, async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        logger.info("after an await");
      });
    });
    logger.info("after the request");
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        const lines = parsed();
        expect(lines.map((l) => [l.msg, l.request_id, l.lease_id])).toEqual([
          ["outside the lease", "req-1", undefined],
          ["after the request", undefined, undefined],
          ["after an await", "req-1", "lease-1"],
        ]);
        expect(logContext()).toEqual({});
        resolve();
      }, 20),
    );
  });

  it("never writes a secret: cookies, authorization, passwords and keys are redacted at the top level, one level down and in headers", () => {
    const { logger, lines } = capture();
    const secret = "s3cr3t-value-that-must-not-appear";
    const all = Object.fromEntries(SECRET_FIELDS.map((name) => [name, secret]));
    logger.warn({ ...all, nested: { ...all }, headers: { ...all }, req: { headers: { cookie: secret, authorization: `Bearer ${secret}` } } }, "with secrets");
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(secret);
    const line = JSON.parse(lines[0]!) as Record<string, Record<string, unknown>>;
    expect(line.cookie).toBe("[redacted]");
    expect(line.nested!.password).toBe("[redacted]");
    expect(line.headers!["set-cookie"]).toBe("[redacted]");
    expect((line.req!.headers as Record<string, unknown>).authorization).toBe("[redacted]");
  });

  it("keeps to its level", () => {
    const { logger, parsed } = capture({ level: "warn" });
    logger.info("quiet");
    logger.warn("loud");
    expect(parsed().map((l) => l.msg)).toEqual(["loud"]);
  });

  it("writes a short line for a terminal (LOG_FORMAT=pretty), from the same JSON", () => {
    const { logger, lines } = capture();
    withLogContext({ request_id: "r1" }, () => logger.warn({ lease_id: "l1", detail: { n: 1 } }, "hello"));
    expect(prettyLine(lines[0]!)).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN  hello  request_id=r1 lease_id=l1 detail=\{"n":1\}\n$/);
    expect(prettyLine("not json")).toBe("not json");
  });
});

describe("saneRequestId", () => {
  it("takes a client's id only when it is short and plain", () => {
    expect(saneRequestId("0b6c5f2e-4c1d-4a53-9d0e-2f8f2c1d9a11")).toBe("0b6c5f2e-4c1d-4a53-9d0e-2f8f2c1d9a11");
    expect(saneRequestId("trace:abc.123_x")).toBe("trace:abc.123_x");
    for (const bad of [null, undefined, "", "a b", "x".repeat(129), 'id"},{"admin":true', "line\nbreak", "é"]) {
      expect(saneRequestId(bad)).toBeNull();
    }
  });
});
