// Contract tests for packages/inngest-local: a real app built with the pinned SDK,
// served over HTTP with `serve` from inngest/node, driven by the stand-in exactly as
// the dev server would. Run: npx vitest run --project inngest-local packages/inngest-local/tests/server.test.ts
// Every scenario runs twice: with checkpointing (ctx.fn_id sent, the SDK's v4
// default path) and without (one step per request).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest, NonRetriableError, RetryAfterError } from "inngest";
import { serve } from "inngest/node";
import { cliPath, startInngestLocal, type InngestLocal, type RunSummary } from "../index";
import { parseCron, cronMatches, nextCronTime } from "../cron";
import { compileExpression } from "../expr";
import { startSdkApp, type SdkApp } from "../sdk-app";
import { canonicalBody, hashSigningKey, signBody } from "../signing";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, fn: () => T | undefined | false, timeoutMs = 8000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Everything the app's functions observe, so tests can assert what ran and how often. */
type Probe = {
  calls: Record<string, number>;
  failures: { fn: string; message: string; name: string; originalData: unknown }[];
  concurrent: number;
  maxConcurrent: number;
  timestamps: Record<string, number[]>;
  waited: unknown[];
};

function buildFunctions(inngest: Inngest, probe: Probe) {
  const hit = (key: string) => {
    probe.calls[key] = (probe.calls[key] ?? 0) + 1;
    (probe.timestamps[key] ??= []).push(Date.now());
    return probe.calls[key]!;
  };
  const dedupeFn = inngest.createFunction({ id: "dedupe", triggers: [{ event: "test/dedupe" }] }, async ({ event }) => {
    hit(`dedupe:${String(event.data.k)}`);
    return event.id;
  });
  const onFailure = (fn: string) => async ({ error, event }: { error: Error; event: { data: { event: { data: unknown } } } }) => {
    probe.failures.push({ fn, message: error.message, name: error.name, originalData: event.data.event.data });
  };

  return [
    inngest.createFunction({ id: "multi", triggers: [{ event: "test/multi" }] }, async ({ event, step }) => {
      const k = String(event.data.k);
      const a = await step.run("a", () => (hit(`multi:${k}:a`), 1));
      const b = await step.run("b", () => (hit(`multi:${k}:b`), a + 1));
      const c = await step.run("c", () => (hit(`multi:${k}:c`), b + 1));
      return { sum: a + b + c };
    }),
    inngest.createFunction({ id: "parallel", triggers: [{ event: "test/parallel" }] }, async ({ event, step }) => {
      const k = String(event.data.k);
      const [x, y] = await Promise.all([
        step.run("x", () => (hit(`parallel:${k}:x`), "x")),
        step.run("y", () => (hit(`parallel:${k}:y`), "y")),
      ]);
      const z = await step.run("z", () => (hit(`parallel:${k}:z`), "z"));
      return x + y + z;
    }),
    inngest.createFunction({ id: "fan-out", triggers: [{ event: "test/fan-out" }] }, async ({ event, step }) => {
      await step.sendEvent("kick-multi", { name: "test/multi", data: { k: `${String(event.data.k)}-child` } });
      return "sent";
    }),
    inngest.createFunction({ id: "flaky", triggers: [{ event: "test/flaky" }] }, async ({ event, step }) => {
      const k = String(event.data.k);
      return step.run("flaky-step", () => {
        if (hit(`flaky:${k}`) <= 2) throw new Error(`transient ${probe.calls[`flaky:${k}`]}`);
        return "third time lucky";
      });
    }),
    inngest.createFunction(
      { id: "fn-level-flaky", triggers: [{ event: "test/fn-level-flaky" }] },
      async ({ event }) => {
        if (hit(`fnflaky:${String(event.data.k)}`) === 1) throw new Error("outside any step");
        return "ok";
      },
    ),
    inngest.createFunction(
      { id: "nonretriable", triggers: [{ event: "test/nonretriable" }], onFailure: onFailure("nonretriable") },
      async ({ event, step }) => {
        await step.run("refuse", () => {
          hit(`nonretriable:${String(event.data.k)}`);
          throw new NonRetriableError("nope, never");
        });
      },
    ),
    inngest.createFunction(
      { id: "exhausted", retries: 2, triggers: [{ event: "test/exhausted" }], onFailure: onFailure("exhausted") },
      async ({ event, step }) => {
        await step.run("always-fails", () => {
          hit(`exhausted:${String(event.data.k)}`);
          throw new Error("boom");
        });
      },
    ),
    inngest.createFunction(
      { id: "retry-after", triggers: [{ event: "test/retry-after" }] },
      async ({ event, step }) =>
        step.run("slow-down", () => {
          if (hit(`retryafter:${String(event.data.k)}`) === 1) throw new RetryAfterError("slow down", 1000);
          return "done";
        }),
    ),
    inngest.createFunction(
      {
        id: "lease-watch",
        triggers: [{ event: "test/lease.opened" }],
        cancelOn: [{ event: "test/lease.closed", if: "event.data.leaseId == async.data.leaseId" }],
      },
      async ({ event, step }) => {
        const id = String(event.data.leaseId);
        await step.run("before", () => hit(`lease:${id}:before`));
        await step.sleep("hold", "20s");
        await step.run("after", () => hit(`lease:${id}:after`));
        return "expired";
      },
    ),
    inngest.createFunction(
      {
        id: "slow-steps",
        triggers: [{ event: "test/slow" }],
        cancelOn: [{ event: "test/slow.stop", match: "data.k" }],
      },
      async ({ event, step }) => {
        const k = String(event.data.k);
        await step.run("s1", async () => (hit(`slow:${k}:s1`), await sleep(400)));
        await step.run("s2", async () => (hit(`slow:${k}:s2`), await sleep(400)));
        await step.run("s3", async () => hit(`slow:${k}:s3`));
        return "all done";
      },
    ),
    inngest.createFunction(
      { id: "backoff-cancel", triggers: [{ event: "test/backoff" }], cancelOn: [{ event: "test/backoff.stop", match: "data.k" }] },
      async ({ event, step }) =>
        step.run("always-later", () => {
          hit(`backoff:${String(event.data.k)}`);
          throw new RetryAfterError("come back later", "5s");
        }),
    ),
    inngest.createFunction({ id: "sleeper", triggers: [{ event: "test/sleep" }] }, async ({ step }) => {
      const t0 = await step.run("t0", () => Date.now());
      await step.sleep("nap", "1s");
      const t1 = await step.run("t1", () => Date.now());
      return { sleptMs: t1 - t0 };
    }),
    inngest.createFunction({ id: "waiter", triggers: [{ event: "test/wait" }] }, async ({ event, step }) => {
      const got = await step.waitForEvent("approval", { event: "test/approved", match: "data.k", timeout: event.data.timeout as string });
      probe.waited.push(got);
      return got ? { approvedBy: got.data.by } : { timedOut: true };
    }),
    dedupeFn,
    inngest.createFunction({ id: "nightly", triggers: [{ cron: "0 3 * * *" }] }, async ({ event, step }) => {
      await step.run("sweep", () => hit("nightly:sweep"));
      return { cron: (event.data as { cron?: string }).cron, name: event.name };
    }),
    inngest.createFunction(
      { id: "serial", concurrency: { limit: 1, key: "event.data.group" }, triggers: [{ event: "test/serial" }] },
      async ({ step }) => {
        await step.run("work", async () => {
          probe.concurrent++;
          probe.maxConcurrent = Math.max(probe.maxConcurrent, probe.concurrent);
          await sleep(150);
          probe.concurrent--;
        });
      },
    ),
    inngest.createFunction({ id: "invoker", triggers: [{ event: "test/invoke" }] }, async ({ step }) =>
      step.invoke("call-other", { function: dedupeFn, data: { k: "from-invoke" } }),
    ),
    inngest.createFunction({ id: "signaller", triggers: [{ event: "test/signal" }] }, async ({ step }) => step.waitForSignal("await-signal", { signal: "go", timeout: "1m", onConflict: "fail" })),
    inngest.createFunction({ id: "debounced", debounce: { period: "1s" }, triggers: [{ event: "test/debounced" }] }, async () => "never"),
  ];
}

