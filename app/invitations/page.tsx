import { redirect } from "next/navigation";
import { requireActor } from "@/app/_lib/actor";

// Where a new member lands after signing up: on to the team's invoices.
export default async function InvitationsPage() {
  await requireActor();
  redirect("/invoices");
}
