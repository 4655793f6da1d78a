// How our tools run TypeScript that imports the app's server code: tsx with the react-server
// condition, under which `server-only` resolves to an empty module instead of throwing.
// Defined once, as package.json's "tsx:server" script (what db:migrate, db:seed and bench
// run); the tools that spawn tsx themselves read their flags from it here.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const script: unknown = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts?.["tsx:server"];
if (typeof script !== "string" || !script.startsWith("tsx ")) {
  throw new Error(`package.json needs a "tsx:server" script of the form "tsx <flags>"; found ${JSON.stringify(script)}`);
}

/** The flags tsx takes for server code, e.g. ["--conditions=react-server"]. */
export const TSX_SERVER_FLAGS: readonly string[] = script.split(/\s+/).slice(1);