describe.each([
  { mode: "checkpointing", checkpointing: true },
  { mode: "one step per request", checkpointing: false },
])("inngest-local ($mode)", ({ checkpointing }) => {
  let app: SdkApp;
  let local: InngestLocal;
  let inngest: Inngest;
  const logs: string[] = [];
  const probe: Probe = { calls: {}, failures: [], concurrent: 0, maxConcurrent: 0, timestamps: {}, waited: [] };
  let seq = 0;
  const key = () => `${checkpointing ? "cp" : "np"}-${++seq}`;

  const runsOf = (fn: string, k?: string): RunSummary[] =>
    local.runs().filter((r) => r.functionId === `contract-app-${fn}` && (k === undefined || r.event.data.k === k || r.event.data.leaseId === k));
  const ended = (r: RunSummary | undefined) => r && r.status !== "running" && r;
  const finalRun = (fn: string, k: string) => waitFor(`${fn} run for ${k} to end`, () => ended(runsOf(fn, k)[0]));

  beforeAll(async () => {
    app = await startSdkApp();
    // The stand-in starts first and keeps retrying the sync until the app answers.
    // The real retry schedule at 1/100: 150 ms, 300 ms, 600 ms… each plus up to 300 ms.
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.01, syncRetryMs: 100, checkpointing, log: (l) => logs.push(l) });
    // The SDK logs every (expected) step error to the console; keep the test output readable.
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    inngest = new Inngest({ id: "contract-app", isDev: true, baseUrl: local.url, logger: quiet });
    await sleep(150);
    app.setHandler(serve({ client: inngest, functions: buildFunctions(inngest, probe) }));
    await waitFor("initial sync", () => logs.some((l) => l.startsWith('synced app "contract-app"')));
  });
  afterAll(async () => {
    if (process.env.DUMP_LOGS) (await import("node:fs")).writeFileSync(`/tmp/inngest-local-${checkpointing}.log`, logs.join("\n"));
    await local?.close();
    await app?.close();
  });

  it("retries the initial sync until the app answers, and re-syncs on POST /sync", async () => {
    expect(logs.some((l) => l.startsWith("waiting for app at"))).toBe(true);
    const fns = (await (await fetch(`${local.url}/functions`)).json()) as { id: string; triggers: unknown[] }[];
    expect(fns.map((f) => f.id)).toEqual(expect.arrayContaining(["contract-app-multi", "contract-app-nonretriable-failure", "contract-app-nightly"]));
    const res = await fetch(`${local.url}/sync`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { functions: string[] }).functions).toContain("contract-app-exhausted-failure");
  });

  it("runs a multi-step function to completion, each step body exactly once", async () => {
    const k = key();
    await inngest.send({ name: "test/multi", data: { k } });
    const run = await finalRun("multi", k);
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ sum: 6 });
    expect(run.attempts).toBe(1);
    expect(run.steps.map((s) => [s.name, s.status, s.output])).toEqual([
      ["a", "completed", 1],
      ["b", "completed", 2],
      ["c", "completed", 3],
    ]);
    expect([probe.calls[`multi:${k}:a`], probe.calls[`multi:${k}:b`], probe.calls[`multi:${k}:c`]]).toEqual([1, 1, 1]);
    // With ctx.fn_id the SDK runs steps back to back and POSTs them to /v1/checkpoint.
    expect(run.steps.every((s) => Boolean(s.checkpointed) === checkpointing)).toBe(true);
  });

  it("runs parallel steps (Promise.all) once each, then continues", async () => {
    const k = key();
    await inngest.send({ name: "test/parallel", data: { k } });
    const run = await finalRun("parallel", k);
    expect(run).toMatchObject({ status: "completed", output: "xyz" });
    expect(run.steps.map((s) => s.name).sort()).toEqual(["x", "y", "z"]);
    expect(["x", "y", "z"].map((s) => probe.calls[`parallel:${k}:${s}`])).toEqual([1, 1, 1]);
  });

  it("step.sendEvent delivers to /e/ and triggers the matching function", async () => {
    const k = key();
    await inngest.send({ name: "test/fan-out", data: { k } });
    expect(await finalRun("fan-out", k)).toMatchObject({ status: "completed", output: "sent" });
    expect(await finalRun("multi", `${k}-child`)).toMatchObject({ status: "completed", output: { sum: 6 } });
  });

  it("retries a step that throws twice, completing on the 3rd attempt", async () => {
    const k = key();
    await inngest.send({ name: "test/flaky", data: { k } });
    const run = await finalRun("flaky", k);
    expect(run.status).toBe("completed");
    expect(run.output).toBe("third time lucky");
    expect(run.attempts).toBe(3);
    expect(run.steps[0]).toMatchObject({ name: "flaky-step", status: "completed", attempts: 3 });
    expect(probe.calls[`flaky:${k}`]).toBe(3);
  });

  it("retries an error thrown outside any step (HTTP 500)", async () => {
    const k = key();
    await inngest.send({ name: "test/fn-level-flaky", data: { k } });
    const run = await finalRun("fn-level-flaky", k);
    expect(run).toMatchObject({ status: "completed", output: "ok", attempts: 2 });
  });

  it("fails a NonRetriableError after 1 attempt and runs onFailure with the error", async () => {
    const k = key();
    await inngest.send({ name: "test/nonretriable", data: { k } });
    const run = await finalRun("nonretriable", k);
    expect(run.status).toBe("failed");
    expect(run.attempts).toBe(1);
    expect(probe.calls[`nonretriable:${k}`]).toBe(1);
    expect(run.error).toMatchObject({ message: "nope, never" });
    const failure = await waitFor("onFailure", () => probe.failures.find((f) => f.fn === "nonretriable" && (f.originalData as { k: string }).k === k));
    expect(failure).toMatchObject({ message: "nope, never", name: "NonRetriableError" });
    const handlerRun = await waitFor("failure run", () =>
      ended(local.runs().find((r) => r.functionId === "contract-app-nonretriable-failure" && r.event.data.run_id === run.id)),
    );
    expect(handlerRun.status).toBe("completed");
    expect(handlerRun.event).toMatchObject({ name: "inngest/function.failed", data: { function_id: "contract-app-nonretriable", event: { name: "test/nonretriable" } } });
  });

  it("fails once retries are exhausted (retries: 2 → 3 attempts) and runs onFailure", async () => {
    const k = key();
    await inngest.send({ name: "test/exhausted", data: { k } });
    const run = await finalRun("exhausted", k);
    expect(run).toMatchObject({ status: "failed", attempts: 3, maxAttempts: 3, error: { message: "boom" } });
    expect(run.steps[0]).toMatchObject({ name: "always-fails", status: "failed", attempts: 3 });
    expect(probe.calls[`exhausted:${k}`]).toBe(3);
    const failure = await waitFor("onFailure", () => probe.failures.find((f) => f.fn === "exhausted" && (f.originalData as { k: string }).k === k));
    expect(failure.message).toBe("boom");
  });

  it("waits between attempts as the real server does, scaled: attempt 0 → 15 s + 0-30 s, attempt 1 → 30 s + 0-30 s", async () => {
    const k = key();
    await inngest.send({ name: "test/exhausted", data: { k } });
    expect(await finalRun("exhausted", k)).toMatchObject({ status: "failed", attempts: 3 });
    const [t0, t1, t2] = probe.timestamps[`exhausted:${k}`]!;
    const slack = 250; // the SDK's request and answer around each attempt, on a loaded machine
    expect(t1! - t0!).toBeGreaterThanOrEqual(150);
    expect(t1! - t0!).toBeLessThan(450 + slack);
    expect(t2! - t1!).toBeGreaterThanOrEqual(300);
    expect(t2! - t1!).toBeLessThan(600 + slack);
  });

  it("honours Retry-After from a RetryAfterError", async () => {
    const k = key();
    await inngest.send({ name: "test/retry-after", data: { k } });
    const run = await finalRun("retry-after", k);
    expect(run.status).toBe("completed");
    const [first, second] = probe.timestamps[`retryafter:${k}`]!;
    expect(second! - first!).toBeGreaterThanOrEqual(950);
  });

  it("cancels a sleeping run on a matching cancelOn event, and not on a non-matching one", async () => {
    const a = key();
    const b = key();
    await inngest.send([
      { name: "test/lease.opened", data: { leaseId: a } },
      { name: "test/lease.opened", data: { leaseId: b } },
    ]);
    await waitFor("both sleeping", () => [a, b].every((id) => runsOf("lease-watch", id)[0]?.steps.some((s) => s.name === "hold" && s.status === "sleeping")));
    await inngest.send({ name: "test/lease.closed", data: { leaseId: a } });
    await inngest.send({ name: "test/lease.closed", data: { leaseId: "someone-else" } });
    const runA = await finalRun("lease-watch", a);
    expect(runA.status).toBe("cancelled");
    expect(runA.cancelledBy).toContain("test/lease.closed");
    await sleep(200);
    expect(runsOf("lease-watch", b)[0]!.status).toBe("running");
    expect(probe.calls[`lease:${a}:after`]).toBeUndefined();
    // Clean up b the same way.
    await inngest.send({ name: "test/lease.closed", data: { leaseId: b } });
    expect((await finalRun("lease-watch", b)).status).toBe("cancelled");
  });

  it("cancels a run mid-steps: the in-flight result is discarded and no further step runs", async () => {
    const k = key();
    await inngest.send({ name: "test/slow", data: { k } });
    await waitFor("s1 running", () => probe.calls[`slow:${k}:s1`] === 1);
    await inngest.send({ name: "test/slow.stop", data: { k } });
    const run = await finalRun("slow-steps", k);
    expect(run.status).toBe("cancelled");
    await sleep(1000); // long enough for s2 and s3 to have run, had the run not stopped
    expect(probe.calls[`slow:${k}:s2`]).toBeUndefined();
    expect(probe.calls[`slow:${k}:s3`]).toBeUndefined();
    expect(local.runs().find((r) => r.id === run.id)!.status).toBe("cancelled");
    // How it stopped: with checkpointing, s1's checkpoint is refused with 409 (the
    // SDK's "stale dispatch"); without, s1's StepRun answer arrives and is dropped.
    const how = checkpointing ? "refused a checkpoint (409)" : "discarded the answer (HTTP 206)";
    expect(logs.some((l) => l.startsWith(`run ${run.id} is cancelled: ${how}`))).toBe(true);
  });

  it("cancels a run waiting in retry backoff", async () => {
    const k = key();
    await inngest.send({ name: "test/backoff", data: { k } });
    await waitFor("first failure", () => runsOf("backoff-cancel", k)[0]?.steps[0]?.status === "retrying");
    const t = Date.now();
    await inngest.send({ name: "test/backoff.stop", data: { k } });
    expect((await finalRun("backoff-cancel", k)).status).toBe("cancelled");
    expect(Date.now() - t).toBeLessThan(1000); // not after the 5 s Retry-After
    await sleep(200);
    expect(probe.calls[`backoff:${k}`]).toBe(1);
  });

  it("step.sleep sleeps and then resumes", async () => {
    const t = Date.now();
    await inngest.send({ name: "test/sleep", data: { k: key() } });
    const run = await waitFor("sleeper", () => ended(runsOf("sleeper").find((r) => Date.parse(r.startedAt) >= t - 5)));
    expect(run.status).toBe("completed");
    expect((run.output as { sleptMs: number }).sleptMs).toBeGreaterThanOrEqual(950);
    expect(run.steps.map((s) => [s.name, s.op, s.status])).toEqual([
      ["t0", "StepRun", "completed"],
      ["nap", "Sleep", "completed"],
      ["t1", "StepRun", "completed"],
    ]);
  });

  it("step.waitForEvent resolves with a matching event, or null on timeout", async () => {
    const k = key();
    await inngest.send({ name: "test/wait", data: { k, timeout: "1m" } });
    await waitFor("waiting", () => runsOf("waiter", k)[0]?.steps.some((s) => s.status === "waiting"));
    await inngest.send({ name: "test/approved", data: { k: "other", by: "mallory" } });
    await inngest.send({ name: "test/approved", data: { k, by: "alice" } });
    expect(await finalRun("waiter", k)).toMatchObject({ status: "completed", output: { approvedBy: "alice" } });

    const k2 = key();
    await inngest.send({ name: "test/wait", data: { k: k2, timeout: "1s" } });
    expect(await finalRun("waiter", k2)).toMatchObject({ status: "completed", output: { timedOut: true } });
  });

  it("dedupes events by id: the same id sent twice triggers once", async () => {
    const k = key();
    const first = await inngest.send({ name: "test/dedupe", id: `dedupe-${k}`, data: { k } });
    const again = await inngest.send([
      { name: "test/dedupe", id: `dedupe-${k}`, data: { k } },
      { name: "test/dedupe", id: `dedupe-${k}`, data: { k } },
    ]);
    expect(again.ids).toEqual([first.ids[0], first.ids[0]]);
    const run = await finalRun("dedupe", k);
    expect(run.output).toBe(`dedupe-${k}`); // event.id is the id the sender chose
    await sleep(200);
    expect(runsOf("dedupe", k)).toHaveLength(1);
    expect(probe.calls[`dedupe:${k}`]).toBe(1);
  });

  it("accepts a single event object on POST /e/:key and answers {ids, status: 200}", async () => {
    const res = await fetch(`${local.url}/e/any-key`, { method: "POST", body: JSON.stringify({ name: "test/unmatched", data: {} }) });
    const body = (await res.json()) as { ids: string[]; status: number };
    expect(res.status).toBe(200);
    expect(body.status).toBe(200);
    expect(body.ids).toHaveLength(1);
    const bad = await fetch(`${local.url}/e/any-key`, { method: "POST", body: JSON.stringify([{ name: "test/multi", data: { k: "never" } }, { data: {} }]) });
    expect(bad.status).toBe(400);
    await sleep(100);
    expect(runsOf("multi", "never")).toHaveLength(0); // the batch is rejected whole
  });

  it("runs a cron function on demand via POST /fn/:fnId/invoke", async () => {
    const before = probe.calls["nightly:sweep"] ?? 0;
    const res = await fetch(`${local.url}/fn/contract-app-nightly/invoke`, { method: "POST" });
    const { runId } = (await res.json()) as { runId: string };
    const run = await waitFor("cron run", () => ended(local.runs().find((r) => r.id === runId)));
    expect(run).toMatchObject({ status: "completed", eventName: "inngest/scheduled.timer", output: { cron: "0 3 * * *", name: "inngest/scheduled.timer" } });
    expect(probe.calls["nightly:sweep"]).toBe(before + 1);
    // The short id works too, and GET /functions shows the next scheduled time.
    expect((await fetch(`${local.url}/fn/nightly/invoke`, { method: "POST" })).status).toBe(200);
    const fns = (await (await fetch(`${local.url}/functions`)).json()) as { id: string; triggers: { cron?: string; next?: string }[] }[];
    expect(fns.find((f) => f.id === "contract-app-nightly")!.triggers[0]!.next).toMatch(/T03:00:00/);
  });

  it("honours a concurrency limit keyed by event data", async () => {
    probe.maxConcurrent = 0;
    const group = key();
    await inngest.send([1, 2, 3].map((i) => ({ name: "test/serial", data: { group, i } })));
    await waitFor("3 serial runs", () => {
      const rs = local.runs().filter((r) => r.functionId === "contract-app-serial" && r.event.data.group === group);
      return rs.length === 3 && rs.every((r) => r.status === "completed");
    });
    expect(probe.maxConcurrent).toBe(1);
  });

  it("fails loudly on an unsupported op (step.waitForSignal) and unsupported config (debounce)", async () => {
    await inngest.send({ name: "test/signal", data: {} });
    const sig = await waitFor("signaller", () => ended(runsOf("signaller")[0]));
    expect(sig.status).toBe("failed");
    expect((sig.error as { message: string }).message).toMatch(/does not support the "WaitForSignal" op \(step "await-signal"\)/);
    await inngest.send({ name: "test/debounced", data: {} });
    const deb = await waitFor("debounced", () => ended(runsOf("debounced")[0]));
    expect(deb.status).toBe("failed");
    expect((deb.error as { message: string }).message).toMatch(/debounce/);
    expect(logs.some((l) => l.startsWith("ERROR") && l.includes("debounce"))).toBe(true);
  });

  it("answers the server APIs of features it lacks (durable endpoints in async mode, realtime, connect) with a 404 that names the feature, and an ERROR line", async () => {
    const cases: [string, string, RegExp][] = [
      ["GET", "/v1/http/runs/01RUN/output", /durable endpoints in async mode/],
      ["POST", "/v1/realtime/publish/tee", /realtime/],
      ["POST", "/v0/connect/start", /connect/],
      ["POST", "/v1/nothing-here", /does not implement POST \/v1\/nothing-here/],
    ];
    for (const [method, path, said] of cases) {
      const res = await fetch(`${local.url}${path}`, { method, headers: { "content-type": "application/json" }, ...(method === "POST" ? { body: "{}" } : {}) });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: string }).error).toMatch(said);
      expect(logs.some((l) => l.startsWith(`ERROR unsupported route ${method} ${path}`))).toBe(true);
    }
  });

  it("serves GET /runs, GET /runs/:id, the dashboard (GET /, /ui/runs/:id) and GET /health", async () => {
    expect((await fetch(`${local.url}/health`)).status).toBe(200);
    const runs = (await (await fetch(`${local.url}/runs?function=multi`)).json()) as RunSummary[];
    expect(runs.length).toBeGreaterThan(0);
    expect(runs[0]).toMatchObject({ functionId: "contract-app-multi", eventName: "test/multi", status: "completed" });
    expect(runs[0]!.steps[0]).toMatchObject({ name: "a", attempts: 1 });
    expect(typeof runs[0]!.startedAt).toBe("string");
    const one = await fetch(`${local.url}/runs/${runs[0]!.id}`);
    expect(((await one.json()) as RunSummary).id).toBe(runs[0]!.id);
    const page = await fetch(`${local.url}/`);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const text = await page.text();
    expect(text).toContain("contract-app-multi");
    // The dashboard's run page (packages/inngest-local/dashboard.ts) replaced the list of steps on GET /.
    const runPage = await (await fetch(`${local.url}/ui/runs/${runs[0]!.id}`)).text();
    expect(runPage).toMatch(/<h3>a<\/h3><code>step\.run<\/code><span class="badge s-completed">Completed<\/span>/);
  });
});

