import fs from "node:fs";
import { describe, expect, it } from "vitest";

// .env.example is the README's Configuration table in a form one can copy: the two name the
// same variables, so neither can gain a setting the other does not list.
const read = (file: string) => fs.readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");

/** Every `NAME` in the rows of the README's Configuration table (its first table after the heading). */
function readmeVariables(): string[] {
  const section = read("README.md").split(/^## Configuration$/m)[1]!.split(/^## /m)[0]!;
  const rows = section.split("\n").filter((line) => line.startsWith("|"));
  return [...new Set(rows.flatMap((row) => [...row.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)))].sort();
}

/** Every variable .env.example sets or shows commented out (`NAME=` or `# NAME=`). */
function exampleVariables(): string[] {
  return [...new Set([...read(".env.example").matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!))].sort();
}

describe(".env.example", () => {
  it("lists every variable the README's Configuration table names, and no other", () => {
    const readme = readmeVariables();
    expect(readme).toContain("DATABASE_URL");
    expect(readme.length).toBeGreaterThan(20);
    expect(exampleVariables()).toEqual(readme);
  });

  it("sets nothing: a copy changes no default until a line is uncommented", () => {
    const set = read(".env.example").split("\n").filter((line) => line.trim() && !line.startsWith("#"));
    expect(set).toEqual([]);
  });
});
