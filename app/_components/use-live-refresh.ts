"use client";
// What every live page shares (InvoiceLive, ApprovalsLive): an EventSource on a stream whose named
// event says where the page's subject stands; a value `changed` judges new against the one the page
// was rendered with (or last refreshed to) re-renders the page from the server. Without JavaScript,
// a reload shows the same. A stream ended for good (`event: end`: signed out, out of reach) is not
// reconnected into a refusal; one that merely ran its five minutes reconnects by itself.
import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";

export function useLiveRefresh<T>(url: string, event: string, field: string, shownNow: T, changed: (next: unknown, shown: T) => next is T) {
  const router = useRouter();
  const shown = useRef(shownNow);
  const isChange = useRef(changed);
  useEffect(() => {
    shown.current = shownNow;
  }, [shownNow]);
  useEffect(() => {
    const source = new EventSource(url);
    const onFrame = (frame: MessageEvent<string>) => {
      let next: unknown;
      try {
        next = (JSON.parse(frame.data) as Record<string, unknown>)[field];
      } catch {
        return;
      }
      if (isChange.current(next, shown.current)) {
        shown.current = next;
        router.refresh();
      }
    };
    const onEnd = () => source.close();
    source.addEventListener(event, onFrame);
    source.addEventListener("end", onEnd);
    return () => {
      source.removeEventListener(event, onFrame);
      source.removeEventListener("end", onEnd);
      source.close();
    };
  }, [url, event, field, router]);
}
