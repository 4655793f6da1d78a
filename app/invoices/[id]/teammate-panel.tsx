"use client";
// The lease panel as a teammate sees it on an invoice someone else owns: for each purpose with a
// lease in flight (a summary, a review, categories: several can be at once), whose it is,
// whether it is being written or waits for its author's review, and until when; never its text
// or its id (they are its author's alone). No Summarize, Apply or Discard: the words say why.
// There is no stream for a teammate to follow (a lease's stream is its author's), so the panel
// re-reads the page when a countdown reaches its deadline; any other change shows on the next
// reload.
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { formatDateTime, type Viewer } from "@/app/_lib/format";
import { countdown } from "@/app/_lib/lease-words";
import {
  onlyOwnerSummarizes,
  TEAM_WORDS,
  teammateReviewWords,
  teammateWritingWords,
  type TeammatePurposeWords,
} from "@/app/_lib/team-words";
import type { Purpose } from "@/lib/purposes";
import { useServerCountdown } from "./lease-hooks";

/**
 * Someone else's lease in flight (lib/leases/read.ts teammateLeasesInFlight), the database's now
 * it was read at, and its purpose's words for a teammate (handed over by the server page).
 */
export type TeammateLeaseView = {
  name: string;
  purpose: Purpose;
  status: string;
  deadline_at: string;
  server_now: string;
  words: TeammatePurposeWords;
};

export function TeammatePanel({ owner, leases, viewer }: { owner: string; leases: TeammateLeaseView[]; viewer: Viewer }) {
  return (
    <section className="card lease" aria-labelledby="lease-heading" data-testid="teammate-panel" data-status={leases[0]?.status ?? "none"}>
      <h2 id="lease-heading">{TEAM_WORDS.heading}</h2>
      <div role="status" aria-live="polite" data-testid="teammate-lease">
        {leases.length === 0 ? (
          <p>{TEAM_WORDS.noLease}</p>
        ) : (
          leases.map((lease) => <TeammateLine key={lease.purpose} lease={lease} viewer={viewer} />)
        )}
      </div>
      <p className="muted" data-testid="only-owner">
        {onlyOwnerSummarizes(owner)}
      </p>
    </section>
  );
}

/** One purpose's lease in flight, in its purpose's words, with its own countdown. */
function TeammateLine({ lease, viewer }: { lease: TeammateLeaseView; viewer: Viewer }) {
  // The countdown hook keys its reading by a lease id, which a teammate never has: the
  // purpose and the deadline name this lease well enough for the page's lifetime.
  const reading = { lease_id: `${lease.purpose}@${lease.deadline_at}`, deadline_at: lease.deadline_at, server_now: lease.server_now };
  const remaining = useServerCountdown(reading, true);
  const router = useRouter();
  const due = remaining <= 0;
  useEffect(() => {
    if (due) router.refresh();
  }, [due, router]);

  if (due) {
    return (
      <p data-lease-purpose={lease.purpose} data-status={lease.status}>
        {TEAM_WORDS.timeUp}
      </p>
    );
  }
  if (lease.status === "open") {
    const words = teammateWritingWords(lease.name, lease.words);
    return (
      <p data-lease-purpose={lease.purpose} data-status={lease.status}>
        {words.before}
        <span className="lease__countdown" role="timer" aria-live="off" data-testid="countdown">
          {countdown(remaining)}
        </span>
        {words.after}
      </p>
    );
  }
  return (
    <p data-lease-purpose={lease.purpose} data-status={lease.status} suppressHydrationWarning>
      {teammateReviewWords(lease.name, formatDateTime(lease.deadline_at, viewer), lease.words)}
    </p>
  );
}
