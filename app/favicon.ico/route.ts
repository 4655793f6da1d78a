// Browsers still ask for /favicon.ico now and then (a new tab before it has read the page's
// icon link, a page whose head is being swapped during a navigation): answer with the app's
// icon (app/icon.svg) rather than a 404 in the console.
export const dynamic = "force-static";

const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1d4ed8"/><path d="M9 17l5 5 9-11" fill="none" stroke="#fff" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round"/></svg>';

export function GET(): Response {
  return new Response(ICON, { headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" } });
}
