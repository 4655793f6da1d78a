import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { getInvoice } from "@/lib/invoices";
import { databaseToday } from "@/lib/invoice-status";
import { displayOf, FINDING_SEVERITIES, isInFlight } from "@/lib/lease-codes";
import { ownedInvoice, ROLE_RULES } from "@/lib/access";
import { readPolicies } from "@/lib/approvals/policy";
import { ownRequestsFor } from "@/lib/approvals/read";
import { listMembers } from "@/lib/members";
import { currentValues, isPurpose, plannedChanges, purposeOf, PURPOSES, type Purpose } from "@/lib/purposes";
import { may } from "@/lib/access";
import { ownerChoices } from "@/lib/invoice-owner";
import { appliedAttempt, invoiceTimeline, latestLeasesByPurpose, leaseHolderName, teammateLeasesInFlight } from "@/lib/leases";
import { changedSince, staleSummary } from "@/lib/summary-staleness";
import { leaseJson } from "@/app/_lib/serialize";
import { requireActor } from "@/app/_lib/actor";
import { datePattern, formatDate, formatDateTime, formatMoney, localizeDates } from "@/app/_lib/format";
import { noticeOf } from "@/app/_lib/lease-words";
import { shownStatus, STATUS_WORDS } from "@/app/_lib/status-words";
import { isOwnerNotice, staleWords, writtenForWords } from "@/app/_lib/history-words";
import { onlyOwnerEdits, ownerWords } from "@/app/_lib/team-words";
import { SubmitButton } from "@/app/_components/submit-button";
import { getViewer } from "@/app/_lib/viewer";
import { EditInvoiceForm } from "./edit-form";
import { summarizeAction } from "./actions";
import { attemptAnchor, History, HISTORY_PAGE_SIZE } from "./history";
import { InvoiceLive } from "./invoice-live";
import { OwnerSection } from "./owner-form";
import { LeasePanel, type PanelChanges, type PanelLane } from "./lease-panel";
import { StatusControls } from "./status-form";
import { ForgetNotice } from "./forget-notice";
import { TeammatePanel } from "./teammate-panel";
import { ZoneSync } from "./zone-sync";

export const metadata: Metadata = { title: "Invoice" };

/** A review finding's severity as the Review notes section says it. */
const SEVERITY_WORDS = { high: "High", medium: "Medium", low: "Low" } as const satisfies Record<
  (typeof FINDING_SEVERITIES)[number],
  string
>;

type SearchParams = Promise<Record<string, string | string[] | undefined>>;
const one = (value: string | string[] | undefined) => (typeof value === "string" ? value : undefined);