describe("inngest-local CLI", () => {
  it("starts on -p, keeps retrying the sync until the app is up, and runs a function", async () => {
    const { spawn } = await import("node:child_process");
    const app = await startSdkApp();
    const child = spawn(process.execPath, ["--import", "tsx", cliPath, "-u", app.url, "-p", "0", "--poll", "0", "--retry-scale", "0.01"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += String(d)));
    child.stderr.on("data", (d) => (out += String(d)));
    try {
      const url = await waitFor("listening line", () => /listening on (http:\/\/\S+)/.exec(out)?.[1], 15_000);
      await waitFor("sync retry line", () => out.includes("waiting for app at"));
      expect(out).toContain("(retry schedule ×0.01,");
      const client = new Inngest({ id: "cli-app", isDev: true, baseUrl: url, logger: { info() {}, warn() {}, error() {}, debug() {} } });
      const fn = client.createFunction({ id: "hello", triggers: [{ event: "cli/hello" }] }, async ({ step }) => step.run("greet", () => "hi"));
      app.setHandler(serve({ client, functions: [fn] }));
      await waitFor("synced line", () => out.includes('synced app "cli-app"'), 5000);
      await client.send({ name: "cli/hello", data: {} });
      const done = await (async () => {
        for (let i = 0; i < 200; i++) {
          const runs = (await (await fetch(`${url}/runs`)).json()) as RunSummary[];
          if (runs[0]?.status === "completed") return runs[0];
          await sleep(25);
        }
        throw new Error(`run did not complete; output:\n${out}`);
      })();
      expect(done).toMatchObject({ functionId: "cli-app-hello", output: "hi" });
      expect(out).toMatch(/run \S+ finished: fn cli-app-hello completed/);
    } finally {
      child.kill("SIGTERM");
      await app.close();
    }
  });
});

