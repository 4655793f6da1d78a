import { describe, expect, it } from "vitest";
import { toCsv } from "@/lib/csv";

const BOM = "\uFEFF";
/** The one data row of a file with a header `h`. */
const cell = (value: string | number | null) =>
  toCsv(["h"], [[value]])
    .slice(BOM.length)
    .split("\r\n")[1];

describe("toCsv", () => {
  it("starts with a byte-order mark and ends each record with CRLF", () => {
    expect(toCsv(["a", "b"], [["1", "2"]])).toBe(`${BOM}a,b\r\n1,2\r\n`);
  });

  it("quotes cells holding a comma, a quote or a line break, doubling quotes", () => {
    expect(cell("Smith, Jones & Co")).toBe('"Smith, Jones & Co"');
    expect(cell('The "Best" Ltd')).toBe('"The ""Best"" Ltd"');
    expect(toCsv(["h"], [["two\nlines"]])).toBe(`${BOM}h\r\n"two\nlines"\r\n`);
    expect(toCsv(["h"], [["cr\rhere"]])).toBe(`${BOM}h\r\n"cr\rhere"\r\n`);
    expect(cell("plain")).toBe("plain");
  });

  it("defuses formula injection: a text cell starting with = + - @ (or a tab, CR, full-width forms) gets a leading '", () => {
    expect(cell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(cell("+1+1")).toBe("'+1+1");
    expect(cell("-2+3")).toBe("'-2+3");
    expect(cell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(cell("\t=1")).toBe("'\t=1");
    expect(cell("\uFF1D1")).toBe("'\uFF1D1");
    expect(cell("=1,2")).toBe(`"'=1,2"`);
    // Only at the start.
    expect(cell("a=b")).toBe("a=b");
  });

  it("writes numbers with two decimals, never prefixed, negative included", () => {
    expect(cell(1234.5)).toBe("1234.50");
    expect(cell(-12)).toBe("-12.00");
    expect(cell(0.1 + 0.2)).toBe("0.30");
  });

  it("writes null as an empty cell", () => {
    expect(toCsv(["a", "b"], [[null, "x"]])).toBe(`${BOM}a,b\r\n,x\r\n`);
  });
});
