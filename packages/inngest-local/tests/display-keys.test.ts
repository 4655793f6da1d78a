// Dev mode's display keys: given the app's encryption key, the dashboard shows an encrypted
// function output and step output opened (the badge says how the run ended), marked "opened
// with the dev key"; without the key, or with a key that does not open it, it shows them sealed
// as before; either way the JSON and GraphQL APIs serve exactly the ciphertext the app sent.
// The app here seals as the real one does (inngest/encryption.ts): the encryption middleware's
// LibSodium strategy. Self-hosted mode refuses display keys.
// Run: npx vitest run --project inngest-local packages/inngest-local/tests/display-keys.test.ts
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inngest } from "inngest";
import { serve } from "inngest/node";
import { encryptionMiddleware } from "@inngest/middleware-encryption";
import { LibSodiumEncryptionService } from "@inngest/middleware-encryption/strategies/libSodium";
import { startInngestLocal, type InngestLocal, type InngestLocalOptions, type RunSummary } from "../index";
import { startSdkApp, waitFor, type SdkApp } from "../sdk-app";

const KEY = "inngest-local-display-keys-test-key-0123456789abcdef";
const OTHER_KEY = "inngest-local-display-keys-some-other-key-0123456789";

type Stand = { app: SdkApp; local: InngestLocal; close(): Promise<void> };

/** An SDK app whose client seals every output with `appKey`, and a stand-in in dev mode driving it. */
async function stand(id: string, opts: Partial<InngestLocalOptions>, appKey = KEY): Promise<Stand> {
  const logs: string[] = [];
  const app = await startSdkApp();
  const local = await startInngestLocal({
    port: 0,
    appUrls: [app.url],
    retryScale: 0.001,
    syncRetryMs: 50,
    log: (l) => logs.push(l),
    ...opts,
  });
  const quiet = { info() {}, warn() {}, error() {}, debug() {} };
  const inngest = new Inngest({
    id,
    isDev: true,
    baseUrl: local.url,
    logger: quiet,
    middleware: [encryptionMiddleware({ key: "", encryptionService: new LibSodiumEncryptionService(appKey) })],
  });
  const functions = [
    inngest.createFunction({ id: "proposes", retries: 0, triggers: [{ event: "api/propose" }] }, async ({ event, step }) => {
      const draft = await step.run("generate", async () => ({ summary: "a draft of the invoice" }));
      return { leaseId: event.data.leaseId, outcome: "proposed", words: draft.summary.split(" ").length };
    }),
    inngest.createFunction({ id: "stops", retries: 0, triggers: [{ event: "api/stop" }] }, async ({ event }) => ({
      leaseId: event.data.leaseId,
      outcome: "stopped",
      reason: "late_completion",
      status: "expired",
    })),
  ];
  app.setHandler(serve({ client: inngest, functions }));
  await waitFor("sync", () => logs.some((l) => l.startsWith(`synced app "${id}"`)));
  return {
    app,
    local,
    async close() {
      await local.close();
      await app.close();
    },
  };
}

