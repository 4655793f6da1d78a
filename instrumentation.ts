// Runs once when the server starts: a bad or missing production secret stops start-up
// here, with a message that names it, rather than at the first request.
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { appEnv } = await import("./lib/env");
    appEnv();
  }
}
