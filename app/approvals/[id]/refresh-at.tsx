"use client";
// Re-reads the page when the request's time runs out (by the server's clock: its deadline minus
// its `now`, counted on this browser's monotonic timer), so an approver's open page says so
// without a reload. Without JavaScript a reload shows the same.
import { useRouter } from "next/navigation";
import { useEffect } from "react";

/** setTimeout's longest wait; a longer one fires early and is set again by the refresh. */
const MAX_WAIT_MS = 2_147_483_647;

export function RefreshAt({ at, serverNow }: { at: string; serverNow: string }) {
  const router = useRouter();
  useEffect(() => {
    const wait = Date.parse(at) - Date.parse(serverNow) + 500;
    const timer = setTimeout(() => router.refresh(), Math.min(Math.max(wait, 0), MAX_WAIT_MS));
    return () => clearTimeout(timer);
  }, [at, serverNow, router]);
  return null;
}
