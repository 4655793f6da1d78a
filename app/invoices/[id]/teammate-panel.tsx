"use client";
// The summary panel as a teammate sees it on an invoice someone else owns: whose summary is in
// flight, whether it is being written or waits for its author's review, and until when; never
// its text or its id (they are its author's alone). No Summarize, Apply or Discard: the words say
// why. There is no stream for a teammate to follow (a lease's stream is its author's), so the
// panel re-reads the page when the countdown reaches the deadline; any other change shows on
// the next reload.
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { formatDateTime, type Viewer } from "@/app/_lib/format";
import { countdown, PANEL_WORDS } from "@/app/_lib/lease-words";
import { onlyOwnerSummarizes, TEAM_WORDS, teammateReviewWords, teammateWritingWords } from "@/app/_lib/team-words";
import { useServerCountdown } from "./lease-hooks";

/** GET /api/invoices/:id's `teammate_lease`, and the database's now it was read at. */
export type TeammateLeaseView = { name: string; status: string; deadline_at: string; server_now: string };

export function TeammatePanel({ owner, lease, viewer }: { owner: string; lease: TeammateLeaseView | null; viewer: Viewer }) {
  const reading = lease
    ? { lease_id: `${lease.name}@${lease.deadline_at}`, deadline_at: lease.deadline_at, server_now: lease.server_now }
    : null;
  const remaining = useServerCountdown(reading, lease !== null);
  const router = useRouter();
  const due = lease !== null && remaining <= 0;
  useEffect(() => {
    if (due) router.refresh();
  }, [due, router]);

  return (
    <section className="card lease" aria-labelledby="lease-heading" data-testid="teammate-panel" data-status={lease?.status ?? "none"}>
      <h2 id="lease-heading">{PANEL_WORDS.heading}</h2>
      <div role="status" aria-live="polite" data-testid="teammate-lease">
        {!lease ? (
          <p>{TEAM_WORDS.noLease}</p>
        ) : due ? (
          <p>{TEAM_WORDS.timeUp}</p>
        ) : lease.status === "open" ? (
          <p>
            {teammateWritingWords(lease.name).before}
            <span className="lease__countdown" role="timer" aria-live="off" data-testid="countdown">
              {countdown(remaining)}
            </span>
            {teammateWritingWords(lease.name).after}
          </p>
        ) : (
          <p suppressHydrationWarning>{teammateReviewWords(lease.name, formatDateTime(lease.deadline_at, viewer))}</p>
        )}
      </div>
      <p className="muted" data-testid="only-owner">
        {onlyOwnerSummarizes(owner)}
      </p>
    </section>
  );
}
