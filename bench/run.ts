// `npm run bench [sweep|lifecycle|page] [-- options]`: one entry point for the benchmarks.
//   sweep      what the expiry sweep's partial index buys (bench/sweep.ts); the default
//   lifecycle  a lease's lifecycle: raw SQL floor, domain calls, HTTP through the built app
//              and the local Inngest stand-in, with latencies and database work per lifecycle
//              (bench/lifecycle.ts)
//   page       the invoice page's first-load JavaScript and LCP in Chromium (bench/page.ts)
//   timeline   where one lifecycle's wall time goes: the client's marks against the app's
//              OpenTelemetry spans, one lifecycle at a time (bench/timeline.ts)
//   reads      what one GET /api/leases/:id costs the app in CPU, and where it goes (bench/reads.ts)
const BENCHES = {
  sweep: () => import("./sweep"),
  lifecycle: () => import("./lifecycle"),
  page: () => import("./page"),
  timeline: () => import("./timeline"),
  reads: () => import("./reads"),
} as const;

const chosen = (process.argv[2] && !process.argv[2].startsWith("-") ? process.argv[2] : "sweep") as keyof typeof BENCHES;
if (!(chosen in BENCHES)) {
  console.error(`npm run bench: unknown benchmark ${chosen}; one of ${Object.keys(BENCHES).join(", ")}`);
  process.exit(2);
}
await BENCHES[chosen]();
export {};
