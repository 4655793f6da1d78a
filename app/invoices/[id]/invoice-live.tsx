"use client";
// Keeps every open page of an invoice current: the invoice's event stream
// (GET /api/invoices/:id/events) says its version whenever it changes, and a version newer than
// the one this page was rendered at re-renders the page from the server (useLiveRefresh). A
// stream refused (404, 401, too many streams) is not retried: the page then stays as rendered,
// as it would without JavaScript.
import { useLiveRefresh } from "@/app/_components/use-live-refresh";

const newer = (next: unknown, shown: number): next is number => typeof next === "number" && next > shown;

export function InvoiceLive({ invoiceId, version }: { invoiceId: string; version: number }) {
  useLiveRefresh(`/api/invoices/${invoiceId}/events`, "invoice", "version", version, newer);
  return null;
}
