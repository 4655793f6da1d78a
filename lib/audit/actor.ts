import "server-only";
// Who acts, for the audit chain's triggers, in a write whose rows do not name them (a role
// change, a removal: the membership row names the member, not the admin). The setting is the
// transaction's own (set_config's third argument), so it ends with it (docs/decisions/0080).
import { sql } from "drizzle-orm";
import type { Tx } from "@/db/client";

export async function actAs(tx: Tx, actorId: string): Promise<void> {
  await tx.execute(sql`select set_config('claimcheck.actor', ${actorId}, true)`);
}
