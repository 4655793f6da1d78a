// Imported once at server start (instrumentation.ts): a bad or missing production secret
// stops start-up here, with a message that names it, not at the first request.
import { appEnv } from "./env";

try {
  appEnv();
} catch (error) {
  console.error(`Claimcheck cannot start. ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
