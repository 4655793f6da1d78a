"use client";
// Keeps an open approval page current (the queue, or one request): the approvals stream
// (GET /api/approvals/events) says a fingerprint of the pending requests this member sees, first
// as it is now and again whenever it changes (a request submitted, decided, withdrawn, run out);
// one other than the page was rendered with re-renders the page from the server (useLiveRefresh).
import { useLiveRefresh } from "@/app/_components/use-live-refresh";

const other = (next: unknown, shown: string): next is string => typeof next === "string" && next !== shown;

export function ApprovalsLive({ fingerprint }: { fingerprint: string }) {
  useLiveRefresh("/api/approvals/events", "approvals", "fingerprint", fingerprint, other);
  return null;
}
