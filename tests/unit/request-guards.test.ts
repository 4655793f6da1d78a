import { describe, expect, it } from "vitest";
import { hasBrokenActionBody, hasMalformedPath } from "@/lib/request-guards";

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
      new Request("http://127.0.0.1:3000/invoices/x", { method: "POST", headers: { "content-type": "text/plain;charset=UTF-8", ...action }, body });
    for (const body of ['["$Q1"]', '["$h1"]', "null", '{"a":1}', '"x"', '[{"a":"$1"}]', '["$@0"]', '["$"]', '["$n12x"]', "not json", `${"[".repeat(40)}${"]".repeat(40)}`]) {
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
});