async function ran(s: Stand, name: string, data: Record<string, unknown>): Promise<RunSummary> {
  const res = await fetch(`${s.local.url}/e/any-key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, data, ts: Date.now() }),
  });
  const eventId = ((await res.json()) as { ids: string[] }).ids[0]!;
  return waitFor(`the run of ${name} to end`, () => s.local.runs().find((r) => r.eventId === eventId && r.status !== "running"));
}
const page = async (s: Stand, path: string) => (await fetch(`${s.local.url}${path}`)).text();
const badgeOf = async (s: Stand, id: string) =>
  /<dt>Status<\/dt><dd>(<span class="badge [^"]+">[^<]*<\/span>(?: <span class="muted opened">[^<]*<\/span>)?)/.exec(
    await page(s, `/ui/runs/${id}`),
  )?.[1];
const sealed = (v: unknown) =>
  expect(v).toMatchObject({ __ENCRYPTED__: true, __STRATEGY__: "inngest/libsodium", data: expect.any(String) });

describe("inngest-local display keys (dev mode)", () => {
  let keyed: Stand;
  let keyless: Stand;
  let wrongKey: Stand;
  beforeAll(async () => {
    // The keyed one also has a key that opens nothing, as a rotation's fallback would be.
    [keyed, keyless, wrongKey] = await Promise.all([
      stand("keyed-app", { displayKeys: [OTHER_KEY, KEY] }),
      stand("keyless-app", {}),
      stand("wrong-key-app", { displayKeys: [OTHER_KEY] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([keyed?.close(), keyless?.close(), wrongKey?.close()]);
  });

  it("with the app's key, the badge says how the run ended and the outputs show opened, marked as such", async () => {
    const proposed = await ran(keyed, "api/propose", { leaseId: "L1" });
    const late = await ran(keyed, "api/stop", { leaseId: "L2" });
    expect(proposed.status).toBe("completed");
    const opened = ' <span class="muted opened">(opened with the dev key)</span>';
    expect(await badgeOf(keyed, proposed.id)).toBe(`<span class="badge s-completed">Completed: proposed</span>${opened}`);
    expect(await badgeOf(keyed, late.id)).toBe(`<span class="badge s-stopped">Completed: stopped (late completion)</span>${opened}`);
    const text = await page(keyed, `/ui/runs/${proposed.id}`);
    expect(text).toContain('Output <span class="muted opened">(opened with the dev key)</span></h2>');
    expect(text).toContain("&quot;outcome&quot;: &quot;proposed&quot;");
    expect(text).toContain("&quot;summary&quot;: &quot;a draft of the invoice&quot;"); // the step's output
    expect(text).not.toContain("__ENCRYPTED__");
    const list = await page(keyed, "/ui/runs");
    expect(list).toContain(`Completed: proposed</span>${opened}`);
    expect(list).toContain(`Completed: stopped (late completion)</span>${opened}`);
  });

  it("the APIs stay ciphertext: the run as stored, GET /runs/:id and the GraphQL outputs", async () => {
    const run = await ran(keyed, "api/propose", { leaseId: "L3" });
    await page(keyed, `/ui/runs/${run.id}`); // opened for the page first
    const stored = keyed.local.runs().find((r) => r.id === run.id)!;
    sealed(stored.output);
    sealed(stored.steps.find((s) => s.name === "generate")!.output);
    const json = (await (await fetch(`${keyed.local.url}/runs/${run.id}`)).json()) as RunSummary;
    sealed(json.output);
    sealed(json.steps[0]!.output);
    expect(json.output).toEqual(stored.output);
    const gql = async (query: string, variables: Record<string, unknown>) =>
      (
        (await (
          await fetch(`${keyed.local.url}/v0/gql`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ query, variables }),
          })
        ).json()) as { data: Record<string, any> }
      ).data;
    const trace = (
      await gql(`query ($id: String!) { run(runID: $id) { trace { outputID childrenSpans { name outputID } } } }`, { id: run.id })
    ).run.trace;
    const outputOf = async (outputID: string) =>
      JSON.parse(
        (await gql(`query ($o: String!) { runTraceSpanOutputByID(outputID: $o) { data } }`, { o: outputID })).runTraceSpanOutputByID.data,
      );
    sealed(await outputOf(trace.outputID));
    sealed(await outputOf(trace.childrenSpans.find((s: { name: string }) => s.name === "generate").outputID));
  });

  it("without the key nothing changes: the output reads as encrypted, the step output as stored", async () => {
    const run = await ran(keyless, "api/propose", { leaseId: "L4" });
    expect(await badgeOf(keyless, run.id)).toBe('<span class="badge s-sealed">Completed (output encrypted)</span>');
    const text = await page(keyless, `/ui/runs/${run.id}`);
    expect(text).toContain("this server cannot read how the run ended");
    expect(text).toContain("__ENCRYPTED__");
    expect(text).not.toContain("opened with the dev key");
    expect(text).not.toContain("a draft of the invoice");
  });

  it("with keys that do not open the app's outputs, the page shows them sealed, as without a key", async () => {
    const run = await ran(wrongKey, "api/propose", { leaseId: "L5" });
    sealed(run.output);
    expect(await badgeOf(wrongKey, run.id)).toBe('<span class="badge s-sealed">Completed (output encrypted)</span>');
    const text = await page(wrongKey, `/ui/runs/${run.id}`);
    expect(text).not.toContain("opened with the dev key");
    expect(text).not.toContain("a draft of the invoice");
  });

  it("self-hosted mode refuses display keys: the app's key stays out of a server run as in production", async () => {
    await expect(
      startInngestLocal({ port: 0, appUrls: [], signingKey: "signkey-test-00ff", eventKeys: ["k"], displayKeys: [KEY] }),
    ).rejects.toThrow(/dev mode only/);
  });
});
