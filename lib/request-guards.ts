// Requests Next.js itself fails on with a 500 before any handler of ours runs: a path whose
// percent-encoding does not decode (its router calls decodeURIComponent), and a multipart
// body that does not parse (its server-action handler: "Failed to parse body as FormData").
// proxy.ts, which runs first, answers them 400 instead.

/** True when the path has malformed percent-encoding (e.g. `/api/leases/%ZZ`). */
export function hasMalformedPath(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return false;
  } catch {
    return true;
  }
}

/**
 * True when a POST to a page carries a body Next.js or React would fail on with a 500: a
 * multipart body that does not parse, or a server action called by id (Next-Action) whose
 * arguments React's reply decoder cannot take. Reads a clone, so the request goes on
 * untouched; Next.js buffers the body for the proxy anyway (up to its proxy body limit).
 */
export async function hasBrokenActionBody(request: Request): Promise<boolean> {
  if (request.method !== "POST") return false;
  const multipart = /^multipart\/form-data\b/i.test(request.headers.get("content-type") ?? "");
  const action = request.headers.has("next-action");
  if (!multipart && !action) return false;
  let root: FormDataEntryValue | null;
  try {
    // encodeReply sends the arguments as one JSON text, or as multipart with their root at
    // field "0" when an argument is a FormData.
    root = multipart ? (await request.clone().formData()).get("0") : await request.clone().text();
  } catch {
    return true;
  }
  return action && !isSafeReply(root, multipart);
}

/**
 * The arguments' root must be JSON whose `$`-tagged strings are only those our actions'
 * arguments can carry (a FormData, undefined, special numbers, dates, escaped `$$` text).
 * Any other tag is a reference React would chase (chunks, promises, maps, server references)
 * and, pointing at nothing, it waits for a chunk that never comes ("Connection closed") or
 * throws; both are 500s. Nesting is bounded so a deep array cannot exhaust the stack.
 */
const SAFE_TAG = /^\$(?:\$.*|undefined|NaN|-?Infinity|-0|n-?\d{1,64}|D\d{4}-\d{2}-\d{2}T[\d:.]+Z)$/s;
/** A FormData argument: its fields travel beside the root, so only in a multipart body. */
const FORM_DATA_TAG = /^\$K\d+$/;
const MAX_DEPTH = 32;

function isSafeReply(root: FormDataEntryValue | null, multipart: boolean): boolean {
  if (typeof root !== "string") return false;
  let value: unknown;
  try {
    value = JSON.parse(root);
  } catch {
    return false;
  }
  // The arguments are a list; Next spreads the root into the call (a null root was a 500).
  if (!Array.isArray(value)) return false;
  const walk = (v: unknown, depth: number): boolean => {
    if (depth > MAX_DEPTH) return false;
    if (typeof v === "string") return !v.startsWith("$") || SAFE_TAG.test(v) || (multipart && FORM_DATA_TAG.test(v));
    if (Array.isArray(v)) return v.every((item) => walk(item, depth + 1));
    if (v && typeof v === "object") return Object.values(v).every((item) => walk(item, depth + 1));
    return true;
  };
  return walk(value, 0);
}

// ---------------------------------------------------------------------------------------
// Headers of Next.js's client router (RSC navigations and prefetches)

/**
 * True when a request carries a `Next-Router-State-Tree` that Next.js (16.4) would fail on
 * with a 500 ("The router state header was sent but could not be parsed"): its render
 * decodes it as URI-encoded JSON and asserts the shape below before any code of ours runs.
 * The shape is Next's own FlightRouterState (next/dist/server/app-render/types.js): a tuple
 * [segment, children by slot, url?, refresh marker?, flags?, string?], where a segment is a
 * string or [param name, cache key, param type, static siblings or null]. We check the same
 * shape, a little stricter (plain objects only, a depth bound so a nested tree cannot
 * exhaust the stack), and the same 40,000-character bound Next applies.
 * Reaching the proxy at all needs `skipProxyUrlNormalize` (next.config.ts): without it Next
 * hides its router headers from the proxy.
 */
export function hasMalformedRouterState(headers: Headers): boolean {
  const raw = headers.get("next-router-state-tree");
  if (raw === null) return false;
  if (raw.length > ROUTER_STATE_MAX_LENGTH) return true;
  let tree: unknown;
  try {
    tree = JSON.parse(decodeURIComponent(raw));
  } catch {
    return true;
  }
  return !isRouterState(tree, 0);
}

const ROUTER_STATE_MAX_LENGTH = 20 * 2000;
const ROUTER_STATE_MAX_DEPTH = 64;
const DYNAMIC_PARAM_TYPES = new Set([
  "c",
  "ci(..)(..)",
  "ci(.)",
  "ci(..)",
  "ci(...)",
  "oc",
  "d",
  "di(..)(..)",
  "di(.)",
  "di(..)",
  "di(...)",
]);
const REFRESH_MARKERS = new Set(["refetch", "inside-shared-layout", "metadata-only"]);

const isString = (v: unknown): v is string => typeof v === "string";
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && [Object.prototype, null].includes(Object.getPrototypeOf(v));

function isSegment(v: unknown): boolean {
  if (isString(v)) return true;
  return (
    Array.isArray(v) &&
    v.length === 4 &&
    isString(v[0]) &&
    isString(v[1]) &&
    DYNAMIC_PARAM_TYPES.has(v[2] as string) &&
    (v[3] === null || (Array.isArray(v[3]) && v[3].every(isString)))
  );
}

function isRouterState(v: unknown, depth: number): boolean {
  if (depth > ROUTER_STATE_MAX_DEPTH || !Array.isArray(v) || v.length < 2 || v.length > 6) return false;
  const [segment, children, url, refresh, flags, extra] = v as unknown[];
  if (!isSegment(segment) || !isPlainObject(children)) return false;
  if (!Object.values(children).every((child) => isRouterState(child, depth + 1))) return false;
  const optional = (x: unknown, ok: (x: unknown) => boolean) => x === undefined || x === null || ok(x);
  return (
    optional(url, (u) => Array.isArray(u) && u.length === 2 && u.every(isString)) &&
    optional(refresh, (r) => REFRESH_MARKERS.has(r as string)) &&
    optional(flags, (f) => typeof f === "number" && Number.isFinite(f)) &&
    (extra === undefined || isString(extra))
  );
}
