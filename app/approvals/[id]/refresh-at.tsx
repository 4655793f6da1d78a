"use client";
// The time left for a decision, and a re-read of the page when it runs out (both by the server's
// clock: the deadline minus the page's `now`, counted on this browser's monotonic timer), so an
// approver's open page counts down and then says the time ran out without a reload. Without
// JavaScript the server's own reading is shown, and a reload shows the same.
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { durationWords } from "@/app/_lib/lease-words";
import { useServerCountdown } from "@/app/invoices/[id]/lease-hooks";

/** setTimeout's longest wait; a longer one fires early and is set again by the refresh. */
const MAX_WAIT_MS = 2_147_483_647;

export function RefreshAt({ id, at, serverNow }: { id: string; at: string; serverNow: string }) {
  const router = useRouter();
  useEffect(() => {
    const wait = Date.parse(at) - Date.parse(serverNow) + 500;
    const timer = setTimeout(() => router.refresh(), Math.min(Math.max(wait, 0), MAX_WAIT_MS));
    return () => clearTimeout(timer);
  }, [at, serverNow, router]);
  const remaining = useServerCountdown({ lease_id: id, deadline_at: at, server_now: serverNow }, true);
  return (
    <span className="muted" role="timer" aria-live="off" data-testid="countdown">
      {remaining > 0 ? `in ${durationWords(remaining * 1000)}` : "now"}
    </span>
  );
}
