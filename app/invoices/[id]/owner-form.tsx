// The invoice's owner, and for an admin a plain form to give it to another member of the
// organization (works without JavaScript: a post to the server action, then back to the page).
import { SubmitButton } from "@/app/_components/submit-button";
import { OWNER_NOTICES, type OwnerNotice } from "@/app/_lib/history-words";
import { reassignAction } from "./actions";

export function OwnerSection({
  invoiceId,
  ownerId,
  members,
  canReassign,
  notice,
}: {
  invoiceId: string;
  ownerId: string;
  members: { id: string; name: string }[];
  canReassign: boolean;
  notice: OwnerNotice | null;
}) {
  const owner = members.find((m) => m.id === ownerId)?.name ?? "a former member";
  return (
    <section className="card" aria-labelledby="owner-heading">
      <h2 id="owner-heading">Owner</h2>
      {notice ? (
        <p
          role={notice === "saved" ? "status" : "alert"}
          className={`notice ${notice === "saved" ? "notice--ok" : "notice--error"}`}
          data-testid="owner-notice"
        >
          {OWNER_NOTICES[notice]}
        </p>
      ) : null}
      {canReassign ? (
        <form action={reassignAction} className="owner-form">
          <input type="hidden" name="invoice_id" value={invoiceId} />
          <div className="field">
            <label htmlFor="owner-select">Owner</label>
            <select id="owner-select" name="owner_id" defaultValue={ownerId} key={ownerId}>
              {members.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.name}
                </option>
              ))}
            </select>
          </div>
          <p className="muted small">Giving the invoice to someone else stops any summary being written or waiting for review on it.</p>
          <SubmitButton className="button button--secondary">Change owner</SubmitButton>
        </form>
      ) : (
        <p data-testid="owner-name">{owner}</p>
      )}
    </section>
  );
}
