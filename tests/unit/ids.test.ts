// lib/ids.ts: one spelling of an id for every comparison, key and signature in the app, so the
// same UUID in upper or mixed case is the same id everywhere (PostgreSQL reads it so already).
import { describe, expect, it } from "vitest";
import { canonicalId, canonicalKey, isUuid } from "@/lib/ids";
import { leaseTraceId } from "@/lib/tracing";

const ID = "0b7c1e3a-9f2d-4c5e-8a1b-2c3d4e5f6a7b";
const MIXED = "0B7c1E3a-9F2d-4C5e-8A1b-2C3d4E5f6A7B";

describe("canonicalId", () => {
  it("spells an id in any case as the database does, and is no id for anything else", () => {
    expect(canonicalId(MIXED)).toBe(ID);
    expect(canonicalId(ID.toUpperCase())).toBe(ID);
    expect(canonicalId(ID)).toBe(ID);
    for (const bad of ["", "x", ` ${ID}`, `${ID}0`, ID.replaceAll("-", ""), null, undefined, 42, { id: ID }, [ID]]) {
      expect(canonicalId(bad), String(bad)).toBeNull();
      expect(isUuid(bad)).toBe(false);
    }
  });

  it("canonicalKey: an id in the database's spelling, any other key as it is", () => {
    expect(canonicalKey(MIXED)).toBe(ID);
    expect(canonicalKey("summary")).toBe("summary");
    expect(canonicalKey("Line-ONE")).toBe("Line-ONE");
  });

  it("an id's trace is the same whatever its case", () => {
    expect(leaseTraceId(MIXED)).toBe(leaseTraceId(ID));
    expect(leaseTraceId(ID)).toBe(ID.replaceAll("-", ""));
  });
});
