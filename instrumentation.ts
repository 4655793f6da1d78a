// Runs once when the server starts. The check lives in a Node-only module so the Edge
// bundle of this file never sees process.exit.
//
// Traces (lib/tracing.ts): only when OTEL_EXPORTER_OTLP_ENDPOINT is set is an OpenTelemetry
// SDK registered (@vercel/otel, exporting over OTLP as the OTEL_EXPORTER_OTLP_* variables
// say). Without it nothing is registered: every span goes to the API's no-op tracer, with no
// exporter, no processor and no buffer.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  await import("./lib/startup");
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const { registerOTel } = await import("@vercel/otel");
    registerOTel({ serviceName: process.env.OTEL_SERVICE_NAME || "claimcheck" });
  }
}