// Self-hosted mode, checked by the pinned SDK itself: an app served in cloud mode (signature
// verification on, as the app is in production) with the stand-in's keys. Every call the SDK
// accepts is one whose signature the SDK's own code verified.
describe("inngest-local self-hosted mode (signed, as the SDK verifies)", () => {
  const signingKey = `signkey-test-${randomBytes(32).toString("hex")}`;
  const eventKey = randomBytes(24).toString("hex");
  const quiet = { info() {}, warn() {}, error() {}, debug() {} };
  const logs: string[] = [];
  let app: SdkApp;
  let local: InngestLocal;
  let inngest: Inngest;
  const calls: Record<string, number> = {};

  beforeAll(async () => {
    app = await startSdkApp();
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.01, syncRetryMs: 100, signingKey, eventKeys: [eventKey], log: (l) => logs.push(l) });
    inngest = new Inngest({ id: "signed-app", isDev: false, baseUrl: local.url, signingKey, eventKey, logger: quiet });
    const steps = inngest.createFunction({ id: "steps", triggers: [{ event: "signed/steps" }] }, async ({ event, step }) => {
      const a = await step.run("a", () => ((calls.a = (calls.a ?? 0) + 1), 1));
      const b = await step.run("b", () => ((calls.b = (calls.b ?? 0) + 1), a + 1));
      return { sum: a + b, k: event.data.k };
    });
    const failing = inngest.createFunction(
      { id: "fails", retries: 0, triggers: [{ event: "signed/fails" }], onFailure: async ({ error }) => `handled ${error.message}` },
      async ({ step }) => step.run("boom", () => {
        throw new NonRetriableError("no");
      }),
    );
    app.setHandler(serve({ client: inngest, functions: [steps, failing] }));
    await waitFor("signed in-band sync", () => logs.some((l) => l.startsWith('synced app "signed-app"')));
  });
  afterAll(async () => {
    await local?.close();
    await app?.close();
  });

  it("says it is self-hosted, and refuses a signing key without an event key", async () => {
    expect(local.mode).toBe("self-hosted");
    expect(logs.some((l) => l.includes("in self-hosted mode"))).toBe(true);
    await expect(startInngestLocal({ port: 0, appUrls: [], signingKey })).rejects.toThrow(/both a signing key and at least one event key/);
    await expect(startInngestLocal({ port: 0, appUrls: [], signingKey: "not-a-key", eventKeys: ["k"] })).rejects.toThrow(/must be hex/);
  });

  it("runs a function to completion: the in-band sync and every call signed and accepted by the SDK, checkpoints authenticated", async () => {
    await inngest.send({ name: "signed/steps", data: { k: "one" } });
    const run = await waitFor("signed run to end", () => local.runs().find((r) => r.functionId === "signed-app-steps" && r.status !== "running"));
    expect(run).toMatchObject({ status: "completed", output: { sum: 3, k: "one" } });
    // Checkpoints reached the stand-in with the SDK's bearer (a refused one would not show here).
    expect(run.steps.map((s) => [s.name, s.checkpointed])).toEqual([["a", true], ["b", true]]);
    expect([calls.a, calls.b]).toEqual([1, 1]);
    expect(logs.filter((l) => l.includes("(401)"))).toEqual([]);
  });

  it("a failure reaches onFailure, through the same signed calls", async () => {
    await inngest.send({ name: "signed/fails", data: {} });
    const handled = await waitFor("the failure handler's run", () => local.runs().find((r) => r.functionId === "signed-app-fails-failure" && r.status !== "running"));
    expect(handled).toMatchObject({ status: "completed", output: "handled no" });
  });

  it("the SDK verifies the stand-in's signature, and refuses the unsigned, the wrongly keyed and the stale", async () => {
    const body = {
      event: { name: "signed/steps", data: { k: "direct" }, ts: Date.now(), id: "direct-1" },
      events: [{ name: "signed/steps", data: { k: "direct" }, ts: Date.now(), id: "direct-1" }],
      steps: {},
      ctx: { run_id: "01DIRECT", attempt: 0, max_attempts: 1, disable_immediate_execution: true, use_api: false, stack: { stack: [], current: 0 } },
    };
    const text = canonicalBody(body);
    const call = (signature?: string) =>
      fetch(`${app.url}?fnId=signed-app-steps&stepId=step`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(signature ? { "x-inngest-signature": signature } : {}) },
        body: text,
      });
    const signed = await call(signBody(text, signingKey));
    expect(signed.status).toBe(206); // the SDK ran the function and reports its first step
    const other = `signkey-test-${randomBytes(32).toString("hex")}`;
    for (const sig of [undefined, signBody(text, other), signBody(text, signingKey, new Date(Date.now() - 6 * 60_000)), signBody(`${text} `, signingKey).replace(/s=.*/, "s=")]) {
      expect((await call(sig)).status, String(sig)).toBe(401);
    }
    // The same key signs a body whose keys come in another order: it is the canonical form that counts.
    const reordered = JSON.stringify({ ctx: body.ctx, steps: body.steps, events: body.events, event: body.event });
    expect(canonicalBody(JSON.parse(reordered))).toBe(text);
  });

  it("refuses events without the right event key (401, as the real server), and starts nothing", async () => {
    const before = local.runs().length;
    for (const key of ["wrong-key", `${eventKey}0`, "test"]) {
      const res = await fetch(`${local.url}/e/${key}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify([{ name: "signed/steps", data: { k: "nope" } }]) });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ ids: [], status: 401, error: "Event key not found" });
    }
    const wrong = new Inngest({ id: "signed-app", isDev: false, baseUrl: local.url, signingKey, eventKey: "not-the-event-key", logger: quiet });
    await expect(wrong.send({ name: "signed/steps", data: { k: "nope" } })).rejects.toThrow(/401/);
    await sleep(100);
    expect(local.runs().length).toBe(before);
  });

  it("accepts the SDK's authenticated register call (out-of-band sync) and refuses any other", async () => {
    // An unsigned PUT to an app that allows it makes the SDK register itself: with its bearer.
    const put = await fetch(app.url, { method: "PUT" });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ modified: expect.any(Boolean) });
    const register = (authorization?: string) =>
      fetch(`${local.url}/fn/register`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ url: "http://evil.example/api/inngest", appName: "evil", functions: [] }),
      });
    for (const auth of [undefined, `Bearer ${hashSigningKey(`signkey-test-${"ab".repeat(32)}`)}`, `Bearer ${signingKey}`]) {
      expect((await register(auth)).status).toBe(401);
    }
    const fns = (await (await fetch(`${local.url}/functions`, { headers: { authorization: `Bearer ${signingKey}` } })).json()) as { app: string }[];
    expect(fns.every((f) => f.app === app.url)).toBe(true);
    // Checkpoints, too, need the bearer.
    const cp = await fetch(`${local.url}/v1/checkpoint/01ANY/async`, { method: "POST", body: "{}" });
    expect(cp.status).toBe(401);
  });
});

describe("inngest-local building blocks", () => {
  it("parses 5-field cron with *, */n, lists, ranges and names; rejects TZ=", () => {
    const c = parseCron("*/15 9-17 * * MON-FRI");
    expect(cronMatches(c, new Date("2024-01-01T09:30:00Z"))).toBe(true); // a Monday
    expect(cronMatches(c, new Date("2024-01-01T09:31:00Z"))).toBe(false);
    expect(cronMatches(c, new Date("2024-01-06T09:30:00Z"))).toBe(false); // Saturday
    expect(nextCronTime(parseCron("0 0 1,15 * *"), new Date("2024-01-01T00:00:00Z"))!.toISOString()).toBe("2024-01-15T00:00:00.000Z");
    expect(nextCronTime(parseCron("@hourly"), new Date("2024-01-01T10:59:30Z"))!.toISOString()).toBe("2024-01-01T11:00:00.000Z");
    expect(() => parseCron("TZ=Europe/Paris 0 9 * * *")).toThrow(/TZ=/);
    expect(() => parseCron("* * *")).toThrow(/5 fields/);
    expect(() => parseCron("61 * * * *")).toThrow(/minute/);
  });

  it("evaluates the cancelOn / waitForEvent expression subset and rejects the rest", () => {
    const e = compileExpression("event.data.leaseId == async.data.leaseId && async.data.kind != 'soft'", ["event", "async"]);
    expect(e.evaluate({ event: { data: { leaseId: "l1" } }, async: { data: { leaseId: "l1", kind: "hard" } } })).toBe(true);
    expect(e.evaluate({ event: { data: { leaseId: "l1" } }, async: { data: { leaseId: "l2" } } })).toBe(false);
    // Missing on both sides must not match (CEL would error).
    expect(compileExpression("event.data.x == async.data.x", ["event", "async"]).evaluate({ event: { data: {} }, async: { data: {} } })).toBe(false);
    expect(() => compileExpression("size(event.data.items) > 2", ["event"])).toThrow(/unsupported/);
    expect(() => compileExpression("other.data.x == 1", ["event"])).toThrow(/unknown variable/);
  });
});
