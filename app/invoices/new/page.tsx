import type { Metadata } from "next";
import Link from "next/link";
import { requireActor } from "@/app/_lib/actor";
import { NewInvoiceForm } from "./form";

export const metadata: Metadata = { title: "New invoice" };

export default async function NewInvoicePage() {
  await requireActor();
  return (
    <>
      <p>
        <Link href="/invoices">← Invoices</Link>
      </p>
      <h1>New invoice</h1>
      <NewInvoiceForm />
    </>
  );
}