export default async function InvoicePage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: SearchParams }) {
  const [{ id }, query] = await Promise.all([params, searchParams]);
  const actor = await requireActor();
  const db = await getDb();
  // Scoped to the actor in the query: someone else's invoice is as absent as a missing one.
  const invoice = await getInvoice(db, actor, id);
  if (!invoice) notFound();
  const viewer = await getViewer();
  const [latestByPurpose, heldBy, teammate] = await Promise.all([
    latestLeasesByPurpose(db, actor.id, invoice.id),
    leaseHolderName(db, actor.id, invoice.id),
    // Only a teammate's view shows another's lease in flight (the owner's own panel says who holds one: heldBy).
    invoice.owned ? [] : teammateLeasesInFlight(db, actor, invoice.id),
  ]);
  const leases = Object.fromEntries(
    PURPOSES.map((purpose) => [purpose, latestByPurpose[purpose] ? leaseJson(latestByPurpose[purpose]) : null]),
  ) as Record<Purpose, ReturnType<typeof leaseJson> | null>;
  const lease = leases.summarize_invoice;
  const pattern = datePattern(viewer.locale);
  const money = (cents: number) => formatMoney(cents, invoice.currency, viewer.locale);

  // "What will change" for each proposed lease: its proposal against the targets' values now,
  // read once for all of them. Apply writes that same proposal, fenced by the version read here.
  const proposed = PURPOSES.filter((purpose) => leases[purpose]?.status === "proposed");
  const current = invoice.owned && proposed.length ? await currentValues(db, invoice.id, ownedInvoice(actor.id)) : null;
  const changes = Object.fromEntries(
    proposed.map((purpose) => [
      purpose,
      current ? { leaseId: leases[purpose]!.lease_id, items: plannedChanges(purpose, leases[purpose]!.proposal, current) } : null,
    ]),
  ) as Partial<Record<Purpose, PanelChanges | null>>;

  // The four-eyes lane (docs/decisions/0078), for the owner's panels: each purpose's policy, who
  // else may approve, and the owner's own request behind each latest lease.
  const leaseIds = PURPOSES.flatMap((purpose) => (leases[purpose] ? [leases[purpose]!.lease_id] : []));
  const [policies, team, requests] = invoice.owned
    ? await Promise.all([readPolicies(db, actor), listMembers(db, actor), ownRequestsFor(db, actor, leaseIds)])
    : [[], [], new Map()];
  const approvers = team.filter((m) => m.id !== actor.id && (ROLE_RULES.approve as readonly string[]).includes(m.role)).map((m) => m.name);
  const laneOf = (purpose: Purpose): PanelLane => {
    const request = leases[purpose] ? requests.get(leases[purpose]!.lease_id) : undefined;
    return {
      policy: policies.find((p) => p.purpose === purpose)?.apply ?? "self",
      approvers,
      request: request
        ? {
            leaseId: request.leaseId,
            decision: request.decision,
            approverName: request.approverName,
            comment: request.comment,
            accept: request.accept,
          }
        : null,
    };
  };

  // A lease notice is for the panel of its purpose (`?purpose=`, the summary's when absent).
  const noticePurpose: Purpose = isPurpose(one(query.purpose)) ? (one(query.purpose) as Purpose) : "summarize_invoice";
  const notice = noticeOf(one(query.notice), leases[noticePurpose], pattern, purposeOf(noticePurpose).words, {
    budget: { cap: one(query.cap), resets: one(query.resets), now: new Date(), locale: viewer.locale },
  });
  const historyPage = Math.max(1, Math.min(10_000, Math.trunc(Number(one(query.history) ?? "1")) || 1));
  const [timeline, applied, stale, notesChanged, members, today] = await Promise.all([
    invoiceTimeline(db, actor, invoice.id, { offset: (historyPage - 1) * HISTORY_PAGE_SIZE, limit: HISTORY_PAGE_SIZE }),
    invoice.summary ? appliedAttempt(db, actor, invoice.id) : null,
    invoice.summary ? staleSummary(db, actor, invoice.id) : null,
    invoice.reviewNotes && invoice.reviewNotesVersion !== null ? changedSince(db, actor, invoice.id, invoice.reviewNotesVersion) : [],
    ownerChoices(db, actor),
    databaseToday(db),
  ]);
  const status = shownStatus(invoice);
  const history = timeline ?? { total: 0, entries: [], names: {} };
  const ownerCode = one(query.owner);
  const ownerNotice = isOwnerNotice(ownerCode) ? ownerCode : null;
  // Summarize again: the owner's, while no summary is being written or waits for review, and
  // unless the panel offers it already (its latest attempt withdrawn by a change).
  const mayResummarize =
    invoice.owned &&
    !heldBy &&
    !(lease && (isInFlight(lease.status) || displayOf({ status: lease.status, closed_reason: lease.closed_reason }) === "outdated"));
  const attemptHref = (attempt: { id: string; mine: boolean; purpose: string; position: number; number: number }) =>
    `/invoices/${invoice.id}?history=${Math.floor(attempt.position / HISTORY_PAGE_SIZE) + 1}#${attemptAnchor(attempt, attempt.number)}`;

  return (
    <>
      <ZoneSync zone={viewer.timeZone} />
      <InvoiceLive invoiceId={invoice.id} version={invoice.version} />
      <ForgetNotice notice={one(query.notice)} />
      <Link href="/invoices" className="back-link">
        ← All invoices
      </Link>
      <h1 className="invoice-title">
        Invoice {invoice.number} <span className="muted">· {invoice.counterparty}</span>{" "}
        <span className={`status-badge status-badge--${status}`}>{STATUS_WORDS[status]}</span>
      </h1>
      <p className="muted small" data-testid="invoice-owner">
        {ownerWords(invoice.owned ? null : invoice.ownerName)}
      </p>

      {/* The lease panel first: on a phone its state, countdown and buttons are on the first
          screen; on a wide screen it is the side column beside details, lines and edits. */}
      <div className="invoice-grid">
        <div className="invoice-grid__panel">
          {/* Keyed by lease: a new lease starts a fresh panel and a fresh subscription. */}
          {invoice.owned ? (
            // One panel per purpose, in the registry's order, each following its latest lease.
            PURPOSES.map((purpose) => (
              <LeasePanel
                key={`${purpose}:${leases[purpose]?.lease_id ?? "none"}`}
                purpose={purpose}
                words={purposeOf(purpose).words}
                byLine={purposeOf(purpose).byLine}
                invoiceId={invoice.id}
                initial={leases[purpose]}
                changes={changes[purpose] ?? null}
                heldBy={purpose !== "summarize_invoice" || (lease && isInFlight(lease.status)) ? null : heldBy}
                lane={laneOf(purpose)}
                viewer={viewer}
                notice={notice && notice.action !== "edit" && noticePurpose === purpose ? notice : null}
              />
            ))
          ) : (
            // A teammate's view: who writes or reviews what (one line per purpose in flight) and until when, never its text or id.
            <TeammatePanel
              key={teammate.map((t) => `${t.purpose}:${t.status}@${t.deadlineAt.toISOString()}`).join(",") || "none"}
              owner={invoice.ownerName}
              leases={teammate.map((t) => ({
                name: t.actorName,
                purpose: t.purpose,
                status: t.status,
                deadline_at: t.deadlineAt.toISOString(),
                server_now: t.now.toISOString(),
                words: {
                  teammateWriting: purposeOf(t.purpose).words.teammateWriting,
                  teammateReview: purposeOf(t.purpose).words.teammateReview,
                },
              }))}
              viewer={viewer}
            />
          )}
        </div>

        <div className="invoice-grid__top">
          <section className="card" aria-labelledby="details-heading">
            <h2 id="details-heading">Details</h2>
            <dl className="facts">
              <div>
                <dt>Counterparty</dt>
                <dd>{invoice.counterparty}</dd>
              </div>
              <div>
                <dt>Total</dt>
                <dd>{money(invoice.totalCents)}</dd>
              </div>
              <div>
                <dt>Issued</dt>
                <dd data-testid="issued-on">{formatDate(invoice.issuedOn, viewer.locale)}</dd>
              </div>
              <div>
                <dt>Due</dt>
                <dd data-testid="due-on">{formatDate(invoice.dueOn, viewer.locale)}</dd>
              </div>
            </dl>
          </section>
          <StatusControls
            key={invoice.version}
            invoiceId={invoice.id}
            version={invoice.version}
            status={invoice.status}
            shown={status}
            paidOnText={invoice.paidOn ? formatDate(invoice.paidOn, viewer.locale) : null}
            editable={invoice.editable}
            today={today}
          />
          {invoice.reviewNotes ? (
            <section className="card" aria-labelledby="review-notes-heading" data-testid="review-notes">
              <h2 id="review-notes-heading">Review notes</h2>
              {invoice.reviewNotesVersion !== null ? (
                <p className="muted small" data-testid="review-notes-version">
                  {writtenForWords(invoice.reviewNotesVersion, notesChanged)}
                </p>
              ) : null}
              {invoice.reviewNotes.length === 0 ? (
                <p>No findings.</p>
              ) : (
                <ul className="review-notes">
                  {invoice.reviewNotes.map((finding, index) => (
                    <li key={index} data-testid="review-note" data-severity={finding.severity} data-code={finding.code}>
                      <strong>{SEVERITY_WORDS[finding.severity]}:</strong> {localizeDates(finding.message, viewer.locale)}
                    </li>
                  ))}
                </ul>
              )}
            </section>
          ) : null}
          <section className="card" aria-labelledby="summary-heading">
            <h2 id="summary-heading">Summary on the invoice</h2>
            {invoice.summary ? (
              <>
                {stale ? (
                  <div className="notice notice--info" role="note" data-testid="summary-stale">
                    <p>
                      <strong>Out of date.</strong> {staleWords(stale)}
                    </p>
                    {mayResummarize ? (
                      <form action={summarizeAction}>
                        <input type="hidden" name="invoice_id" value={invoice.id} />
                        <SubmitButton className="button button--secondary">Summarize again</SubmitButton>
                      </form>
                    ) : null}
                  </div>
                ) : null}
                <p className="summary-text" data-testid="invoice-summary">
                  {localizeDates(invoice.summary, viewer.locale)}
                </p>
                {applied ? (
                  <p className="muted small" data-testid="summary-applied-by">
                    Applied by {applied.actorName}
                    {applied.approverName ? `, approved by ${applied.approverName},` : ""} on{" "}
                    <time dateTime={applied.appliedAt.toISOString()}>{formatDateTime(applied.appliedAt.toISOString(), viewer)}</time>
                    {" · "}
                    <Link href={attemptHref(applied)}>See this attempt in the history</Link>
                  </p>
                ) : null}
              </>
            ) : (
              <p className="muted" data-testid="invoice-summary">
                No summary yet.
              </p>
            )}
          </section>
        </div>

        <div className="invoice-grid__bottom">
          <section className="card" aria-labelledby="lines-heading">
            <h2 id="lines-heading">Lines</h2>
            <div className="table-wrap">
              <table className="lines">
                <thead>
                  <tr>
                    <th scope="col">Description</th>
                    <th scope="col" className="num wide-only">
                      Qty
                    </th>
                    <th scope="col" className="num wide-only">
                      Unit price
                    </th>
                    <th scope="col" className="num">
                      Amount
                    </th>
                    <th scope="col">Category</th>
                  </tr>
                </thead>
                <tbody>
                  {invoice.lines.map((line) => (
                    <tr key={line.id}>
                      <td>
                        {localizeDates(line.description, viewer.locale)}
                        <span className="narrow-only muted small">
                          {line.quantity} × {money(line.unitPriceCents)}
                        </span>
                      </td>
                      <td className="num wide-only">{line.quantity}</td>
                      <td className="num wide-only">{money(line.unitPriceCents)}</td>
                      <td className="num">{money(line.quantity * line.unitPriceCents)}</td>
                      <td data-testid="line-category" data-code={line.category ?? ""}>
                        {line.category ? `${line.category} ${line.categoryName ?? ""}`.trim() : <span className="muted">—</span>}
                      </td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row">Total</th>
                    <td className="wide-only" colSpan={2} />
                    <td className="num">{money(invoice.totalCents)}</td>
                    <td />
                  </tr>
                </tfoot>
              </table>
            </div>
          </section>

          {invoice.editable ? null : (
            <section className="card" aria-labelledby="edit-heading" data-testid="edit-refused">
              <h2 id="edit-heading">Edit details</h2>
              <p className="muted">{onlyOwnerEdits(invoice.ownerName)}</p>
            </section>
          )}
          {invoice.editable ? (
            <EditInvoiceForm
              key={invoice.version}
              invoice={{
                id: invoice.id,
                number: invoice.number,
                counterparty: invoice.counterparty,
                issued_on: invoice.issuedOn,
                due_on: invoice.dueOn,
                version: invoice.version,
              }}
              viewer={viewer}
              pattern={pattern}
              notice={notice?.action === "edit" ? notice : null}
            />
          ) : null}

          <OwnerSection
            invoiceId={invoice.id}
            ownerId={invoice.ownerId}
            members={members}
            canReassign={may(actor, "reassign_invoice")}
            notice={ownerNotice}
          />

          <History
            invoiceId={invoice.id}
            currency={invoice.currency}
            page={historyPage}
            total={history.total}
            entries={history.entries}
            names={history.names}
            viewer={viewer}
            appliedId={applied?.id ?? null}
          />
        </div>
      </div>
    </>
  );
}
