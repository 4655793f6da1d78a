// Which origin is ours, for the cross-site write checks of the route layer (app/_lib/http.ts) and
// of proxy.ts (server actions). See docs/decisions/0011-cross-site-writes-and-headers.md.
//
// APP_URL, when set, names the public origin exactly (scheme, host and port): needed behind
// a reverse proxy that rewrites Host. Otherwise our origin is the Host header the request
// came with. A browser sets both Host and Origin itself and a page cannot change either, so
// a cross-site form or fetch always shows a foreign Origin; a client that can forge Host can
// forge Origin too, and it holds no victim's cookie. X-Forwarded-Host is never trusted: a
// client sets it freely.

/** The public origin from APP_URL, or null when unset. Throws on a malformed value. */
export function configuredOrigin(value = process.env.APP_URL): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`APP_URL must be an absolute http(s) URL such as https://claimcheck.example.com (got ${JSON.stringify(value)}).`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error(`APP_URL must be an http(s) URL (got ${JSON.stringify(value)}).`);
  }
  return url.origin;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Anything but GET, HEAD and OPTIONS may change state. */
export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

/**
 * True when the request carries an Origin header that is not ours. No Origin at all (curl,
 * server-to-server, the Inngest server) is not cross-origin: the cookie alone decides.
 * `url` is the request URL, used for the host only when there is no Host header.
 */
export function isForeignOrigin(headers: Headers, url: string): boolean {
  const origin = headers.get("origin");
  if (origin === null) return false;
  // "null": a sandboxed frame, a data: or file: page, a cross-site redirect — never us.
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return true;
  }
  const configured = configuredOrigin();
  if (configured) return from.origin !== configured;
  const host = ownHost(headers, url);
  return host === null || from.host !== host;
}

/** Our host as the request names it: the Host header (normalised), else the URL's host. */
export function ownHost(headers: Headers, url: string): string | null {
  const configured = configuredOrigin();
  if (configured) return new URL(configured).host;
  const header = headers.get("host");
  try {
    return header ? new URL(`http://${header}`).host : new URL(url).host;
  } catch {
    return null;
  }
}
