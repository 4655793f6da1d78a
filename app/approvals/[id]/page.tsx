import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { may, visibleInvoice } from "@/lib/access";
import { proposalSha256 } from "@/lib/approvals/hash";
import { pendingSnapshot } from "@/lib/approvals/queue";
import { changesToApprove, readApproval, taskTitle } from "@/lib/approvals/read";
import { currentValues } from "@/lib/purposes";
import { requireActor } from "@/app/_lib/actor";
import {
  APPROVALS_PAGE_WORDS,
  decisionNoticeWords,
  isDecisionNotice,
  REQUEST_STATUS_WORDS,
  requestEndWords,
} from "@/app/_lib/approval-words";
import { formatDateTime } from "@/app/_lib/format";
import { getViewer } from "@/app/_lib/viewer";
import { SubmitButton } from "@/app/_components/submit-button";
import { InvoiceLive } from "@/app/invoices/[id]/invoice-live";
import { ChangeValues } from "@/app/invoices/[id]/lease-panel";
import { ApprovalsLive } from "../approvals-live";
import { approveAction, declineAction } from "./actions";
import { RefreshAt } from "./refresh-at";

export const metadata: Metadata = { title: "Approval request" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;
const one = (value: string | string[] | undefined) => (typeof value === "string" ? value : undefined);

// One approval request (docs/decisions/0078, 0086): what would change on the invoice as it is now
// (the same diff as the owner's panel), and Approve (an optional comment) and Decline (a comment)
// as plain forms. Approve carries the hash of the proposal this page showed, so it writes exactly
// that or nothing. The requester reads their own request and cannot decide it. The page follows
// the invoice's event stream (an edit withdraws the request: the page shows it at once), the
// approvals stream (another approver's decision, a cancel: the same), and reads itself again when
// the request's time runs out.
export default async function ApprovalPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: SearchParams }) {
  const [{ id }, query] = await Promise.all([params, searchParams]);
  const actor = await requireActor();
  const db = await getDb();
  // Scoped in the statement: another organization's request, or one the reader may not see, is a 404.
  const request = await readApproval(db, actor, id);
  if (!request) notFound();
  const [viewer, current, pendingNow] = await Promise.all([
    getViewer(),
    currentValues(db, request.invoiceId, visibleInvoice(actor)),
    pendingSnapshot(db, actor),
  ]);
  // Only the lines the requester ticked (categories), as approve writes them.
  const changes = changesToApprove(request, current);
  const task = { title: taskTitle(request.purpose) };
  const pending = request.status === "pending";
  const approved = request.status === "approved";
  const decides = pending && !request.mine && may(actor, "approve");
  const code = one(query.notice);
  const notice = isDecisionNotice(code) ? { ok: code === "approved" || code === "declined", text: decisionNoticeWords(code) } : null;

  return (
    <div className="approval" data-testid="approval" data-status={request.status}>
      <InvoiceLive invoiceId={request.invoiceId} version={request.invoiceVersionNow} />
      <ApprovalsLive fingerprint={pendingNow.fingerprint} />
      <Link href="/approvals" className="back-link">
        ← {APPROVALS_PAGE_WORDS.title}
      </Link>
      <h1>
        {task.title} for invoice {request.invoiceNumber} <span className="muted">· {request.counterparty}</span>
      </h1>
      {notice ? (
        <p
          role={notice.ok ? "status" : "alert"}
          className={`notice ${notice.ok ? "notice--ok" : "notice--error"}`}
          data-testid="approval-notice"
        >
          {notice.text}
        </p>
      ) : null}

      <section className="card" aria-labelledby="request-heading">
        <h2 id="request-heading">The request</h2>
        <dl className="facts">
          <div>
            <dt>Requested by</dt>
            <dd data-testid="requester">{request.mine ? `${request.requester.name} (you)` : request.requester.name}</dd>
          </div>
          <div>
            <dt>Requested</dt>
            <dd>
              <time dateTime={request.submittedAt.toISOString()}>{formatDateTime(request.submittedAt.toISOString(), viewer)}</time>
            </dd>
          </div>
          <div>
            <dt>Decision needed by</dt>
            <dd>
              <time dateTime={request.expiresAt.toISOString()}>{formatDateTime(request.expiresAt.toISOString(), viewer)}</time>
              {pending ? (
                <>
                  {" "}
                  <RefreshAt id={request.id} at={request.expiresAt.toISOString()} serverNow={request.now.toISOString()} />
                </>
              ) : null}
            </dd>
          </div>
          <div>
            <dt>Where it stands</dt>
            <dd data-testid="request-status">{REQUEST_STATUS_WORDS[request.status]}</dd>
          </div>
        </dl>
        {pending ? null : <p data-testid="request-end">{requestEndWords(request)}</p>}
        <p>
          <Link href={`/invoices/${request.invoiceId}`}>Open invoice {request.invoiceNumber}</Link>
        </p>
      </section>

      <section className="card" aria-labelledby="changes-heading">
        <h2 id="changes-heading">
          {pending
            ? APPROVALS_PAGE_WORDS.changesHeading
            : approved
              ? APPROVALS_PAGE_WORDS.savedHeading
              : APPROVALS_PAGE_WORDS.notSavedHeading}
        </h2>
        {pending && request.invoiceVersionNow === request.invoiceVersion ? (
          <p className="muted small">{APPROVALS_PAGE_WORDS.unchangedSince}</p>
        ) : null}
        {changes ? (
          <ul className="planned-changes" data-testid="approval-changes">
            {changes.map((change) => (
              <li key={change.key} data-testid="planned-change" data-key={change.key}>
                <strong>{change.label}</strong>: <ChangeValues change={change} locale={viewer.locale} savedOnly={approved} />
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">{APPROVALS_PAGE_WORDS.cannotShow}</p>
        )}
      </section>

      {request.mine && pending ? (
        <p className="notice notice--info" role="note" data-testid="own-request">
          {APPROVALS_PAGE_WORDS.ownRequest}
        </p>
      ) : null}
      {pending && !request.mine && !decides ? <p className="muted">{APPROVALS_PAGE_WORDS.notApprover}</p> : null}

      {decides ? (
        <div className="approval__decide">
          <section className="card" aria-labelledby="approve-heading">
            <h2 id="approve-heading">{APPROVALS_PAGE_WORDS.approve}</h2>
            <form action={approveAction} data-testid="approve-form">
              <input type="hidden" name="approval_id" value={request.id} />
              {/* The hash of exactly the proposal shown above: approve writes it, or nothing. */}
              <input type="hidden" name="proposal_sha256" value={proposalSha256(request.proposal)} />
              <div className="field">
                <label htmlFor="approve-comment">{APPROVALS_PAGE_WORDS.comment}</label>
                <textarea id="approve-comment" name="comment" rows={2} maxLength={2000} />
              </div>
              <SubmitButton className="button" pendingLabel="Approving…">
                {APPROVALS_PAGE_WORDS.approve}
              </SubmitButton>
            </form>
          </section>
          <section className="card" aria-labelledby="decline-heading">
            <h2 id="decline-heading">{APPROVALS_PAGE_WORDS.decline}</h2>
            <form action={declineAction} data-testid="decline-form">
              <input type="hidden" name="approval_id" value={request.id} />
              <div className="field">
                <label htmlFor="decline-comment">{APPROVALS_PAGE_WORDS.declineComment}</label>
                <textarea id="decline-comment" name="comment" rows={2} maxLength={2000} required />
              </div>
              <SubmitButton className="button button--secondary" pendingLabel="Declining…">
                {APPROVALS_PAGE_WORDS.decline}
              </SubmitButton>
            </form>
          </section>
        </div>
      ) : null}
    </div>
  );
}
