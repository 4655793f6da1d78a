// What signing out would discard, in the same words in the sign-out dialog and on the
// confirmation page (/sign-out) that stands in for it without JavaScript.
import type { AtSignOut } from "@/lib/sign-out";

export function signOutQuestion(pending: AtSignOut, everywhere = false): string {
  const n = pending.proposals.length;
  const verb = everywhere ? "Sign out everywhere" : "Sign out";
  return n === 1 ? `${verb} and discard the summary waiting for review?` : `${verb} and discard ${n} summaries waiting for review?`;
}

export function SignOutNotice({ pending, describedBy }: { pending: AtSignOut; describedBy: string }) {
  const n = pending.proposals.length;
  return (
    <div id={describedBy}>
      <p>
        {n === 1
          ? "This summary has not been applied yet. Signing out discards it; the invoice stays as it is:"
          : "These summaries have not been applied yet. Signing out discards them; the invoices stay as they are:"}
      </p>
      <ul className="sign-out__list" data-testid="sign-out-discards">
        {pending.proposals.map((p) => (
          <li key={p.leaseId}>
            Invoice <strong>{p.number}</strong> · {p.counterparty}
          </li>
        ))}
      </ul>
      {pending.generating > 0 ? (
        <p>
          {pending.generating === 1
            ? "A summary still being written will be stopped too."
            : `${pending.generating} summaries still being written will be stopped too.`}
        </p>
      ) : null}
    </div>
  );
}

/** The confirmed leases, posted with the sign-out so that only what was shown is discarded. */
export function DiscardFields({ pending }: { pending: AtSignOut }) {
  return pending.proposals.map((p) => <input key={p.leaseId} type="hidden" name="discard" value={p.leaseId} />);
}
