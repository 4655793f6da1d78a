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
 * True when a POST declares multipart/form-data and its body does not parse as such, or
 * carries no arguments for the server action it names. Reads a
 * clone, so the request goes on untouched; Next.js buffers the body for the proxy anyway
 * (up to its proxy body limit).
 */
export async function hasBrokenMultipart(request: Request): Promise<boolean> {
  if (request.method !== "POST" || !/^multipart\/form-data\b/i.test(request.headers.get("content-type") ?? "")) return false;
  let form: FormData;
  try {
    form = await request.clone().formData();
  } catch {
    return true;
  }
  // A server action called by id (Next-Action) with multipart arguments: React's encodeReply
  // always puts the root of the arguments at field "0". Without it React's decoder waits for
  // a root that never comes and Next answers 500 ("Connection closed").
  // A root that is not JSON makes React's decoder throw (SyntaxError), a 500 too (found by fuzzing).
  return request.headers.has("next-action") && !isJsonText(form.get("0"));
}

function isJsonText(value: FormDataEntryValue | null): boolean {
  if (typeof value !== "string") return false;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}
