"use client";
// Keeps an open approval page current (the queue, or one request): the approvals stream
// (GET /api/approvals/events) says a fingerprint of the pending requests this member sees, first
// as it is now and again whenever it changes (a request submitted, decided, withdrawn, run out);
// one other than the page was rendered with re-renders the page from the server. Without
// JavaScript, a reload shows the same. A stream ended for good (signed out) is not reconnected;
// one that merely ran its five minutes reconnects by itself.
import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";

export function ApprovalsLive({ fingerprint }: { fingerprint: string }) {
  const router = useRouter();
  const shown = useRef(fingerprint);
  useEffect(() => {
    shown.current = fingerprint;
  }, [fingerprint]);
  useEffect(() => {
    const source = new EventSource("/api/approvals/events");
    const onApprovals = (event: MessageEvent<string>) => {
      let next: unknown;
      try {
        next = (JSON.parse(event.data) as { fingerprint?: unknown }).fingerprint;
      } catch {
        return;
      }
      if (typeof next === "string" && next !== shown.current) {
        shown.current = next;
        router.refresh();
      }
    };
    const onEnd = () => source.close();
    source.addEventListener("approvals", onApprovals);
    source.addEventListener("end", onEnd);
    return () => {
      source.removeEventListener("approvals", onApprovals);
      source.removeEventListener("end", onEnd);
      source.close();
    };
  }, [router]);
  return null;
}
