import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite loads WASM and data files relative to its own module URL; bundling it
  // breaks every query at run time (ERR_INVALID_ARG_TYPE ... URL) and copies the WASM into static assets.
  // rate-limiter-flexible imports drizzle-orm by a computed name, which a bundle cannot resolve.
  serverExternalPackages: ["@electric-sql/pglite", "rate-limiter-flexible"],
  poweredByHeader: false,
  // Lets parallel builds (tests, a second checkout) keep separate outputs.
  distDir: process.env.NEXT_DIST_DIR || ".next",
};

export default nextConfig;
