// Where to send a user after signing in: back to the page they were on, given as a `next`
// parameter. Only our own signed-in pages qualify (/invoices and below), rebuilt from a parse
// against a fixed origin, so no value can leave the site (//evil.example, /\evil.example,
// https://..., javascript:, encoded slashes) or split a header (CR/LF). Client-safe.

/** The request header proxy.ts sets on every page request: the path (and query) asked for. */
export const REQUEST_PATH_HEADER = "x-claimcheck-path";

const BASE = "http://claimcheck.invalid";
// Path segments of plain letters, digits, "-", "_" and "."; never "." or ".." alone (checked below).
const OUR_PAGES = /^\/invoices(?:\/[A-Za-z0-9_.-]+)*$/;
const MAX_LENGTH = 2048;

/** `value` as a same-site page path ("/invoices/…?…"), or null when it is anything else. */
export function safeReturnPath(value: unknown): string | null {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_LENGTH) return null;
  // Control characters (header splitting), backslashes (read as "/" by browsers), spaces.
  if (/[\u0000-\u0020\u007f-\uffff\\]/.test(value)) return null;
  if (!value.startsWith("/") || value.startsWith("//")) return null;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE || !OUR_PAGES.test(url.pathname)) return null;
  if (url.pathname.split("/").some((segment) => segment === "." || segment === "..")) return null;
  // Next's own internal query (`_rsc`) names a request, not a page.
  url.searchParams.delete("_rsc");
  return `${url.pathname}${url.search}`;
}

/** "/sign-in", with `next` when there is a page to return to. */
export function signInPath(next: string | null, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams(extra);
  if (next) params.set("next", next);
  const query = params.toString();
  return query ? `/sign-in?${query}` : "/sign-in";
}
