import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { taskTitle } from "@/lib/approvals/read";
import { may } from "@/lib/access";
import { approvalQueue, pendingSnapshot } from "@/lib/approvals/queue";
import { requireActor } from "@/app/_lib/actor";
import { APPROVALS_PAGE_WORDS } from "@/app/_lib/approval-words";
import { formatDateTime } from "@/app/_lib/format";
import { getViewer } from "@/app/_lib/viewer";
import { ApprovalsLive } from "./approvals-live";

export const metadata: Metadata = { title: "Approvals" };

// "Waiting for your approval" (docs/decisions/0078, 0086): the organization's requests someone
// else submitted that still wait for a decision, oldest first (lib/approvals/queue.ts: the role
// is a condition of its one statement). Each links to its page, where the diff and the decision
// are. Linked from the header for admins and approvers; anyone else is told who decides. The page
// follows the approvals stream: a request submitted, decided, withdrawn or run out shows at once.
export default async function ApprovalsPage() {
  const actor = await requireActor();
  const approves = may(actor, "approve");
  const db = await getDb();
  const [queue, pending] = await Promise.all([approves ? approvalQueue(db, actor) : [], pendingSnapshot(db, actor)]);
  const viewer = await getViewer();
  return (
    <div className="approvals">
      <ApprovalsLive fingerprint={pending.fingerprint} />
      <h1>{APPROVALS_PAGE_WORDS.title}</h1>
      {!approves ? (
        <p className="muted">{APPROVALS_PAGE_WORDS.notApprover}</p>
      ) : queue.length === 0 ? (
        <p className="muted" data-testid="approvals-empty">
          {APPROVALS_PAGE_WORDS.empty}
        </p>
      ) : (
        <>
          <p className="muted">{APPROVALS_PAGE_WORDS.intro}</p>
          <div className="table-wrap">
            <table className="lines" data-testid="approvals-queue">
              <thead>
                <tr>
                  <th scope="col">Invoice</th>
                  <th scope="col">Task</th>
                  <th scope="col">Requested by</th>
                  <th scope="col">Decision needed by</th>
                </tr>
              </thead>
              <tbody>
                {queue.map((entry) => (
                  <tr key={entry.id} data-testid="approval-entry" data-approval-id={entry.id}>
                    <td>
                      <Link href={`/approvals/${entry.id}`}>Invoice {entry.invoice_number}</Link>
                    </td>
                    <td>{taskTitle(entry.purpose)}</td>
                    <td>{entry.requester.name}</td>
                    <td>
                      <time dateTime={entry.expires_at}>{formatDateTime(entry.expires_at, viewer)}</time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}
