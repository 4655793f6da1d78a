"use client";
// The invoice list stays current without one event stream per row (a session may hold only
// 20, app/_lib/sse.ts): the page re-renders from the server every few seconds while it
// is visible, and at once when a countdown on it runs out. Countdowns tick in the browser,
// against the server's clock.
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { countdown } from "@/app/_lib/lease-words";

/** How often the list re-reads where each summary stands (ms). */
export const LIST_REFRESH_MS = 4000;

export function ListRefresher() {
  const router = useRouter();
  useEffect(() => {
    const tick = () => {
      if (document.visibilityState === "visible") router.refresh();
    };
    const timer = setInterval(tick, LIST_REFRESH_MS);
    document.addEventListener("visibilitychange", tick);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", tick);
    };
  }, [router]);
  return null;
}

/** "0:42 left", counting down to `deadline` on the server's clock (`serverNow` when rendered). */
export function TimeLeft({ deadline, serverNow }: { deadline: string; serverNow: string }) {
  const router = useRouter();
  const end = Date.parse(deadline);
  const [left, setLeft] = useState(() => Math.max(0, Math.ceil((end - Date.parse(serverNow)) / 1000)));
  useEffect(() => {
    // The browser's clock may differ from the server's: count from the offset seen at render.
    const offset = Date.parse(serverNow) - Date.now();
    let refreshed = false;
    const tick = () => {
      const seconds = Math.max(0, Math.ceil((end - (Date.now() + offset)) / 1000));
      setLeft(seconds);
      if (seconds === 0 && !refreshed) {
        refreshed = true;
        router.refresh();
      }
    };
    tick();
    const timer = setInterval(tick, 1000);
    return () => clearInterval(timer);
  }, [end, serverNow, router]);
  return (
    <span className="time-left" data-testid="time-left">
      {countdown(left)} left
    </span>
  );
}
