// Batches (`batchEvents: {maxSize, timeout, key?}`) as packages/inngest-local runs them: events
// for the function gather per key, and one run gets the batch (`ctx.events`) when it holds
// maxSize events or when the timeout since its first event is up. A real app built with the
// pinned SDK, served over HTTP.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/batch.test.ts
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest } from "inngest";
import { serve } from "inngest/node";
import { startInngestLocal, type InngestLocal } from "../index";
import { sleep, startSdkApp, waitFor, type SdkApp } from "../sdk-app";

describe("inngest-local batches (batchEvents)", () => {
  let app: SdkApp;
  let local: InngestLocal;
  let inngest: Inngest;
  const logs: string[] = [];
  /** What each run saw: the k of each of its events, and its sessions. */
  const seen: { fn: string; ks: unknown[]; sessions: unknown }[] = [];
  let seq = 0;
  const key = () => `b${++seq}`;
  const runsWith = (fn: string, k: string) => seen.filter((s) => s.fn === fn && s.ks.includes(k));

  beforeAll(async () => {
    app = await startSdkApp();
    local = await startInngestLocal({ port: 0, appUrls: [app.url], retryScale: 0.001, syncRetryMs: 50, log: (l) => logs.push(l) });
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    inngest = new Inngest({ id: "batch-app", isDev: true, baseUrl: local.url, logger: quiet });
    const functions = [
      inngest.createFunction({ id: "pairs", retries: 0, batchEvents: { maxSize: 2, timeout: "1s" }, triggers: [{ event: "batch/pair" }] }, async ({ events, sessions }) => {
        seen.push({ fn: "pairs", ks: events.map((e) => e.data.k), sessions });
        return events.length;
      }),
      inngest.createFunction({ id: "keyed", retries: 0, batchEvents: { maxSize: 2, timeout: "5s", key: "event.data.group" }, triggers: [{ event: "batch/keyed" }] }, async ({ events }) => {
        seen.push({ fn: "keyed", ks: events.map((e) => e.data.k), sessions: undefined });
      }),
    ];
    app.setHandler(serve({ client: inngest, functions }));
    await waitFor("initial sync", () => logs.some((l) => l.startsWith('synced app "batch-app"')));
  });
  afterAll(async () => {
    await local?.close();
    await app?.close();
  });

  it("is accepted at sync (no problem listed for the function)", async () => {
    const fns = (await (await fetch(`${local.url}/functions`)).json()) as { id: string; problems: string[] }[];
    expect(fns.find((f) => f.id === "batch-app-pairs")!.problems).toEqual([]);
  });

  it("two events sent together make one run that gets both; the SDK gives it the sessions they share", async () => {
    const [a, b] = [key(), key()];
    await inngest.send([
      { name: "batch/pair", data: { k: a }, meta: { sessions: { org: "acme", tenant: "x" } } },
      { name: "batch/pair", data: { k: b }, meta: { sessions: { org: "acme", tenant: "y" } } },
    ]);
    await waitFor("the batch run", () => runsWith("pairs", a)[0]);
    expect(runsWith("pairs", a)).toEqual([{ fn: "pairs", ks: [a, b], sessions: { org: "acme" } }]);
    const run = local.runs().find((r) => r.functionId === "batch-app-pairs" && r.event.data.k === a)!;
    await waitFor("the run to end", () => local.runs().find((r) => r.id === run.id && r.status === "completed"));
    expect(local.runs().find((r) => r.id === run.id)!.output).toBe(2);
  });

  it("a batch that does not fill runs when its timeout is up, with what it has", async () => {
    const k = key();
    const sent = Date.now();
    await inngest.send({ name: "batch/pair", data: { k } });
    await sleep(400);
    expect(runsWith("pairs", k)).toEqual([]);
    await waitFor("the timed-out batch", () => runsWith("pairs", k)[0], 5000);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(950);
    expect(runsWith("pairs", k)).toEqual([{ fn: "pairs", ks: [k], sessions: undefined }]);
  });

  it("a batch key keeps batches apart: each group fills its own", async () => {
    const [a1, b1, a2, b2] = [key(), key(), key(), key()];
    for (const [k, group] of [[a1, "a"], [b1, "b"], [a2, "a"], [b2, "b"]] as const) await inngest.send({ name: "batch/keyed", data: { k, group } });
    await waitFor("both keyed batches", () => runsWith("keyed", a1)[0] && runsWith("keyed", b1)[0]);
    expect(runsWith("keyed", a1)[0]!.ks).toEqual([a1, a2]);
    expect(runsWith("keyed", b1)[0]!.ks).toEqual([b1, b2]);
  });
});
