// Runs once when the server starts. The check lives in a Node-only module so the Edge
// bundle of this file never sees process.exit.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") await import("./lib/startup");
}
