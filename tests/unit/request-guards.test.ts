import fc from "fast-check";
// Next.js's own parser of the header, to check the guard against (not used by the app).
import { parseAndValidateFlightRouterState } from "next/dist/server/app-render/parse-and-validate-flight-router-state";
import { describe, expect, it } from "vitest";
import { hasBrokenActionBody, hasMalformedPath, hasMalformedRouterState } from "@/lib/request-guards";

const multipart = (body: string, headers: Record<string, string> = {}) =>
  new Request("http://127.0.0.1:3000/invoices/x", {
    method: "POST",
    headers: { "content-type": "multipart/form-data; boundary=x", ...headers },
    body,
  });
const field = (name: string, value: string) => `--x\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

describe("request guards", () => {
  it("finds paths whose percent-encoding does not decode", () => {
    expect(hasMalformedPath("/api/leases/%ZZ")).toBe(true);
    expect(hasMalformedPath("/api/leases/%E0%A4%A")).toBe(true);
    expect(hasMalformedPath("/api/leases/%20ok")).toBe(false);
  });

  it("refuses multipart bodies that do not parse", async () => {
    expect(await hasBrokenActionBody(multipart("garbage"))).toBe(true);
    expect(await hasBrokenActionBody(multipart(`${field("a", "b")}--x--\r\n`))).toBe(false);
  });

  it("refuses a server action called by id whose multipart arguments have no root field", async () => {
    const action = { "next-action": "00".repeat(21) };
    expect(await hasBrokenActionBody(multipart("--x--", action))).toBe(true);
    expect(await hasBrokenActionBody(multipart(`${field("a", "b")}--x--\r\n`, action))).toBe(true);
    // What React's encodeReply sends: the arguments' root at "0", a FormData argument's fields prefixed.
    expect(await hasBrokenActionBody(multipart(`${field("0", '["$K1"]')}${field("1_number", "INV-1")}--x--\r\n`, action))).toBe(false);
    // A plain form post (no JavaScript) names its action in a field, not a header.
    expect(await hasBrokenActionBody(multipart(`${field("$ACTION_ID_abc", "")}--x--\r\n`))).toBe(false);
  });

  it("refuses action arguments React's decoder would chase or choke on", async () => {
    const action = { "next-action": "00".repeat(21) };
    const text = (body: string) =>
      new Request("http://127.0.0.1:3000/invoices/x", {
        method: "POST",
        headers: { "content-type": "text/plain;charset=UTF-8", ...action },
        body,
      });
    for (const body of [
      '["$Q1"]',
      '["$h1"]',
      "null",
      '{"a":1}',
      '"x"',
      '[{"a":"$1"}]',
      '["$@0"]',
      '["$"]',
      '["$n12x"]',
      "not json",
      `${"[".repeat(40)}${"]".repeat(40)}`,
    ]) {
      expect(await hasBrokenActionBody(text(body)), body).toBe(true);
      expect(await hasBrokenActionBody(multipart(`${field("0", body)}--x--\r\n`, action)), body).toBe(true);
    }
    // What our actions' callers send: state objects, FormData references, escaped "$" text.
    for (const body of ['[{"message":null,"email":"$$ money"},"$K1"]', '["$undefined","$K1"]', '["$D2026-11-30T12:00:00.000Z"]', "[]"]) {
      expect(await hasBrokenActionBody(multipart(`${field("0", body)}--x--\r\n`, action)), body).toBe(false);
    }
    for (const body of ['[{"message":null,"email":"$$ money"}]', '["$undefined"]', '["$D2026-11-30T12:00:00.000Z"]', "[]"]) {
      expect(await hasBrokenActionBody(text(body)), body).toBe(false);
    }
    // A FormData reference in a text body: React looks for its fields in a form there is none of (500).
    expect(await hasBrokenActionBody(text('[0,"$K1"]'))).toBe(true);
  });

  it("leaves other requests alone", async () => {
    expect(await hasBrokenActionBody(new Request("http://127.0.0.1:3000/", { method: "GET" }))).toBe(false);
    const json = new Request("http://127.0.0.1:3000/", { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    expect(await hasBrokenActionBody(json)).toBe(false);
  });

  it("refuses a Next-Router-State-Tree that Next.js's own parser would throw on, and passes the ones its router sends", () => {
    const state = (value: string) => hasMalformedRouterState(new Headers({ "next-router-state-tree": value }));
    const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));
    expect(hasMalformedRouterState(new Headers())).toBe(false);
    // Shapes Next's client router sends.
    for (const good of [
      ["", { children: ["__PAGE__", {}] }, null, null],
      [
        "",
        {
          children: [
            "invoices",
            { children: [["id", "abc", "d", null], { children: ["__PAGE__", {}, ["/invoices/abc", "/invoices/abc"], "refetch"] }] },
          ],
        },
        null,
        null,
        1,
      ],
      ["", {}, null, "inside-shared-layout", null, "x"],
      [["slug", "a/b", "c", ["static"]], {}],
    ]) {
      expect(state(enc(good)), JSON.stringify(good)).toBe(false);
      expect(() => parseAndValidateFlightRouterState(enc(good))).not.toThrow();
    }
    for (const bad of [
      "%7B%22a%22",
      "not json",
      "%ZZ",
      enc({}),
      enc([]),
      enc(null),
      enc([""]),
      enc(["", {}, 1]),
      enc(["", {}, null, "nope"]),
      enc(["", {}, null, null, "x"]),
      enc(["", {}, null, null, null, null]),
      enc(["", {}, null, null, 1, "", 0]),
      enc([["a", "b", "zz", null], {}]),
      enc([["a", "b", "d"], {}]),
      enc(["", { children: 1 }]),
      "x".repeat(40_001),
    ]) {
      expect(state(bad), bad.slice(0, 60)).toBe(true);
      expect(() => parseAndValidateFlightRouterState(bad)).toThrow();
    }
    // Stricter than Next: children as a list (Next's schema lets an array pass as a record), and
    // a tree deeper than any route tree, so a crafted one cannot exhaust the stack.
    expect(state(enc(["", []]))).toBe(true);
    let deep: unknown = ["", {}];
    for (let i = 0; i < 100; i++) deep = ["", { children: deep }];
    expect(state(enc(deep))).toBe(true);
  });

  it("refuses every router state Next.js's parser throws on (generated), and more only where it says it is stricter", () => {
    const leaf = fc.oneof(
      fc.string({ maxLength: 3 }),
      fc.constantFrom("c", "d", "oc", "refetch", "metadata-only", "__PAGE__"),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
    );
    const segment = fc.oneof(
      { weight: 3, arbitrary: fc.string({ maxLength: 3 }) },
      leaf,
      fc.tuple(
        fc.string({ maxLength: 2 }),
        fc.string({ maxLength: 2 }),
        fc.constantFrom("d", "c", "x"),
        fc.oneof(fc.constant(null), fc.array(leaf, { maxLength: 2 })),
      ),
    );
    // Any JSON `depth` levels deep, or a near-valid tree, so both verdicts are common.
    const valueOf = (depth: number): fc.Arbitrary<unknown> =>
      depth === 0
        ? leaf
        : fc.oneof(
            leaf,
            treeOf(depth),
            fc.array(valueOf(depth - 1), { maxLength: 7 }),
            fc.dictionary(fc.constantFrom("children", "modal", "a"), valueOf(depth - 1), { maxKeys: 2 }),
          );
    const treeOf = (depth: number): fc.Arbitrary<unknown> =>
      fc.tuple(
        segment,
        depth <= 1
          ? fc.constant({})
          : fc.oneof(
              { weight: 4, arbitrary: fc.dictionary(fc.constantFrom("children", "modal"), treeOf(depth - 1), { maxKeys: 2 }) },
              valueOf(depth - 1),
            ),
        fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, fc.constant(["/a", "/a"]), leaf),
        fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, leaf),
      );
    const value = fc.oneof(treeOf(4), valueOf(4));
    // Where the guard is stricter than Next on purpose: an array as a node's children.
    const listAsChildren = (v: unknown): boolean =>
      Array.isArray(v) &&
      ((v.length >= 2 && Array.isArray(v[1])) ||
        v.some(listAsChildren) ||
        (typeof v[1] === "object" && v[1] !== null && Object.values(v[1]).some(listAsChildren)));
    let accepted = 0;
    fc.assert(
      fc.property(value, (v) => {
        const header = encodeURIComponent(JSON.stringify(v) ?? "");
        let nextThrows = false;
        try {
          parseAndValidateFlightRouterState(header);
        } catch {
          nextThrows = true;
        }
        const refused = hasMalformedRouterState(new Headers({ "next-router-state-tree": header }));
        if (nextThrows) expect(refused, header).toBe(true);
        else if (refused) expect(listAsChildren(v), header).toBe(true);
        else accepted++;
      }),
      { numRuns: 3000 },
    );
    // The generator reaches valid trees too, or the second half proves nothing.
    expect(accepted).toBeGreaterThan(100);
  });
});
