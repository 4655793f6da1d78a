// Runs once when the server starts: a bad or missing production secret stops start-up
// here, with a message that names it, rather than failing at the first request.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { appEnv } = await import("./lib/env");
  try {
    appEnv();
  } catch (error) {
    console.error(`Claimcheck cannot start. ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
