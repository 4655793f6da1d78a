// The pure parts of lib/members.ts: the link's token and what is stored of it, and the inputs.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  AcceptBody,
  AcceptInput,
  InvitationInput,
  invitationUrl,
  isToken,
  newToken,
  OrgInput,
  RoleInput,
  tokenSha256,
} from "@/lib/members";
import { MEMBER_WORDS, isMemberNotice } from "@/app/_lib/member-words";
import { ERROR_STATUS } from "@/app/_lib/http";

describe("invitation tokens", () => {
  it("are 32 random bytes as base64url (43 characters), stored as their sha256 in hex", () => {
    const { token, sha256 } = newToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, "base64url")).toHaveLength(32);
    expect(sha256).toBe(createHash("sha256").update(token).digest("hex"));
    expect(tokenSha256(token)).toBe(sha256);
    expect(newToken().token).not.toBe(token);
  });

  it("isToken takes only that shape", () => {
    expect(isToken(newToken().token)).toBe(true);
    for (const bad of ["", "a".repeat(42), "a".repeat(44), `${"a".repeat(42)}=`, `${"a".repeat(42)}/`, null, 43])
      expect(isToken(bad)).toBe(false);
  });

  it("the link is the origin and /invitations/<token>", () => {
    expect(invitationUrl("https://cc.example", "abc")).toBe("https://cc.example/invitations/abc");
  });
});

describe("inputs", () => {
  it("an invitation's email is trimmed and lower-cased; the role is one of the three", () => {
    expect(InvitationInput.parse({ email: "  Erin@Example.COM ", role: "approver" })).toEqual({
      email: "erin@example.com",
      role: "approver",
    });
    for (const bad of [
      { email: "erin", role: "member" },
      { email: "e@x.test", role: "owner" },
      { email: "e\u0000@x.test", role: "member" },
      {},
    ]) {
      expect(InvitationInput.safeParse(bad).success).toBe(false);
    }
    expect(RoleInput.safeParse({ role: "Admin" }).success).toBe(false);
  });

  it("a new password is 12 to 1024 characters; a name 1 to 200 after trimming", () => {
    expect(AcceptInput.safeParse({ name: "Erin", password: "x".repeat(12) }).success).toBe(true);
    expect(AcceptInput.safeParse({ name: "Erin", password: "x".repeat(11) }).success).toBe(false);
    expect(AcceptInput.safeParse({ name: "Erin", password: "x".repeat(1025) }).success).toBe(false);
    expect(AcceptInput.safeParse({ name: "   ", password: "x".repeat(12) }).success).toBe(false);
    expect(OrgInput.safeParse({ name: "Acme", adminEmail: "a@acme.test" }).success).toBe(true);
  });

  it("a link's body before the invitation is known: a password of 1 to 1024 characters (an account's own may be short), any name", () => {
    expect(AcceptBody.safeParse({ password: "x" }).success).toBe(true);
    expect(AcceptBody.safeParse({ name: 5, password: "x" }).success).toBe(true);
    for (const bad of [{}, { name: "Erin" }, { password: "" }, { password: "x".repeat(1025) }, { password: 5 }]) {
      expect(AcceptBody.safeParse(bad).success).toBe(false);
    }
  });
});

describe("words", () => {
  it("every member refusal code the routes answer has words, and every notice is recognised", () => {
    for (const code of [
      "forbidden",
      "member_not_found",
      "invitation_not_found",
      "last_admin",
      "already_member",
      "invalid_credentials",
      "too_many_attempts",
    ] as const) {
      expect(ERROR_STATUS[code]).toBeGreaterThanOrEqual(400);
      expect(MEMBER_WORDS[code]).toMatch(/\w/);
    }
    expect(Object.keys(MEMBER_WORDS).every(isMemberNotice)).toBe(true);
    expect(isMemberNotice("toString")).toBe(false);
  });
});
