import { redirect } from "next/navigation";
import { getActor } from "@/app/_lib/actor";

export default async function Home() {
  redirect((await getActor()) ? "/invoices" : "/sign-in");
}
