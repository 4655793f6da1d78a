import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite loads WASM and data files relative to its own module URL; bundling it
  // breaks every query at run time (ERR_INVALID_ARG_TYPE ... URL) and copies the WASM into static assets.
  // rate-limiter-flexible imports drizzle-orm by a computed name, which a bundle cannot resolve.
  serverExternalPackages: ["@electric-sql/pglite", "rate-limiter-flexible"],
  poweredByHeader: false,
  // The app shows no next/image. Left on, the optimizer fetched any same-site URL it was
  // given and answered 500 when that was not an image (`/_next/image?url=%2Finvoices`); off,
  // /_next/image is a 404 (docs/decisions/0048).
  images: { unoptimized: true },
  // proxy.ts must see the request as sent: by default Next hides the headers of its client
  // router (RSC, Next-Router-State-Tree...) from the proxy, and a malformed router state is a
  // 500 inside Next's render that only the proxy can refuse first (lib/request-guards.ts).
  // It also leaves the `_rsc` parameter in the URL the proxy sees; proxy.ts drops it where it
  // uses the URL.
  skipProxyUrlNormalize: true,
  // Lets parallel builds (tests, a second checkout) keep separate outputs.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  experimental: {
    // No Turbopack cache across `next dev` starts. A start after one that was stopped before
    // Turbopack finished writing its cache (Ctrl-C seconds after a page's first compile) reloaded
    // /sign-in two or three times a second for as long as it ran: every new HMR subscription
    // answered an update, so the tab reloaded ("HMR hash mismatch"). Every start now compiles
    // from nothing, as a fresh clone does (docs/notes/dev-reload-loop.md, docs/decisions/0059).
    turbopackFileSystemCacheForDev: false,
    serverActions: {
      // No other site may call our server actions. Next compares Origin with X-Forwarded-Host
      // (else Host); proxy.ts sets that header to our own host, so a forged one is never seen.
      // Behind a proxy that rewrites Host, APP_URL names the public origin (lib/origin.ts).
      // A malformed APP_URL is left to lib/env.ts, which stops start-up naming it.
      allowedOrigins: URL.canParse(process.env.APP_URL ?? "") ? [new URL(process.env.APP_URL!).host] : [],
      // The CSV import's Confirm carries the previewed file back as base64: 8 MiB (the import's
      // limit, lib/invoice-import.ts) is about 10.7 MB so. Every other action's fields are bounded
      // by its own schema (docs/decisions/0066).
      bodySizeLimit: "12mb",
    },
    // Next clones a request body for proxy.ts up to this size and cuts it off beyond: at least
    // the largest action body above (default 10 MB).
    proxyClientMaxBodySize: "12mb",
  },
  // `npm run dev` serves and prints http://127.0.0.1:<port>; Next allows only localhost to
  // reach its dev resources (the HMR websocket) unless told.
  allowedDevOrigins: ["127.0.0.1"],
  // proxy.ts skips the build's static files; they still must not be sniffed into scripts.
  async headers() {
    return [{ source: "/_next/static/:path*", headers: [{ key: "X-Content-Type-Options", value: "nosniff" }] }];
  },
};

export default nextConfig;
