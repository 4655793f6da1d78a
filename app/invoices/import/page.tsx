import type { Metadata } from "next";
import Link from "next/link";
import { CSV_COLUMNS } from "@/lib/invoice-import";
import { requireActor } from "@/app/_lib/actor";
import { ImportForm } from "./form";

export const metadata: Metadata = { title: "Import invoices" };

export default async function ImportPage() {
  await requireActor();
  return (
    <>
      <p>
        <Link href="/invoices">← Invoices</Link>
      </p>
      <h1>Import invoices from CSV</h1>
      <ImportForm columns={CSV_COLUMNS.join(",")} />
    </>
  );
}
