import { describe, expect, it } from "vitest";
import { hasBrokenMultipart, hasMalformedPath } from "@/lib/request-guards";

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
    expect(await hasBrokenMultipart(multipart("garbage"))).toBe(true);
    expect(await hasBrokenMultipart(multipart(`${field("a", "b")}--x--\r\n`))).toBe(false);
  });

  it("refuses a server action called by id whose multipart arguments have no root field", async () => {
    const action = { "next-action": "00".repeat(21) };
    expect(await hasBrokenMultipart(multipart("--x--", action))).toBe(true);
    expect(await hasBrokenMultipart(multipart(`${field("a", "b")}--x--\r\n`, action))).toBe(true);
    // What React's encodeReply sends: the arguments' root at "0", a FormData argument's fields prefixed.
    expect(await hasBrokenMultipart(multipart(`${field("0", '["$K1"]')}${field("1_number", "INV-1")}--x--\r\n`, action))).toBe(false);
    // A plain form post (no JavaScript) names its action in a field, not a header.
    expect(await hasBrokenMultipart(multipart(`${field("$ACTION_ID_abc", "")}--x--\r\n`))).toBe(false);
  });

  it("leaves other requests alone", async () => {
    expect(await hasBrokenMultipart(new Request("http://127.0.0.1:3000/", { method: "GET" }))).toBe(false);
    const json = new Request("http://127.0.0.1:3000/", { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    expect(await hasBrokenMultipart(json)).toBe(false);
  });
});
