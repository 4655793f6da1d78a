"use client";
// Keeps every open page of an invoice current: the invoice's event stream
// (GET /api/invoices/:id/events) says its version whenever it changes, and a version newer than
// the one this page was rendered at re-renders the page from the server. Without JavaScript, a
// reload shows the same. A stream refused (404, 401, too many streams) is not retried: the page
// then stays as rendered, as it would without JavaScript.
import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";

export function InvoiceLive({ invoiceId, version }: { invoiceId: string; version: number }) {
  const router = useRouter();
  const shown = useRef(version);
  useEffect(() => {
    shown.current = version;
  }, [version]);
  useEffect(() => {
    const source = new EventSource(`/api/invoices/${invoiceId}/events`);
    const onInvoice = (event: MessageEvent<string>) => {
      let next: unknown;
      try {
        next = (JSON.parse(event.data) as { version?: unknown }).version;
      } catch {
        return;
      }
      if (typeof next === "number" && next > shown.current) {
        shown.current = next;
        router.refresh();
      }
    };
    // Ended for good (signed out, the invoice out of reach): no reconnect into a refusal; the
    // next render or reload says the rest. A stream that merely ran its five minutes reconnects.
    const onEnd = () => source.close();
    source.addEventListener("invoice", onInvoice);
    source.addEventListener("end", onEnd);
    return () => {
      source.removeEventListener("invoice", onInvoice);
      source.removeEventListener("end", onEnd);
      source.close();
    };
  }, [invoiceId, router]);
  return null;
}
